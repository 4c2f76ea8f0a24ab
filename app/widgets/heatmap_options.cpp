// The options a traced value's heatmap is drawn with: axis titles and token labels from its axes,
// its colour scale, its caption (heatmap.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "app/app.hpp"
#include "app/attention_calls.hpp"  // event_value
#include "app/logic/vision.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/heatmap.hpp"

namespace sf {

namespace {

// The labels of ids 1 … n (GPT-2: 50257 of them), made once per tokenizer.
const std::vector<std::string>& vocab_labels(const Tokenizer& tok, int n) {
  static const Tokenizer* for_tok = nullptr;
  static std::string for_desc;
  static std::vector<std::string> labels;
  if (for_tok != &tok || static_cast<int>(labels.size()) != n || for_desc != tok.describe()) {
    labels.clear();
    for (int id = 1; id <= n; ++id) labels.push_back(token_label(tok, id));
    for_tok = &tok;
    for_desc = tok.describe();
  }
  return labels;
}

// Whether every column of m is a probability distribution (a softmax's output: A, P): entries in
// [0, 1] summing to 1. A column of n float entries, each within a few units of rounding of its
// exact value and at most 1, sums to 1 within (n + 4)·ε. Stops at the first column that is not
// (a weight matrix fails on its first negative entry), so that this is cheap on every frame.
bool columns_are_distributions(const MatView& m) {
  if (m.size() == 0) return false;
  const double tol = static_cast<double>(m.rows() + 4) * std::numeric_limits<float>::epsilon();
  for (Eigen::Index j = 0; j < m.cols(); ++j) {
    double sum = 0;
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      const float x = m(i, j);
      if (!(x >= 0.0f && x <= 1.0f)) return false;  // NaN fails too
      sum += x;
    }
    if (std::abs(sum - 1.0) > tol) return false;
  }
  return true;
}

// The scores S of Algorithm 4 line 4 (before masking) of the call event k is in; nullptr outside
// Algorithm 4 or before line 4.
const Value* scores_before_masking(const Trace& t, size_t k) {
  if (k >= t.size() || t.events[k].alg != 4) return nullptr;
  for (size_t j = k + 1; j-- > 0;) {
    const Event& e = t.events[j];
    if (e.alg != 4) continue;
    if (e.kind == EventKind::Enter) return nullptr;
    if (e.kind == EventKind::Line && e.ref() == lines::attention::S) return event_value(e, "S");
  }
  return nullptr;
}

float max_abs_finite(const MatView& m) {
  float a = 0;
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      if (std::isfinite(m(i, j))) a = std::max(a, std::abs(m(i, j)));
  return a;
}

}  // namespace

void apply_value_scale(const Trace& t, size_t k, const Value& v, HeatmapOptions& o) {
  if (v.kind == ValueKind::Mask || columns_are_distributions(MatView(v.m))) {
    o.scale = ColorScale::Sequential;
    o.lo = 0;
    o.hi = 1;
    return;
  }
  // S before and after masking share ±max|S| (of line 4), so that a score has one colour in
  // both and the masked cells stand out.
  if (v.name != "S") return;
  if (const Value* S = scores_before_masking(t, k); S && max_abs_finite(MatView(S->m)) > 0) {
    o.scale = ColorScale::Diverging;
    o.hi = max_abs_finite(MatView(S->m));
    o.lo = -o.hi;
  }
}

void label_token_axis(const App& app, const Tokens* tokens, Eigen::Index n, HeatmapAxis& ax) {
  const Session& s = app.session;
  if (s.reads_image()) {  // a vision transformer (not in the paper): the class token, then the patches
    for (int t = 1; t <= n; ++t) {
      ax.labels.push_back(vision_token_label(t, s.model().config.patch, true));
      ax.images.push_back(vision_token_image(s.vision().pixels(), t, s.model().config.patch));
    }
  } else if (tokens && static_cast<Eigen::Index>(tokens->size()) == n) {
    for (int id : *tokens) ax.labels.push_back(token_label(s.tokenizer(), id));
  }
}

HeatmapOptions heatmap_options(const App& app, size_t k, const Value& v) {
  const Session& s = app.session;
  const Trace& t = s.trace();
  HeatmapOptions o;
  o.value_name = v.name;
  o.value = &v;
  o.event = k;
  if (k >= t.size()) return o;
  o.caption = value_caption(app, k, v);
  // The cells of this value that the view the pointer is on was computed from (dependencies).
  if (app.ui.sources_event == k)
    if (auto it = app.ui.sources.find(v.name); it != app.ui.sources.end()) o.regions = it->second;
  const int alg = t.events[k].alg;
  const bool attention = alg == 3 || alg == 4 || alg == 5;
  // The tokens behind a token axis of length n: the sequence the trace names at k, else
  // (Algorithm 14's P of a later generation step) the x of the latest forward call before k
  // with that length.
  auto tokens = [&](Axis a, Eigen::Index n) -> const Tokens* {
    const Tokens& at = s.tokens_at(k, a);
    if (static_cast<Eigen::Index>(at.size()) == n) return &at;
    for (size_t j = k + 1; j-- > 0;) {
      const Event& e = t.events[j];
      if (e.kind == EventKind::Enter)
        for (const auto& x : e.values)
          if (x.kind == ValueKind::Tokens && x.name == "x" && static_cast<Eigen::Index>(x.tokens.size()) == n)
            return &x.tokens;
    }
    return nullptr;
  };
  auto axis = [&](Axis a, Eigen::Index n) {
    HeatmapAxis ax;
    switch (a) {
      case Axis::TokenX:
      case Axis::TokenZ: {
        const bool z = a == Axis::TokenZ;
        ax = attention ? HeatmapAxis{z ? "t_z (keys)" : "t_x (queries)", z ? "t_z" : "t_x", {}}
                       : HeatmapAxis{"t (tokens)", "t", {}};
        label_token_axis(app, s.reads_image() ? nullptr : tokens(a, n), n, ax);
        break;
      }
      case Axis::Vocab:
        ax = HeatmapAxis{"token id", "token id", vocab_labels(s.tokenizer(), static_cast<int>(n))};
        break;
      case Axis::Head:
        ax = HeatmapAxis{"h (heads)", "h", {}};
        break;
      case Axis::Feature:
        break;
    }
    return ax;
  };
  o.rows = axis(v.rows, v.m.rows());
  o.cols = axis(v.cols, v.m.cols());
  apply_value_scale(t, k, v, o);
  o.cell_values = v.kind == ValueKind::Mask;  // 0/1 written in the cells
  return o;
}

std::string value_caption(const App& app, size_t k, const Value& v) {
  const Session& s = app.session;
  if (k >= s.trace().size()) return v.name;
  const Event& e = s.trace().events[k];
  std::string c = v.name;
  if (e.idx.l) c += ", layer " + std::to_string(e.idx.l);
  if (e.idx.h) c += ", head " + std::to_string(e.idx.h);
  if (e.idx.t) c += ", t = " + std::to_string(e.idx.t);
  if (e.idx.i) c += ", step " + std::to_string(e.idx.i);
  c += ", Algorithm " + std::to_string(e.alg) + (e.line ? " line " + std::to_string(e.line) : " (inputs)");
  if (s.arch().has_context() && !s.context().empty()) c += ", context '" + s.context() + "'";
  c += ", prompt '" + s.prompt() + "'";
  return c;
}

}  // namespace sf
