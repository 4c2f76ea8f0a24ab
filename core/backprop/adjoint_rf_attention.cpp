// Stepformer's backward listing of Algorithm 4-R (random-feature attention; NOT IN THE PAPER: the
// forward is core/pseudocode/rfa_listing.cpp), the lines in the order they run:
//   1̄2: ∇a ← ∇Ṽ / b̂;  ∇b ← −(∇Ṽᵀ Ṽ) / b̂ (guarded columns, b̂ = ε g: ∇g ← −ε (∇Ṽᵀ Ṽ) / b̂ instead)
//   1̄1: ∇φ(Q)[:, t_x] ← S_φ(t_x) ∇a[:, t_x] + s_φ(t_x) ∇b[t_x]
//   1̄0: the prefix sums' adjoint is a suffix sum: keys n = ℓ_z, …, 1 collect the queries that see them,
//       ∇S_φ, ∇s_φ, ∇g; then ∇V[:, n], ∇φ(K)[:, n], ∇κ[n]
//   7̄: ∇K ← ∇κ ⊙ κ K / σ²;  6̄: ∇K ← ∇K + φ's adjoint(∇φ(K));  5̄: ∇Q ← φ's adjoint(∇φ(Q))
//   3̄, 2̄, 1̄: as Algorithm 4's (adjoint_qkv_projections).
// The maths is core/gradients/rf_backward.hpp's, the functions training calls; this file binds them.
#include "core/backprop/adjoints.hpp"
#include "core/gradients/rf_backward.hpp"

namespace sf {

namespace {

namespace L = lines::random_feature_attention;

const char* const kRecomputedNote =
    "Recomputed from Q and K for the backward (the forward keeps only Q, K, V), with the forward's functions.";
const char* const kGuardNote =
    "Nonzero only in the columns where b < ε g, where line 12 divided by ε g instead of b: there the gradient goes "
    "to g (and from it to every κ the query summed), not to b.";
const char* const kSuffixNote =
    "∇S_φ when key 1 was added: the sum over every query that sees key 1 of φ(q) ∇aᵀ. Key n's own ∇S_φ sums only the "
    "queries that see key n (under the causal mask t_x ≥ n): a suffix sum, one term less at each key.";
const char* const kSuffixColumnsNote =
    "Column n: the suffix sum over the queries that see key n, as key n was added.";
const char* const kKappaPathNote = "Partial: line 7's path only (κ depends on ‖k‖²); the adjoint of line 6 adds φ's.";
const char* const kFixedNote = "ω, and so the w_i of line 4, are fixed (drawn from rf_seed, not learned): no gradient.";

}  // namespace

template <class T>
void adjoint_rf_attention(const AttentionForward<T>& f, const AttentionHeadW<const T>& W, CView<T> dVt,
                          AttentionHeadW<T>& dW, Ref<T> dX, Ref<T> dZ, Tracer* tr) {
  const TraceBackward backward(tr);
  TraceFrame frame(tr, algs::random_feature_attention,
                   tr ? std::vector<Value>{tv("∇Ṽ", dVt, Axis::Feature, Axis::TokenX),
                                           tv("Q", f.Q, Axis::Feature, Axis::TokenX),
                                           tv("K", f.K, Axis::Feature, Axis::TokenZ),
                                           tv("V", f.V, Axis::Feature, Axis::TokenZ),
                                           tmask("Mask", f.mask, Axis::TokenZ, Axis::TokenX),
                                           with_note(tv("ω", f.omega), kFixedNote),
                                           tparam<T>(tr, "W_q", W.W_q), tparam<T>(tr, "W_k", W.W_k),
                                           tparam<T>(tr, "W_v", W.W_v)}
                      : std::vector<Value>{});
  const RfForwardValues<T> v = rf_forward_values<T>(f.Q, f.K, f.mask, f.omega);
  // Adjoint of L12 (and L11's ∇φ(Q), computed in the same pass over the queries: it needs S_φ(t_x))
  const RfQueryAdjoint<T> q = rf_query_adjoint<T>(v, dVt, f.V);
  if (tr) {
    tr->line(L::V_col.adjoint(), {tv("∇a", q.da, Axis::Feature, Axis::TokenX), tv("∇b", q.db, Axis::Feature, Axis::TokenX),
                                  with_note(tv("∇g", q.dg, Axis::Feature, Axis::TokenX), kGuardNote)});
    tr->line(L::num.adjoint(), {with_note(tv("∇φ(Q)", q.dphiQ, Axis::Feature, Axis::TokenX),
                                          std::string("S_φ(t_x), s_φ(t_x): the sums as they stood at query t_x. ") +
                                              kRecomputedNote)});
  }
  // Adjoint of L10: the suffix sums, then each key's ∇V, ∇φ(K), ∇κ
  const RfKeyAdjoint<T> k = rf_key_adjoint<T>(v, q, f.V);
  if (tr) {
    tr->substep(L::add.adjoint(), "∇S_φ, ∇s_φ, ∇g ← suffix sums over the queries that see key n, n = ℓ_z, …, 1",
                {with_note(tv("∇S_φ", k.dS_first), kSuffixNote),
                 with_note(tv("∇s_φ", k.ds, Axis::Feature, Axis::TokenZ), kSuffixColumnsNote),
                 with_note(tv("∇g", k.dg, Axis::Feature, Axis::TokenZ), kSuffixColumnsNote)});
    tr->line(L::add.adjoint(), {tv("∇V", k.dV, Axis::Feature, Axis::TokenZ),
                                tv("∇φ(K)", k.dphiK, Axis::Feature, Axis::TokenZ),
                                tv("∇κ", k.dkappa, Axis::Feature, Axis::TokenZ)});
  }
  // Adjoint of L7: κ_j = exp(‖k_j‖²/2σ² − c)
  Mat<T> dK = rf_kappa_adjoint<T>(f.K, v.kappa, k.dkappa);  // (d_attn, ℓ_z)
  if (tr) tr->line(L::kappa.adjoint(), {with_note(tv("∇K", dK, Axis::Feature, Axis::TokenZ), kKappaPathNote)});
  // Adjoint of L6: Φ_K ← φ(K)
  dK += rf_phi_adjoint<T>(v.phiK, k.dphiK, v.W);
  if (tr) tr->line(L::phi_K.adjoint(), {tv("∇K", dK, Axis::Feature, Axis::TokenZ)});
  // Adjoint of L5: Φ_Q ← φ(Q)
  const Mat<T> dQ = rf_phi_adjoint<T>(v.phiQ, q.dphiQ, v.W);  // (d_attn, ℓ_x)
  if (tr) tr->line(L::phi_Q.adjoint(), {tv("∇Q", dQ, Axis::Feature, Axis::TokenX)});
  // Adjoints of L3, L2, L1: the projections, as in Algorithm 4
  adjoint_qkv_projections<T>(f, W, dQ, dK, k.dV, dW, dX, dZ, tr, {L::Q.adjoint(), L::K.adjoint(), L::V.adjoint()});
}

#define SF_ADJOINT_RF_ATTENTION(T)                                                                              \
  template void adjoint_rf_attention<T>(const AttentionForward<T>&, const AttentionHeadW<const T>&, CView<T>, \
                                        AttentionHeadW<T>&, Ref<T>, Ref<T>, Tracer*);
SF_ADJOINT_RF_ATTENTION(float)
SF_ADJOINT_RF_ATTENTION(double)
#undef SF_ADJOINT_RF_ATTENTION

}  // namespace sf
