#include "app/logic/experiment_session.hpp"

#include <filesystem>

#include "core/io/model_files.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

// The forward algorithm's own line of event k's frame stack (its outermost caller line), e.g.
// Algorithm 10 line 6 for an Algorithm 4 event; none at the top level or without a step shown.
LineRef outer_call(const Trace& t, size_t k) { return k < t.size() ? t.outer_caller_ref(k) : LineRef{}; }

// The table's prefix of the MHAttention called from `call` (Algorithm 8 has three per layer). The
// pre-LN variant calls each one line later than the paper's (post-LN) listing prints it.
std::string attention_part(LineRef call) {
  namespace ed = lines::ed_transformer;
  const auto from = [&](LineRef paper) { return call == paper || call == LineRef{paper.alg, paper.line + 1}; };
  if (from(ed::enc_attention)) return "enc.";
  if (from(ed::self_attention)) return "self_attn.";
  if (from(ed::cross_attention)) return "cross_attn.";
  return "";
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

std::string weight_entry(const Model& m, const Trace& t, size_t k, const std::string& name, std::string& error) {
  if (m.table.find(name)) return name;
  if (k >= t.size()) {
    error = "no step is shown";
    return "";
  }
  // A parameter in scope here says which entry of θ it is (Value::param, set where core bound it).
  for (const Value* v : t.scope(k))
    if (v->name == name && v->param >= 0 && static_cast<size_t>(v->param) < m.table.entries().size())
      return m.table.entries()[static_cast<size_t>(v->param)].name;
  // Else a tensor of this layer not bound here (e.g. W_mlp1 named at an attention line), by its name.
  const Event& e = t.events[k];
  const std::string part = attention_part(outer_call(t, k));
  std::vector<std::string> found;
  for (const ParamEntry& p : m.table.entries())
    if ((p.name == name || ends_with(p.name, "." + name)) && p.layer == e.idx.l &&
        (part.empty() || p.name.find(part) != std::string::npos))
      found.push_back(p.name);
  if (found.size() == 1) return found[0];
  error = found.empty() ? "the model has no parameter " + name + (e.idx.l ? " in layer " + std::to_string(e.idx.l) : "") +
                              ": name it as the parameter table does (e.g. layer1.attn.W_q)"
                        : name + " is ambiguous here (" + found[0] + ", " + found[1] + "…): name it as the parameter table does";
  return "";
}

Tokens ExperimentSession::encode(const Session& s, const std::string& text) const {
  if (s.reads_image())
    throw Error("prompt B is text, and a vision transformer reads an 8×8 image (the Vision tab): there is no prompt "
                "B to compare or patch from. Edit a value, ablate a head, toggle a mask cell or compare "
                "checkpoints instead.");
  const std::vector<UnknownChar> unknown = s.tokenizer().unknown(text);
  if (!unknown.empty())
    throw Error("prompt B has " + std::to_string(unknown.size()) + " piece(s) not in the vocabulary: use the model's characters");
  return s.tokenizer().encode_sequence(text, false);
}

bool ExperimentSession::start(Session& s, std::string& error) {
  if (active()) return true;
  if (s.run_kind() != RunKind::Forward) {
    error = "experiments re-run the forward algorithm: choose Run › Forward (the prompt's own run) first";
    return false;
  }
  s.wait_for_trace();
  original_ = s.trace();
  model_ = &s.model();
  return true;
}

bool ExperimentSession::apply(Session& s, std::vector<Intervention> next, std::string& error) {
  if (!start(s, error)) return false;
  const size_t cursor = s.cursor();
  try {
    Trace t;
    Tracer tr(t);  // parameters copied: the trace outlives an edited copy of θ
    run_experiment(s.model(), s.tokens_z(), s.forward_x(), next, &tr);  // a vit's: the image
    changes_ = compare_traces(original_, t);
    s.show_trace(std::move(t), kLabel);
  } catch (const Error& e) {
    error = e.what();
    if (list_.empty()) original_ = {};
    return false;
  }
  list_ = std::move(next);
  s.jump_ungated(cursor);  // the same events: the cursor stays on its step
  refresh_compare(s);
  return true;
}

bool ExperimentSession::edit(Session& s, size_t k, const std::string& name, int row, int col, float value,
                             std::string& error) {
  const Trace& t = active() ? original_ : s.trace();
  try {
    const PatchPoint at = point_of(t, k, name);
    std::vector<Intervention> next = list_;
    next.push_back(edit_cell(at, row, col, value));
    return apply(s, std::move(next), error);
  } catch (const Error& e) {
    error = e.what();
    return false;
  }
}

bool ExperimentSession::edit_weight(Session& s, size_t k, const std::string& name, int row, int col, float value,
                                    std::string& error) {
  const std::string entry = weight_entry(s.model(), s.trace(), k, name, error);
  if (entry.empty()) return false;
  const ParamEntry& p = s.model().table.at(entry);
  const int head = p.count > 1 && k < s.trace().size() ? std::max(0, s.trace().events[k].idx.h - 1) : 0;
  std::vector<Intervention> next = list_;
  next.push_back(sf::edit_weight(entry, head, row, col, value, p.symbol));
  return apply(s, std::move(next), error);
}

bool ExperimentSession::ablate(Session& s, size_t k, int l, int h, std::string& error) {
  const Trace& t = active() ? original_ : s.trace();
  const LineRef call = attention_call(t, l, h, outer_call(t, k));
  if (call.none()) {
    error = "this run has no head " + std::to_string(h) + " in layer " + std::to_string(l) + " (H = " +
            std::to_string(s.model().config.H) + ")";
    return false;
  }
  std::vector<Intervention> next = list_;
  next.push_back(ablate_head(call, l, h));
  return apply(s, std::move(next), error);
}

bool ExperimentSession::toggle_mask(Session& s, size_t k, int l, int h, int t_z, int t_x, std::string& error) {
  const Trace& t = active() ? original_ : s.trace();
  const LineRef call = attention_call(t, l, h, outer_call(t, k));
  if (call.none()) {
    error = "this run has no head " + std::to_string(h) + " in layer " + std::to_string(l);
    return false;
  }
  std::vector<Intervention> next = list_;
  next.push_back(sf::toggle_mask(call, l, h, t_z, t_x));
  return apply(s, std::move(next), error);
}

bool ExperimentSession::patch(Session& s, size_t k, const std::string& prompt_b, const std::string& what, int l, int t,
                              std::string& error) {
  const Trace& orig = active() ? original_ : s.trace();
  try {
    std::vector<PatchPoint> points;
    if (what == "X") {
      // layer l's input: the value bound last before layer l's loop line
      const int alg = s.arch().forward_algorithm();
      const int L = alg == 8 ? s.model().config.L_dec : s.model().config.L;
      if (l < 1 || l > L) throw Error("layer " + std::to_string(l) + " is outside 1…" + std::to_string(L));
      size_t loop = orig.size();
      for (size_t j = 0; j < orig.size() && loop == orig.size(); ++j)
        if (orig.events[j].depth == 0 && orig.events[j].alg == alg && orig.events[j].idx.l == l &&
            orig.events[j].kind == EventKind::Line && (alg != 8 || orig.events[j].line >= 13))
          loop = j;
      for (size_t j = loop; j-- > 0 && points.empty();)
        if (orig.events[j].depth == 0)
          for (const Value& v : orig.events[j].values)
            if (v.name == "X") points.push_back(point_of(orig, j, "X"));
      if (points.empty()) throw Error("no residual stream X before layer " + std::to_string(l) + " in this run");
    } else if (what == "Vt" || what == "Ṽ") {
      const LineRef call = attention_call(orig, l, 1, outer_call(orig, k));
      if (call.none()) throw Error("this run has no layer " + std::to_string(l));
      constexpr LineRef v_tilde = lines::attention::V_tilde;
      for (int h = 1; h <= s.model().config.H; ++h) points.push_back({call, v_tilde.alg, v_tilde.line, l, h, "Ṽ"});
    } else {
      throw Error("patch what? \"" + what + "\": X (layer l's input) or Vt (every head's Ṽ of layer l)");
    }
    return patch_points(s, points, prompt_b, t, error);
  } catch (const Error& e) {
    error = e.what();
    return false;
  }
}

bool ExperimentSession::patch_value(Session& s, size_t k, const std::string& name, const std::string& prompt_b, int t,
                                    std::string& error) {
  try {
    return patch_points(s, {point_of(active() ? original_ : s.trace(), k, name)}, prompt_b, t, error);
  } catch (const Error& e) {
    error = e.what();
    return false;
  }
}

bool ExperimentSession::patch_points(Session& s, const std::vector<PatchPoint>& points, const std::string& prompt_b,
                                     int t, std::string& error) {
  const Trace& orig = active() ? original_ : s.trace();
  try {
    Trace tb;  // prompt B's own run
    Tracer tr(tb);
    s.arch().forward(s.model(), s.tokens_z(), encode(s, prompt_b), &tr);
    std::vector<Intervention> next = list_;
    for (const PatchPoint& at : points) {
      const Value* vb = value_at(tb, at);
      const Value* va = value_at(orig, at);
      if (!vb || !va) throw Error(describe(at) + " is not in both runs");
      if (t == 0 && (vb->m.rows() != va->m.rows() || vb->m.cols() != va->m.cols()))
        throw Error("prompt B has " + std::to_string(vb->m.cols()) + " positions, this prompt " +
                    std::to_string(va->m.cols()) + ": patch one position (T ≥ 1) or give B the same length");
      if (t > va->m.cols())
        throw Error("position " + std::to_string(t) + " is outside this prompt (" + std::to_string(va->m.cols()) + " tokens)");
      next.push_back(patch_from(at, vb->m, t, prompt_b));
    }
    return apply(s, std::move(next), error);
  } catch (const Error& e) {
    error = e.what();
    return false;
  }
}

bool ExperimentSession::undo(Session& s, std::string& error) {
  if (!active()) return false;
  return remove(s, list_.size() - 1, error);
}

bool ExperimentSession::remove(Session& s, size_t i, std::string& error) {
  if (i >= list_.size()) return false;
  if (list_.size() == 1) {
    reset(s);
    return true;
  }
  std::vector<Intervention> next = list_;
  next.erase(next.begin() + static_cast<std::ptrdiff_t>(i));
  return apply(s, std::move(next), error);
}

void ExperimentSession::reset(Session& s) {
  if (!active()) return;
  const size_t cursor = s.cursor();
  list_.clear();
  original_ = {};
  changes_ = {};
  s.trace_forward();  // the model's own run, traced again: bit for bit the original
  s.wait_for_trace();
  s.jump_ungated(cursor);
  refresh_compare(s);
}

bool ExperimentSession::rerun(Session& s, std::string& error) {
  if (!active()) return true;
  return apply(s, list_, error);
}

bool ExperimentSession::sync(const Session& s) {
  const bool stale_compare = compare_ && compare_->session_model.lock() != s.model_ptr();
  if (stale_compare) compare_.reset();
  if (!active() || (s.trace_label() == kLabel && &s.model() == model_)) return stale_compare;
  list_.clear();
  original_ = {};
  changes_ = {};
  return true;
}

bool ExperimentSession::compare_prompt(const Session& s, const std::string& text, std::string& error) {
  try {
    auto run = std::make_unique<CompareRun>();
    run->what = "prompt '" + text + "'";
    run->session_model = s.model_ptr();
    Tracer tr(run->trace);
    s.arch().forward(s.model(), s.tokens_z(), encode(s, text), &tr);
    compare_ = std::move(run);
    refresh_compare(s);
    return true;
  } catch (const Error& e) {
    error = e.what();
    return false;
  }
}

bool ExperimentSession::compare_model(const Session& s, const std::string& path, std::string& error) {
  try {
    OpenedModel opened = open_model(path);
    auto model = std::make_shared<const Model>(std::move(opened.checkpoint.model));
    const std::string mismatch = shape_mismatch(s.model(), *model);
    if (!mismatch.empty()) throw Error(mismatch + ": compare checkpoints of the same configuration");
    auto run = std::make_unique<CompareRun>();
    run->what = "checkpoint " + std::filesystem::path(path).filename().string();
    run->model = model;
    run->session_model = s.model_ptr();
    Tracer tr(run->trace);
    architecture(model->config).forward(*model, s.tokens_z(), s.forward_x(), &tr);
    compare_ = std::move(run);
    refresh_compare(s);
    return true;
  } catch (const Error& e) {
    error = e.what();
    return false;
  }
}

void ExperimentSession::refresh_compare(const Session& s) {
  if (compare_) compare_->comparison = compare_traces(s.trace(), compare_->trace);
}

}  // namespace sf
