// Stepformer's backward listing of Algorithm 6 (not in the paper): the adjoint of layer_norm on one
// column e, with x̂ = (e − m)/√(v + ε) and r = 1/√(v + ε) from the forward:
//   3̄: ∇γ ← ∇ê ⊙ x̂;  ∇β ← ∇ê;  ∇e ← ∇ê ⊙ γ r;
//       ∇v ← −½ Σ_i ∇ê[i] γ[i] (e[i] − m) (v + ε)^{−3/2};  ∇m ← −Σ_i ∇ê[i] γ[i] r
//   2̄: ∇e ← ∇e + ∇v · 2 (e − m)/d_e;  ∇m ← ∇m − ∇v · 2 Σ_i (e[i] − m)/d_e   (that sum is 0 up to rounding)
//   1̄: ∇e ← ∇e + ∇m/d_e · 1
// The paper divides by √v; the forward uses √(v + ε) (alg06_layer_norm.cpp) and so does this adjoint.
// RMSNorm (variant): no m, no β: 3̄ without ∇β and ∇m, 2̄ with v = Σ_i e[i]²/d_e, no 1̄.
#include "core/backprop/adjoints.hpp"

namespace sf {

namespace {

const char* const kEpsNote =
    "The paper has no ε (it divides by √v); the forward and this adjoint use √(v + ε).";
const char* const kColumnNote = "Column t's term; the calling line sums the columns' terms.";
const char* const kDirectNote = "Partial: line 3's direct path only; the adjoints of lines 2 and 1 add the paths through v and m.";
const char* const kViaVNote = "Partial: lines 3 and 2; the adjoint of line 1 adds the path through m.";
const char* const kZeroSumNote = "∇v's path into m is −∇v · 2 Σ_i (e[i] − m)/d_e, 0 up to rounding: Σ_i (e[i] − m) = 0.";
const char* const kRmsNote = "RMSNorm (variant): no m, no β; ê = e/√(v + ε) ⊙ γ with v = Σ_i e[i]²/d_e.";

// The Enter event's inputs: ∇ê and what the listing reads.
template <class T>
std::vector<Value> norm_inputs(Tracer* tr, CView<T> de_hat, CView<T> e, const MapV<const T>& gamma, T eps,
                               const char* eps_note) {
  return {tv("∇ê", de_hat), tv("e", e), tparam<T>(tr, "γ", gamma), with_note(tscalar("ε", eps), eps_note)};
}

}  // namespace

template <class T>
void adjoint_layer_norm(CView<T> e, CView<T> x_hat, T rstd, const MapV<const T>& gamma, T eps, CView<T> de_hat,
                        Ref<T> dgamma, Ref<T> dbeta, Ref<T> de, Tracer* tr) {
  const TraceBackward backward(tr);
  TraceFrame frame(tr, 6, tr ? norm_inputs<T>(tr, de_hat, e, gamma, eps, kEpsNote) : std::vector<Value>{});
  const T d_e = static_cast<T>(e.rows());
  const auto dxh = (de_hat.array() * gamma.array()).eval();  // (d_e) ∇ê ⊙ γ, the gradient of x̂
  // Adjoint of L3: ê = (e − m)/√(v + ε) ⊙ γ + β
  const Vec<T> dgamma_t = (de_hat.array() * x_hat.array()).matrix();  // (d_e)
  Vec<T> de_t = (dxh * rstd).matrix();                                  // (d_e) line 3's direct path
  const T dv = T(-0.5) * rstd * rstd * (dxh * x_hat.array()).sum();     // (e − m) (v + ε)^{−3/2} = x̂ r²
  T dm = -rstd * dxh.sum();
  if (tr) {
    const Value v_dgamma = with_note(tv("∇γ", dgamma_t), kColumnNote);
    const Value v_dbeta = with_note(tv("∇β", de_hat), kColumnNote);
    const Value v_de = with_note(tv("∇e", de_t), kDirectNote), v_dv = tscalar("∇v", dv), v_dm = tscalar("∇m", dm);
    tr->substep(lines::layer_norm::e_hat.adjoint(), "∇γ ← ∇ê ⊙ (e − m)/√(v + ε)", {v_dgamma});
    tr->substep(lines::layer_norm::e_hat.adjoint(), "∇β ← ∇ê", {v_dbeta});
    tr->substep(lines::layer_norm::e_hat.adjoint(), "∇e ← ∇ê ⊙ γ / √(v + ε)", {v_de});
    tr->substep(lines::layer_norm::e_hat.adjoint(), "∇v ← −½ Σ_i ∇ê[i] γ[i] (e[i] − m) (v + ε)^{−3/2}", {v_dv});
    tr->substep(lines::layer_norm::e_hat.adjoint(), "∇m ← −Σ_i ∇ê[i] γ[i] / √(v + ε)", {v_dm});
    tr->line(lines::layer_norm::e_hat.adjoint(), {v_dgamma, v_dbeta, v_de, v_dv, v_dm});
  }
  // Adjoint of L2: v ← Σ_i (e[i] − m)² / d_e   ((e − m) = x̂/r)
  de_t += ((T(2) * dv / (rstd * d_e)) * x_hat.array()).matrix();
  dm -= T(2) * dv * x_hat.sum() / (rstd * d_e);
  if (tr) tr->line(lines::layer_norm::v.adjoint(), {with_note(tv("∇e", de_t), kViaVNote), with_note(tscalar("∇m", dm), kZeroSumNote)});
  // Adjoint of L1: m ← Σ_i e[i] / d_e
  de_t.array() += dm / d_e;
  if (tr) tr->line(lines::layer_norm::m.adjoint(), {tv("∇e", de_t)});
  dgamma += dgamma_t;
  dbeta += de_hat;
  de += de_t;
}

template <class T>
void adjoint_rms_norm(CView<T> e, CView<T> x_hat, T rstd, const MapV<const T>& gamma, T eps, CView<T> de_hat,
                      Ref<T> dgamma, Ref<T> de, Tracer* tr) {
  const TraceBackward backward(tr);
  TraceFrame frame(tr, 6, tr ? norm_inputs<T>(tr, de_hat, e, gamma, eps, kRmsNote) : std::vector<Value>{});
  const T d_e = static_cast<T>(e.rows());
  const auto dxh = (de_hat.array() * gamma.array()).eval();  // (d_e) ∇ê ⊙ γ
  // Adjoint of L3: ê = e/√(v + ε) ⊙ γ
  const Vec<T> dgamma_t = (de_hat.array() * x_hat.array()).matrix();  // (d_e)
  Vec<T> de_t = (dxh * rstd).matrix();                                  // (d_e) line 3's direct path
  const T dv = T(-0.5) * rstd * rstd * (dxh * x_hat.array()).sum();     // e (v + ε)^{−3/2} = x̂ r²
  if (tr) {
    const Value v_dgamma = with_note(tv("∇γ", dgamma_t), kColumnNote);
    const Value v_de = with_note(tv("∇e", de_t), kDirectNote), v_dv = tscalar("∇v", dv);
    tr->substep(lines::layer_norm::e_hat.adjoint(), "∇γ ← ∇ê ⊙ e/√(v + ε)", {v_dgamma});
    tr->substep(lines::layer_norm::e_hat.adjoint(), "∇e ← ∇ê ⊙ γ / √(v + ε)", {v_de});
    tr->substep(lines::layer_norm::e_hat.adjoint(), "∇v ← −½ Σ_i ∇ê[i] γ[i] e[i] (v + ε)^{−3/2}", {v_dv});
    tr->line(lines::layer_norm::e_hat.adjoint(), {v_dgamma, v_de, v_dv});
  }
  // Adjoint of L2: v ← Σ_i e[i]² / d_e   (e = x̂/r)
  de_t += ((T(2) * dv / (rstd * d_e)) * x_hat.array()).matrix();
  if (tr) tr->line(lines::layer_norm::v.adjoint(), {tv("∇e", de_t)});
  dgamma += dgamma_t;
  de += de_t;
}

template <class T>
void adjoint_norm_columns(Norm norm, T eps, CView<T> X, const LayerNormCache<T>& ln, const MapV<const T>& gamma,
                          CView<T> dY, Ref<T> dX, Ref<T> dgamma, Ref<T> dbeta, Tracer* tr) {
  for (Eigen::Index t = 0; t < X.cols(); ++t) {
    const TraceIndex it(tr, &Indices::t, static_cast<int>(t) + 1);
    if (norm == Norm::RmsNorm)
      adjoint_rms_norm<T>(X.col(t), ln.X_hat.col(t), ln.rstd(t), gamma, eps, dY.col(t), dgamma, dX.col(t), tr);
    else
      adjoint_layer_norm<T>(X.col(t), ln.X_hat.col(t), ln.rstd(t), gamma, eps, dY.col(t), dgamma, dbeta, dX.col(t),
                            tr);
  }
}

#define SF_ADJOINT_LAYER_NORM(T)                                                                                  \
  template void adjoint_layer_norm<T>(CView<T>, CView<T>, T, const MapV<const T>&, T, CView<T>, Ref<T>, Ref<T>,  \
                                      Ref<T>, Tracer*);                                                           \
  template void adjoint_rms_norm<T>(CView<T>, CView<T>, T, const MapV<const T>&, T, CView<T>, Ref<T>, Ref<T>,    \
                                    Tracer*);                                                                     \
  template void adjoint_norm_columns<T>(Norm, T, CView<T>, const LayerNormCache<T>&, const MapV<const T>&,       \
                                        CView<T>, Ref<T>, Ref<T>, Ref<T>, Tracer*);
SF_ADJOINT_LAYER_NORM(float)
SF_ADJOINT_LAYER_NORM(double)
#undef SF_ADJOINT_LAYER_NORM

}  // namespace sf
