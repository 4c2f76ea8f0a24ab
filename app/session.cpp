#include "app/session.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>

#include "core/io/checkpoint.hpp"
#include "core/model/error.hpp"

namespace sf {

std::string assets_dir() {
  if (const char* env = std::getenv("STEPFORMER_ASSETS")) return env;
  return STEPFORMER_ASSETS;
}

// The default model sorts letters ("dcab=abcd"): this prompt asks it to sort "hello".
static const char* kDefaultPrompt = "hello=";

Session::Session() {
  const std::string path = assets_dir() + "/default.safetensors";
  std::string error;
  if (!std::filesystem::exists(path) || !load_model(path, error))
    set_model(Model::initialised(ModelConfig{}, 1), "built-in untrained model (seed 1)");
  set_prompt(kDefaultPrompt);
  restart();
}

bool Session::load_model(const std::string& path, std::string& error) {
  try {
    Checkpoint ck = load_checkpoint(path);
    set_model(std::move(ck.model), std::filesystem::path(path).filename().string());
    return true;
  } catch (const std::exception& ex) {
    error = ex.what();
    return false;
  }
}

void Session::set_model(Model m, std::string label) {
  model_ = std::make_unique<Model>(std::move(m));
  arch_ = &architecture(model_->config);
  tok_ = make_tokenizer(model_->config);
  tokens_z_.clear();
  if (arch_->has_context()) {  // z first: the prompt's trace needs it
    context_error_.clear();
    if (!encode_input(context_, true, "context", unknown_z_, context_error_, tokens_z_))
      tokens_z_ = {tok_->bos_token(), tok_->eos_token()};
  }
  model_label_ = std::move(label);
  mask_origins_.clear();
  fill_key_.clear();
  translation_ = {};
  translation_shown_ = 0;
  translation_key_.clear();
  gen_prefix_.clear();
  generated_.clear();
  generation_ = {};
  run_kind_ = RunKind::Forward;
  trace_label_.clear();
  tokens_.clear();
  set_prompt(prompt_.empty() ? kDefaultPrompt : prompt_);
  if (tokens_.empty()) {  // the prompt does not fit this model: trace [bos_token] alone
    tokens_ = {tok_->bos_token()};
    run_trace();
    restart();
  }
}

bool Session::encode_input(const std::string& text, bool with_eos, const char* what,
                           std::vector<UnknownChar>& unknown, std::string& error, Tokens& out) const {
  unknown = tok_->unknown(text);
  error.clear();
  if (!unknown.empty()) {
    error = std::to_string(unknown.size()) + " piece" + (unknown.size() > 1 ? "s are" : " is") +
            " not in the vocabulary (marked; special tokens are written [MASK], [BOS], [EOS]); the trace shows the "
            "last " + what + " that could be encoded";
    return false;
  }
  Tokens t = tok_->encode_sequence(text, with_eos);
  if (static_cast<int>(t.size()) > model_->config.l_max) {
    error = std::string("the ") + what + " is " + std::to_string(t.size()) + " tokens with <bos>" +
            (with_eos ? " and <eos>" : "") + ", but ℓ_max = " + std::to_string(model_->config.l_max) +
            ": shorten it (the trace shows the last " + what + " that fits)";
    return false;
  }
  out = std::move(t);
  return true;
}

void Session::set_context(const std::string& text) {
  context_ = text;
  if (!arch_->has_context()) return;
  if (!encode_input(text, true, "context", unknown_z_, context_error_, tokens_z_)) return;
  if (run_kind_ == RunKind::Training) return;  // a shown training trace has no context
  if (run_kind_ == RunKind::Translate) {  // x̂ belonged to the old z: back to Algorithm 8
    trace_forward();
    return;
  }
  retrace_keep_cursor();
}

void Session::set_prompt(const std::string& text) {
  prompt_ = text;
  if (!keep_mask_origins_) mask_origins_.clear();  // typed text: the masked characters are forgotten
  Tokens t;
  // BERT reads whole sequences as it was trained on them, [bos_token, characters…, eos_token].
  const bool with_eos = arch_->output() == OutputKind::FillIn;
  if (!encode_input(text, with_eos, "prompt", unknown_, prompt_error_, t)) return;
  tokens_ = std::move(t);
  const bool was_training = run_kind_ == RunKind::Training || run_kind_ == RunKind::Translate;
  if (was_training) {  // a training trace (or Algorithm 15) reads no prompt: back to the forward pass, line 1
    run_kind_ = RunKind::Forward;
    trace_label_.clear();
    cursor_ = trace_.size();
  }
  gen_prefix_.clear();  // a continuation belongs to the prompt it continued
  generated_.clear();
  generation_ = {};
  retrace_keep_cursor();
  if (was_training) restart();
}

void Session::retrace_keep_cursor() {
  const bool had = cursor_ < trace_.size();
  const Event old = had ? trace_.events[cursor_] : Event{};
  const int caller = had ? trace_.caller_key(cursor_) : 0;
  run_trace();
  cursor_ = had ? trace_.find_matching(old, caller) : 0;
}

void Session::run_trace() {
  const auto t0 = std::chrono::steady_clock::now();
  Trace fresh;
  Tracer tracer(fresh);
  attn_times_.clear();
  attn_max_diff_ = std::numeric_limits<double>::quiet_NaN();
  if (run_kind_ == RunKind::Forward && attn_hook_) {
    try {
      int layer = 0;
      std::vector<AttentionDispatch> times;
      const MHAttentionFn<float> fn = [&](const MatF& X, const MatF& Z, const MHAttentionW<const float>& W,
                                          const Mask& mask) {
        const size_t first = times.size();
        MatF Vt = attn_hook_(X, Z, W, mask, &tracer, times);
        ++layer;
        for (size_t i = first; i < times.size(); ++i) times[i].layer = layer;
        return Vt;
      };
      const MatF P = arch_->forward(*model_, tokens_z_, tokens_, &tracer, fn);
      const MatF P_cpu = arch_->forward(*model_, tokens_z_, tokens_);
      attn_max_diff_ = (P - P_cpu).cwiseAbs().maxCoeff();
      attn_times_ = std::move(times);
    } catch (const std::exception& e) {  // the other backend failed: the CPU traces the run
      attn_failure_ = e.what();
      attn_hook_ = {};
      attn_times_.clear();
      attn_max_diff_ = std::numeric_limits<double>::quiet_NaN();
      fresh = Trace{};
    }
  }
  if (run_kind_ == RunKind::Forward && !attn_hook_) {
    Tracer cpu_tracer(fresh);
    arch_->forward(*model_, tokens_z_, tokens_, &cpu_tracer);
  } else if (run_kind_ == RunKind::Translate) {
    EdInferenceOptions opt;
    opt.tau = translation_settings.tau;
    opt.seed = translation_settings.seed;
    opt.reuse_encoding = translation_settings.reuse_encoding;
    opt.kv_cache = translation_settings.kv_cache;
    traced_kv_cache_ = opt.kv_cache;
    translation_ = edinference(tokens_z_, *model_, opt, &tracer);
  } else if (run_kind_ == RunKind::Generate) {
    InferenceOptions opt;
    opt.l_gen = gen_count_;
    opt.tau = sampling.tau;
    opt.trim_context = sampling.trim_context;
    opt.kv_cache = sampling.kv_cache;
    traced_kv_cache_ = opt.kv_cache;
    opt.seed = sampling.seed + gen_prefix_.size();
    Tokens x = tokens_;
    x.insert(x.end(), gen_prefix_.begin(), gen_prefix_.end());
    generation_ = dinference(x, *model_, opt, &tracer);
    generated_ = gen_prefix_;
    generated_.insert(generated_.end(), generation_.y.begin(), generation_.y.end());
  }
  trace_ = std::move(fresh);
  last_trace_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void Session::set_attention_hook(AttentionHook hook) {
  attn_hook_ = std::move(hook);
  if (run_kind_ == RunKind::Forward) retrace_keep_cursor();
}

void Session::show_trace(Trace t, std::string label) {
  run_kind_ = RunKind::Training;
  trace_ = std::move(t);
  trace_label_ = std::move(label);
  restart();
}

void Session::trace_forward() {
  run_kind_ = RunKind::Forward;
  trace_label_.clear();
  run_trace();
  restart();
}

void Session::trace_generate(int n, bool append) {
  gen_prefix_ = append ? generated_ : Tokens{};
  run_kind_ = RunKind::Generate;
  trace_label_.clear();
  gen_count_ = std::max(0, n);
  try {
    run_trace();
  } catch (const Error& e) {
    prompt_error_ = e.what();
    run_kind_ = RunKind::Forward;
    run_trace();
  }
  restart();
}

void Session::clear_generation() {
  gen_prefix_.clear();
  generated_.clear();
  generation_ = {};
  trace_forward();
}

void Session::jump(size_t k) {
  if (trace_.size() == 0) return;
  cursor_ = std::min(k, trace_.size() - 1);
}

void Session::restart() { cursor_ = trace_.size() > 1 ? 1 : 0; }

bool Session::jump_to(int alg, int line, int l, int h, int t) {
  for (size_t k = 0; k < trace_.size(); ++k) {
    const Event& e = trace_.events[k];
    if (e.alg != alg || e.line != line || e.kind == EventKind::SubStep) continue;
    if ((l && e.idx.l != l) || (h && e.idx.h != h) || (t && e.idx.t != t)) continue;
    cursor_ = k;
    return true;
  }
  return false;
}

bool Session::has_breakpoint(int alg, int line) const {
  return std::find(breakpoints_.begin(), breakpoints_.end(), alg * 1000 + line) != breakpoints_.end();
}

void Session::toggle_breakpoint(int alg, int line) {
  const int key = alg * 1000 + line;
  auto it = std::find(breakpoints_.begin(), breakpoints_.end(), key);
  if (it == breakpoints_.end()) breakpoints_.push_back(key);
  else breakpoints_.erase(it);
}

const Tokens& Session::tokens_at(size_t k, Axis a) const {
  if (const Tokens* t = trace_.axis_tokens(k, a)) return *t;
  return a == Axis::TokenZ && !tokens_z_.empty() ? tokens_z_ : tokens_;
}

bool Session::line_ran(size_t k, int line) const {
  if (k >= trace_.size()) return false;
  const size_t start = trace_.frame_start(k);
  const int d = trace_.events[start].depth;
  const int alg = trace_.events[start].alg;
  for (size_t j = start; j < k; ++j) {
    const Event& e = trace_.events[j];
    if (e.depth == d && e.alg == alg && e.line == line && e.kind == EventKind::Line) return true;
  }
  return false;
}

std::vector<const Value*> Session::scope_for_view(size_t k) const {
  if (k >= trace_.size()) return {};
  if (k <= cursor_) return trace_.scope(k);
  const int d = trace_.events[k].depth;
  for (size_t j = k; j-- > 0;)
    if (trace_.events[j].depth == d) return trace_.scope(j);
  return {};
}

namespace {

// The prompt text that encodes to x[2:] (x[1] is <bos>): special tokens written [MASK], [BOS], [EOS].
std::string prompt_text(const Tokenizer& tok, const Tokens& x) {
  std::string out;
  for (size_t k = 1; k < x.size(); ++k) {
    const int id = x[k];
    if (id == tok.mask_token()) out += "[MASK]";
    else if (id == tok.bos_token()) out += "[BOS]";
    else if (id == tok.eos_token()) out += "[EOS]";
    else out += tok.label(id);
  }
  return out;
}

}  // namespace

bool Session::toggle_mask(int t, std::string& error) {
  const bool with_eos = arch_->output() == OutputKind::FillIn;  // the last token is then eos_token
  const int last = static_cast<int>(tokens_.size()) - (with_eos ? 1 : 0);
  if (t < 2 || t > last)
    return error = "position " + std::to_string(t) + " is not a prompt character (2 … " + std::to_string(last) +
                   "; 1 is <bos>" + (with_eos ? ", " + std::to_string(last + 1) + " <eos>)" : ")"),
           false;
  Tokens x(tokens_.begin(), tokens_.begin() + last);
  auto it = std::find_if(mask_origins_.begin(), mask_origins_.end(), [&](const auto& o) { return o.first == t; });
  if (x[t - 1] == tok_->mask_token()) {
    if (it == mask_origins_.end())
      return error = "the [MASK] at position " + std::to_string(t) + " was typed: there is no character to restore",
             false;
    x[t - 1] = it->second;
    mask_origins_.erase(it);
  } else {
    if (it != mask_origins_.end()) mask_origins_.erase(it);
    mask_origins_.emplace_back(t, x[t - 1]);
    x[t - 1] = tok_->mask_token();
  }
  keep_mask_origins_ = true;
  set_prompt(prompt_text(*tok_, x));
  keep_mask_origins_ = false;
  return true;
}

const FillResult& Session::fill() const {
  std::vector<double> key(tokens_.begin(), tokens_.end());
  key.insert(key.end(), {fill_settings.tau, static_cast<double>(fill_settings.seed),
                         static_cast<double>(fill_settings.top_k), static_cast<double>(model_->table.total())});
  if (key == fill_key_) return fill_;
  fill_key_ = key;
  fill_ = {};
  fill_error_.clear();
  if (arch_->output() != OutputKind::FillIn) {
    fill_error_ = "this model does not fill in [MASK] (" + arch_->title() + ")";
    return fill_;
  }
  try {
    fill_ = fill_masks(tokens_, *model_, fill_settings.tau, fill_settings.seed, fill_settings.top_k);
  } catch (const std::exception& e) {
    fill_error_ = e.what();
  }
  return fill_;
}

const std::string& Session::fill_error() const {
  fill();
  return fill_error_;
}

void Session::trace_fill() {
  if (run_kind_ != RunKind::Forward) trace_forward();
  const int alg = arch_->forward_algorithm();
  for (size_t k = trace_.size(); k-- > 0;) {
    const Event& e = trace_.events[k];
    if (e.alg == alg && e.kind == EventKind::Line && e.depth == 0) {
      cursor_ = k;
      return;
    }
  }
}

void Session::trace_translate(bool one) {
  std::vector<double> key(tokens_z_.begin(), tokens_z_.end());
  key.insert(key.end(), {translation_settings.tau, static_cast<double>(translation_settings.seed),
                         translation_settings.reuse_encoding ? 1.0 : 0.0, static_cast<double>(model_->table.total())});
  const bool same = run_kind_ == RunKind::Translate && key == translation_key_;
  if (!same) {
    run_kind_ = RunKind::Translate;
    trace_label_.clear();
    translation_key_ = key;
    translation_shown_ = 0;
    run_trace();
  }
  const int n = static_cast<int>(translation_.steps.size());
  translation_shown_ = one ? std::min(translation_shown_ + 1, n) : n;
  if (!one) {
    jump(trace_.size());
    return;
  }
  for (size_t k = 0; k < trace_.size(); ++k) {
    const Event& e = trace_.events[k];
    if (e.alg == 15 && e.line == 3 && e.kind == EventKind::Line && e.idx.i == translation_shown_) {
      cursor_ = k;
      return;
    }
  }
  restart();
}

Tokens Session::translated() const {
  const size_t n = std::min<size_t>(translation_.x_hat.size(), static_cast<size_t>(translation_shown_) + 1);
  return Tokens(translation_.x_hat.begin(), translation_.x_hat.begin() + static_cast<long>(n));
}

}  // namespace sf
