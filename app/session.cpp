#include "app/session.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <thread>

#include "core/about/data_dirs.hpp"
#include "core/algorithms/attention_check.hpp"
#include "core/model/error.hpp"

namespace sf {

std::string assets_dir() {
  // The source tree's assets/ for a program in the build tree, <prefix>/share/stepformer/assets for an
  // installed one, $STEPFORMER_DATA_DIR/assets when set (core/about/data_dirs.hpp).
  return data_path("assets");
}

// The default model sorts letters ("dcab=abcd"): this prompt asks it to sort "hello".
static const char* kDefaultPrompt = "hello=";

std::string layout_title(Layout l) {
  switch (l) {
    case Layout::HfGpt2: return "Hugging Face GPT-2 layout";
    case Layout::NanoGpt: return "nanoGPT/minGPT layout";
    case Layout::HfBert: return "Hugging Face BERT layout";
    case Layout::Stepformer: break;
  }
  return "Stepformer checkpoint";
}

// A run of the traced algorithm on inputs copied from the session: computed on the UI thread
// (small models) or on its own thread (big ones), then shown by Session::finish.
struct Session::TraceJob {
  // --- inputs ---
  RunKind kind = RunKind::Forward;
  std::shared_ptr<const Model> model;
  const Architecture* arch = nullptr;
  Tokens z, x;
  InferenceOptions gen;   // Generate
  EdInferenceOptions ed;  // Translate
  SpeculativeOptions spec;                    // Speculate
  std::shared_ptr<const Model> draft;         // Speculate: the draft model
  std::function<void(Tracer&)> train;  // Training: one traced step (trace_training)
  std::string label;                   // Training: its label
  int layers_total = 0;   // Forward: the layers it counts (0: not counted)
  // --- progress, cancellation ---
  std::atomic<bool> cancel{false}, done{false};
  std::atomic<int> layers_done{0};
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::thread thread;
  // --- outputs ---
  Trace trace;
  InferenceResult generation;
  EdInferenceResult translation;
  SpeculativeResult speculation;
  std::string error;
  bool cancelled = false;
  double ms = 0;

  void run();
};

namespace {
struct Cancelled {};  // thrown inside a superseded forward pass, at its next MHAttention call
}  // namespace

void Session::TraceJob::run() {
  try {
    // θ is bound by reference (no copy of GPT-2's 154 MB W_e): the model is shared with the
    // session, which keeps it, unchanged, while this trace is shown (trace_model_).
    Tracer tracer(trace, ParamBinding::View);
    switch (kind) {
      case RunKind::Forward: {
        // Counts the layers (and stops a superseded run) at each line's MHAttention, computed by
        // core's traced mh_attention exactly as the forward pass would.
        MHAttentionFn<float> counted;
        if (layers_total > 0) {
          counted = [&](const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
                        const AttentionOptions& av) {
            if (cancel) throw Cancelled{};
            MatF Vt = mh_attention<float>(X, Z, W, mask, &tracer, nullptr, av);  // (d_out, ℓ_x)
            ++layers_done;
            return Vt;
          };
        }
        arch->forward(*model, z, x, &tracer, counted);
        break;
      }
      case RunKind::Generate: generation = dinference(x, *model, gen, &tracer); break;
      case RunKind::Translate: translation = edinference(z, *model, ed, &tracer); break;
      case RunKind::Training: train(tracer); break;
      case RunKind::Speculate: speculation = speculative_decoding(x, *model, *draft, spec, &tracer); break;
    }
  } catch (const Cancelled&) {
    cancelled = true;
  } catch (const std::exception& e) {
    error = e.what();
  }
  ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

Session::Session() : Session(default_start()) {}

Session::Session(const SessionStart& start) {
  if (!start.origin.path.empty()) speculation_.remember_opened(start.origin.path);  // as load_model does
  set_shared_model(start.model, start.label, start.tokenizer, start.origin);
  // set_model chose this model's default prompt: "hello=" where the vocabulary has those characters
  // (then already traced), else the prompt is set (and traced) as typed.
  if (prompt_.text != kDefaultPrompt) set_prompt(kDefaultPrompt);
  prompt_typed_ = false;  // the default: the next model may choose its own (set_model)
  wait_for_trace();
  restart();
}

Session::~Session() {
  if (job_) retired_.push_back(std::move(job_));
  for (auto& j : retired_) j->cancel = true;
  for (auto& j : retired_)
    if (j->thread.joinable()) j->thread.join();
}

namespace {

// The name a model is shown by: its folder's for a folder or an ecosystem checkpoint (their
// files are all called model.safetensors), else the file's.
std::string model_name(const std::string& path, Layout layout) {
  std::filesystem::path p = std::filesystem::path(path).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "dir/" → "dir"
  std::error_code ec;
  if (!std::filesystem::is_directory(p, ec) && layout != Layout::Stepformer && p.has_parent_path())
    p = std::filesystem::absolute(p, ec).parent_path();
  return p.filename().string();
}

}  // namespace

SessionStart open_start(const std::string& path) {
  OpenedModel om = open_model(path);
  std::string label = model_name(path, om.layout);
  if (om.layout != Layout::Stepformer) label += " (" + layout_title(om.layout) + ")";
  ModelOrigin o{om.layout, path, std::move(om.files), std::move(om.provenance), std::move(om.notes)};
  return {std::make_shared<const Model>(std::move(om.checkpoint.model)), std::move(om.tokenizer), std::move(label),
          std::move(o)};
}

SessionStart default_start() {
  const std::string path = assets_dir() + "/default.safetensors";
  if (std::filesystem::exists(path)) {
    try {
      return open_start(path);
    } catch (const std::exception&) {  // unreadable: the untrained model below
    }
  }
  return {std::make_shared<const Model>(Model::initialised(ModelConfig{}, 1)), nullptr,
          "built-in untrained model (seed 1)", {}};
}

bool Session::load_model(const std::string& path, std::string& error) {
  try {
    SessionStart st = open_start(path);
    speculation_.remember_opened(path);  // a draft candidate for later targets
    set_shared_model(std::move(st.model), std::move(st.label), std::move(st.tokenizer), std::move(st.origin));
    return true;
  } catch (const std::exception& ex) {
    error = ex.what();
    return false;
  }
}

void Session::set_model(Model m, std::string label, std::shared_ptr<const Tokenizer> tok, ModelOrigin origin) {
  set_shared_model(std::make_shared<const Model>(std::move(m)), std::move(label), std::move(tok), std::move(origin));
}

void Session::set_shared_model(std::shared_ptr<const Model> m, std::string label, std::shared_ptr<const Tokenizer> tok,
                               ModelOrigin origin) {
  if (!tok) {  // GPT-2's and WordPiece's files cannot be made again from the configuration: keep them
    const bool same_files = tok_ && m->config.file_tokenizer() && tok_->kind() == m->config.tokenizer &&
                            tok_->N_V() == m->config.N_V();
    tok = same_files ? tok_ : std::shared_ptr<const Tokenizer>(make_tokenizer(m->config));  // throws: nothing changed yet
  }
  model_ = std::move(m);
  arch_ = &architecture(model_->config);
  tok_ = std::move(tok);
  origin_ = std::move(origin);
  context_.tokens.clear();
  context_.stale = false;
  if (arch_->has_context() && !context_.encode(*tok_, model_->config.l_max))  // z first: the prompt's trace needs it
    context_.tokens = {tok_->bos_token(), tok_->eos_token()};
  model_label_ = std::move(label);
  generation_.clear();
  speculation_.retarget(*model_);
  translation_.clear();
  fill_.clear();
  run_kind_ = RunKind::Forward;
  trace_label_.clear();
  if (reads_image()) vision_.choose_default();
  // BERT reads whole sequences as it was trained on them, [bos_token, characters…, eos_token].
  prompt_.with_eos = arch_->output() == OutputKind::FillIn;
  // A prompt nobody typed (the default chosen for the previous model) becomes this model's default:
  // "hello=" where its vocabulary has those characters, else some it has. A typed prompt is kept.
  if (!prompt_typed_ || prompt_.text.empty())
    prompt_.text = default_prompt(*tok_, model_->config.l_max, prompt_.with_eos, kDefaultPrompt);
  if (!prompt_.encode(*tok_, model_->config.l_max))
    prompt_.tokens = {model_->config.bos_token()};  // the prompt does not fit: trace [bos_token] alone (the
                                                      // configuration's: a plain-ids tokenizer has none)
  run_trace([this] { restart(); });
  // Shown at once even for a big model: every panel reads the new model's configuration, which
  // the previous model's trace does not fit.
  wait_for_trace();
}

void Session::set_context(const std::string& text) {
  context_.text = text;
  if (!arch_->has_context() || !context_.encode(*tok_, model_->config.l_max)) return;
  if (run_kind_ == RunKind::Training) return;  // a shown training trace has no context
  if (run_kind_ == RunKind::Translate) {  // x̂ belonged to the old z: back to Algorithm 8
    trace_forward();
    return;
  }
  retrace_keep_cursor();
}

void Session::set_prompt(const std::string& text) {
  prompt_typed_ = true;
  fill_.forget_masks();  // typed text: the masked characters are forgotten
  set_prompt_text(text);
}

void Session::set_prompt_text(const std::string& text) {
  prompt_.text = text;
  if (!prompt_.encode(*tok_, model_->config.l_max)) return;
  generation_.clear();  // a continuation belongs to the prompt it continued
  if (run_kind_ == RunKind::Training || run_kind_ == RunKind::Translate) {
    trace_forward();  // a training trace (or Algorithm 15) reads no prompt: back to the forward pass, line 1
    return;
  }
  retrace_keep_cursor();
}

bool Session::select_test_digit(int n, std::string& error) {
  if (!vision_.select_test(n, error)) return false;
  image_changed();
  return true;
}

bool Session::set_image(const Tokens& pixels, std::string& error) {
  if (!vision_.set_pixels(pixels, error)) return false;
  image_changed();
  return true;
}

bool Session::set_pixel(int r, int c, int v, std::string& error) {
  if (!vision_.set_pixel(r, c, v, error)) return false;
  image_changed();
  return true;
}

void Session::clear_image() {
  vision_.clear();
  image_changed();
}

void Session::image_changed() {
  if (!reads_image()) return;  // kept for the next vit
  if (run_kind_ != RunKind::Forward) {
    trace_forward();  // a training trace reads no image: back to the forward pass, line 1
    return;
  }
  retrace_keep_cursor();
}

void Session::retrace_keep_cursor() {
  const bool had = cursor_ < trace_.size();
  Event old;  // where the cursor is, without the values (find_matching reads no values)
  if (had) {
    const Event& e = trace_.events[cursor_];
    old.kind = e.kind, old.alg = e.alg, old.line = e.line, old.pass = e.pass, old.depth = e.depth, old.idx = e.idx;
    old.label = e.label;
  }
  const LineRef caller = had ? trace_.caller_ref(cursor_) : LineRef{};
  run_trace([this, had, old, caller] { cursor_ = had ? trace_.find_matching(old, caller) : 0; });
}

// Runs the job at once for a model of at most async_min_params parameters (then `then`), else on a worker thread
// (`then` runs when its trace is taken, in poll()).
void Session::start(std::shared_ptr<TraceJob> job, std::function<void()> then) {
  if (job->model->table.total() <= async_min_params) {
    job->run();
    finish(*job);
    if (then) then();
    return;
  }
  TraceJob* j = job.get();  // owned by job_ or retired_ until joined
  job->thread = std::thread([j] {
    j->run();
    j->done = true;
  });
  job_ = std::move(job);
  then_ = std::move(then);
}

void Session::run_trace(std::function<void()> then) {
  supersede();
  attn_calls_.clear();
  attn_max_diff_ = std::numeric_limits<double>::quiet_NaN();
  if (run_kind_ == RunKind::Forward && attn_hook_ && run_hooked_trace()) {
    if (then) then();
    return;
  }
  auto job = std::make_shared<TraceJob>();
  job->kind = run_kind_;
  job->model = model_;
  job->arch = arch_;
  job->z = context_.tokens;
  job->x = run_kind_ == RunKind::Generate ? generation_.input(prompt_.tokens) : forward_x();
  if (run_kind_ == RunKind::Generate) job->gen = generation_.options();
  if (run_kind_ == RunKind::Translate) job->ed = translation_.options();
  if (run_kind_ == RunKind::Speculate) {
    const SpeculationSettings& st = speculation_.settings;
    job->spec = {.K = st.K, .tau = st.tau, .l_gen = st.l_gen, .seed = st.seed};
    job->draft = speculation_.draft();
  }
  const ModelConfig& c = model_->config;
  if (run_kind_ == RunKind::Forward && !arch_->has_context() && !attention_options(c, true).positional())
    job->layers_total = c.L;
  start(std::move(job), std::move(then));
}

std::string to_text(const AttentionFailure& f) {
  if (f.alg == 0) return f.why;
  return "Algorithm " + std::to_string(f.alg) + " line " + std::to_string(f.line) + ", l = " + std::to_string(f.layer) +
         (f.kind.empty() ? "" : " (" + f.kind + ")") + ": " + f.why;
}

namespace {

// Where the forward algorithm called MHAttention from: its line av.patch.call, av.patch.l = l.
AttentionCall call_site(const AttentionOptions& av) {
  AttentionCall c;
  c.alg = av.patch.call.alg;
  c.line = av.patch.call.line;
  c.layer = av.patch.l;
  return c;
}

}  // namespace

bool Session::run_hooked_trace() {
  const auto t0 = std::chrono::steady_clock::now();
  Trace fresh;
  Tracer tracer(fresh, ParamBinding::View);  // θ by reference, as in TraceJob::run
  std::vector<AttentionCall> calls;
  std::optional<AttentionFailure> failed;
  try {
    const MHAttentionFn<float> fn = [&](const MatF& X, const MatF& Z, const MHAttentionW<const float>& W,
                                        const Mask& mask, const AttentionOptions& av) {
      AttentionCall& call = calls.emplace_back(call_site(av));
      call.enter = fresh.events.size();  // the replay's first event: Algorithm 5's Enter
      try {
        MatF Vt = attn_hook_(X, Z, W, mask, av, &tracer, call);
        // A hook that checked itself (the GPU's guard) has set it: its own Ṽ's distance, even where it returned core's.
        if (std::isnan(call.max_diff)) call.max_diff = max_abs_diff_to_core(Vt, X, Z, W, mask, av);
        return Vt;
      } catch (const std::exception& e) {  // this call is the one refused
        failed = AttentionFailure{call.alg, call.line, call.layer, call.kind, e.what()};
        throw;
      }
    };
    const MatF P = arch_->forward(*model_, context_.tokens, forward_x(), &tracer, fn);
    const MatF P_cpu = arch_->forward(*model_, context_.tokens, forward_x());
    attn_max_diff_ = (P - P_cpu).cwiseAbs().maxCoeff();
    attn_calls_ = std::move(calls);
  } catch (const std::exception& e) {  // the other backend failed: the CPU traces the whole run
    attn_failed_ = failed ? *failed : AttentionFailure{0, 0, 0, "", e.what()};
    attn_failure_ = to_text(*attn_failed_);
    attn_hook_ = {};
    attn_calls_.clear();
    attn_max_diff_ = std::numeric_limits<double>::quiet_NaN();
    return false;
  }
  trace_ = std::move(fresh);
  ++trace_serial_;
  trace_model_ = model_;
  last_trace_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return true;
}

void Session::finish(TraceJob& job) {
  if (job.cancelled) return;
  if (!job.error.empty()) {  // keep the last trace; a failed generation returns to the forward pass
    prompt_.error = job.error;
    if (job.kind != RunKind::Forward) {
      run_kind_ = RunKind::Forward;
      trace_label_.clear();
      run_trace([this] { restart(); });
    }
    return;
  }
  if (job.kind == RunKind::Training) {
    if (job.trace.size() == 0) return;  // the step failed and said so: the shown trace stays
    run_kind_ = RunKind::Training;
    trace_label_ = job.label;
    cursor_ = job.trace.size() > 1 ? 1 : 0;
  }
  trace_ = std::move(job.trace);
  ++trace_serial_;
  trace_model_ = job.model;
  if (job.kind == RunKind::Generate) generation_.finish(job.gen, std::move(job.generation));
  if (job.kind == RunKind::Translate) translation_.finish(job.ed, std::move(job.translation));
  if (job.kind == RunKind::Speculate) speculation_.finish(std::move(job.speculation));
  cursor_ = std::min(cursor_, trace_.size() ? trace_.size() - 1 : 0);
  last_trace_ms_ = job.ms;
}

bool Session::poll() {
  for (auto it = retired_.begin(); it != retired_.end();) {
    if ((*it)->done) {
      (*it)->thread.join();
      it = retired_.erase(it);
    } else {
      ++it;
    }
  }
  if (!job_ || !job_->done) return false;
  const std::shared_ptr<TraceJob> job = std::move(job_);
  const std::function<void()> then = std::move(then_);
  then_ = {};
  if (job->thread.joinable()) job->thread.join();
  finish(*job);
  if (then) then();
  return true;
}

void Session::wait_for_trace() {
  while (job_) {  // finish() may start another run (a failed generation falls back to the forward pass)
    if (job_->thread.joinable()) job_->thread.join();
    job_->done = true;
    poll();
  }
}

void Session::after_trace(std::function<void()> fn) {
  if (!job_) {
    fn();
    return;
  }
  then_ = [prev = std::move(then_), fn = std::move(fn)] {
    if (prev) prev();
    fn();
  };
}

TraceProgress Session::trace_progress() const {
  TraceProgress p;
  if (!job_) return p;
  p.done = job_->layers_done;
  p.total = job_->layers_total;
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - job_->start).count();
  switch (job_->kind) {
    case RunKind::Forward:
      p.what = "Algorithm " + std::to_string(arch_->forward_algorithm()) + " on " + std::to_string(job_->x.size()) +
               " tokens";
      break;
    case RunKind::Generate: p.what = "Algorithm 14 generating " + std::to_string(job_->gen.l_gen) + " tokens"; break;
    case RunKind::Translate: p.what = "Algorithm 15"; break;
    case RunKind::Training: p.what = job_->label; break;
    case RunKind::Speculate: p.what = "Algorithm 14-S generating " + std::to_string(job_->spec.l_gen) + " tokens"; break;
  }
  return p;
}

void Session::set_attention_hook(AttentionHook hook) {
  if (hook) attn_failed_.reset();  // a new try: the last refusal no longer describes what runs
  attn_hook_ = std::move(hook);
  if (run_kind_ == RunKind::Forward) retrace_keep_cursor();
}

void Session::supersede() {
  if (!job_) return;  // stopped at its next layer, or left to finish unseen
  job_->cancel = true;
  retired_.push_back(std::move(job_));
  then_ = {};
}

void Session::show_trace(Trace t, std::string label, std::shared_ptr<const Model> model) {
  supersede();
  run_kind_ = RunKind::Training;
  trace_ = std::move(t);
  ++trace_serial_;
  trace_model_ = std::move(model);
  trace_label_ = std::move(label);
  restart();
}

void Session::trace_training(std::function<void(Tracer&)> step, std::string label, std::shared_ptr<const Model> model,
                             std::function<void()> then) {
  supersede();
  auto job = std::make_shared<TraceJob>();
  job->kind = RunKind::Training;
  job->model = std::move(model);
  job->train = std::move(step);
  job->label = std::move(label);
  start(std::move(job), std::move(then));
}

bool Session::traced_with_kv_cache() const {
  return (run_kind_ == RunKind::Generate && generation_.traced_kv_cache()) ||
         (run_kind_ == RunKind::Translate && translation_.traced_kv_cache());
}

void Session::trace_forward() {
  run_kind_ = RunKind::Forward;
  trace_label_.clear();
  run_trace([this] { restart(); });
}

void Session::trace_generate(int n, bool append) {
  // Algorithm 14 runs a decoder-only model; an encoder-decoder writes x̂ with Algorithm 15 (trace_translate).
  if (arch().output() == OutputKind::Translation) return;
  if (append && run_kind_ == RunKind::Generate) wait_for_trace();  // continue from what it generated
  generation_.start(n, append);
  run_kind_ = RunKind::Generate;
  trace_label_.clear();
  run_trace([this] { restart(); });
}

bool Session::trace_speculate() {
  if (arch().output() != OutputKind::Continuation || !speculation_.draft()) return false;
  run_kind_ = RunKind::Speculate;
  trace_label_.clear();
  run_trace([this] { restart(); });
  return true;
}

void Session::clear_generation() {
  generation_.clear();
  trace_forward();
}

void Session::jump(size_t k) {
  if (trace_.size() == 0) return;
  const size_t to = std::min(k, trace_.size() - 1);
  if (to > cursor_ && jump_gate && !jump_gate(cursor_, to)) return;
  cursor_ = to;
}

void Session::jump_ungated(size_t k) {
  if (trace_.size() == 0) return;
  cursor_ = std::min(k, trace_.size() - 1);
}

void Session::restart() { cursor_ = trace_.size() > 1 ? 1 : 0; }

bool Session::jump_to(LineRef line, int l, int h, int t) {
  for (size_t k = 0; k < trace_.size(); ++k) {
    const Event& e = trace_.events[k];
    if (e.ref() != line || e.kind == EventKind::SubStep) continue;
    if ((l && e.idx.l != l) || (h && e.idx.h != h) || (t && e.idx.t != t)) continue;
    cursor_ = k;
    return true;
  }
  return false;
}

bool Session::has_breakpoint(LineRef line) const {
  return std::find(breakpoints_.begin(), breakpoints_.end(), line) != breakpoints_.end();
}

void Session::toggle_breakpoint(LineRef key) {
  auto it = std::find(breakpoints_.begin(), breakpoints_.end(), key);
  if (it == breakpoints_.end()) breakpoints_.push_back(key);
  else breakpoints_.erase(it);
}

const Tokens& Session::tokens_at(size_t k, Axis a) const {
  if (const Tokens* t = trace_.axis_tokens(k, a)) return *t;
  static const Tokens none;
  if (reads_image()) return none;  // the tokens are the class token and the patches (vision_labels)
  return a == Axis::TokenZ && !context_.tokens.empty() ? context_.tokens : prompt_.tokens;
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

bool Session::toggle_mask(int t, std::string& error) {
  std::string text;
  if (!fill_.toggle_mask(t, prompt_, *tok_, text, error)) return false;
  set_prompt_text(text);
  return true;
}

void Session::trace_fill() {
  if (run_kind_ != RunKind::Forward) trace_forward();
  after_trace([this] {
    const int alg = arch_->forward_algorithm();
    for (size_t k = trace_.size(); k-- > 0;) {
      const Event& e = trace_.events[k];
      if (e.alg == alg && e.kind == EventKind::Line && e.depth == 0) {
        cursor_ = k;
        return;
      }
    }
  });
}

void Session::trace_translate(bool one) {
  if (translation_.needs_run(context_.tokens, model_->table.total(), run_kind_ == RunKind::Translate)) {
    run_kind_ = RunKind::Translate;
    trace_label_.clear();
    run_trace();
  }
  after_trace([this, one] { reveal_translation(one); });
}

void Session::reveal_translation(bool one) {
  const int shown = translation_.reveal(one);
  if (!one) {
    jump(trace_.size());
    return;
  }
  for (size_t k = 0; k < trace_.size(); ++k) {
    const Event& e = trace_.events[k];
    if (e.ref() == lines::ed_inference::loop && e.kind == EventKind::Line && e.idx.i == shown) {
      cursor_ = k;
      return;
    }
  }
  restart();
}

}  // namespace sf
