#include "app/logic/gradient_pairs.hpp"

#include <cmath>

#include "core/trace/dependencies.hpp"

namespace sf {

namespace {

// The event that bound `v` (searching back from k), or k itself when none did.
size_t binder(const Trace& t, size_t k, const Value* v) {
  for (size_t j = k + 1; j-- > 0;)
    for (const Value& x : t.events[j].values)
      if (&x == v) return j;
  return k;
}

bool same_shape(const Value& a, const Value& b) { return a.m.rows() == b.m.rows() && a.m.cols() == b.m.cols(); }

}  // namespace

std::vector<GradientPair> gradient_pairs(const Trace& t, size_t k, const std::vector<const Value*>& scope) {
  std::vector<GradientPair> out;
  if (k >= t.size() || t.events[k].pass != Pass::Backward) return out;
  const size_t frame = matching_forward_frame(t, k);
  if (frame == SIZE_MAX) return out;
  for (const Value* g : scope) {
    if (g->kind != ValueKind::Matrix || gradient_of(g->name).empty()) continue;
    const size_t at = binder(t, k, g);
    const std::optional<ForwardValue> f = forward_counterpart_in(t, at, g->name, frame);
    if (!f || f->value->kind == ValueKind::Tokens || !same_shape(*f->value, *g)) continue;
    out.push_back({g, f->value, at, f->event});
  }
  return out;
}

const GradientPair* pair_of(const std::vector<GradientPair>& pairs, const Value* grad) {
  for (const GradientPair& p : pairs)
    if (p.grad == grad) return &p;
  return nullptr;
}

const char* pair_view_name(PairView v) {
  switch (v) {
    case PairView::Value: return "value";
    case PairView::Gradient: return "gradient";
    case PairView::Product: return "value ⊙ gradient";
  }
  return "";
}

Value pair_view(const GradientPair& p, PairView view) {
  if (view == PairView::Value) return *p.value;
  if (view == PairView::Gradient) return *p.grad;
  const std::string n = gradient_of(p.grad->name);
  MatF m(p.grad->m.rows(), p.grad->m.cols());
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      const float g = p.grad->m(i, j), x = p.value->m(i, j);
      m(i, j) = g == 0.0f && !std::isfinite(x) ? 0.0f : x * g;
    }
  Value v = tv(n + " ⊙ " + p.grad->name, m, p.grad->rows, p.grad->cols);
  v.note = "Not in the paper: " + n + " ⊙ " + p.grad->name + ", each entry times its gradient (a first-order "
           "estimate of how much the loss would change if that entry were set to 0, with the opposite sign).";
  return v;
}

}  // namespace sf
