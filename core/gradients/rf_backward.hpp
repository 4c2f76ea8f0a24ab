// The steps of Algorithm 4-R's backward pass (random-feature attention, NOT IN THE PAPER), one head:
// the pieces that training's rf_attention_backward (grad_random_features.cpp) chains untraced and
// that the stepped backward (core/backprop/adjoint_rf_attention.cpp) binds line by line. Each step
// is the adjoint of forward lines of core/pseudocode/rfa_listing.cpp; ω (the w_i) is fixed.
#pragma once
#include "core/algorithms/random_features.hpp"
#include "core/gradients/grad.hpp"

namespace sf {

template <class T>
using RfRow = Eigen::Matrix<T, 1, Eigen::Dynamic>;

// Lines 4–7's values. Algorithm 4-R keeps none of them (only Q, K, V are cached), so the backward
// recomputes them from Q and K: the same functions, the same numbers as the forward's.
template <class T>
struct RfForwardValues {
  KeyPrefixes p;   // which keys each query sees, and the order of the queries (line 9)
  Mat<T> W;        // (D, d_attn) line 4's w_i = ω_i/σ
  Mat<T> phiQ;     // (2D, ℓ_x) line 5
  Mat<T> phiK;     // (2D, ℓ_z) line 6
  RfRow<T> kappa;  // (1, ℓ_z) line 7
};
template <class T>
RfForwardValues<T> rf_forward_values(CRef<T> Q, CRef<T> K, const Mask& mask, const Mat<double>& omega);

// Adjoint of lines 12 and 11, per query t_x (the prefix sums S_φ(t_x), s_φ(t_x), g(t_x) as the
// forward had them at t_x):
//   line 12: ∇a = ∇Ṽ/b̂, ∇b̂ = −∇Ṽᵀ Ṽ/b̂, into ∇b (or ∇g = ε ∇b̂ where the guard b̂ = ε g was taken);
//   line 11: ∇φ(Q)[:, t_x] = S_φ ∇a + s_φ ∇b.
// A query with no key (g = 0) has Ṽ = 0 whatever the inputs: all its adjoints are 0.
template <class T>
struct RfQueryAdjoint {
  Mat<T> da;       // (d_out, ℓ_x) ∇a
  RfRow<T> db;     // (1, ℓ_x) ∇b (0 in guarded columns)
  RfRow<T> dg;     // (1, ℓ_x) ∇g (nonzero only in guarded columns)
  Mat<T> dphiQ;    // (2D, ℓ_x) ∇φ(Q)
  int guarded = 0; // columns divided by ε g
};
template <class T>
RfQueryAdjoint<T> rf_query_adjoint(const RfForwardValues<T>& f, CRef<T> dVt, CRef<T> V);

// Adjoint of line 10, the prefix sums: their adjoint is a SUFFIX sum. Key j was added to S_φ, s_φ
// and g for every query that sees it, so, keys from the last down,
//   R_j = Σ_{t: j ∈ A_t} φ(q_t) ∇a_tᵀ (∇S_φ as key j is added), r_j = Σ_t φ(q_t) ∇b_t (∇s_φ), G_j = Σ_t ∇g_t (∇g),
//   ∇V[:, j] = κ_j R_jᵀ φ(k_j),  ∇φ(K)[:, j] = κ_j (R_j v_j + r_j),  ∇κ_j = φ(k_j)ᵀ(R_j v_j + r_j) + G_j.
// Padded keys get 0.
template <class T>
struct RfKeyAdjoint {
  Mat<T> dS_first;  // (2D, d_out) R_j at the first key some query sees: the largest suffix (every query's term under the causal mask)
  Mat<T> ds;        // (2D, ℓ_z) r_j, column j
  RfRow<T> dg;      // (1, ℓ_z) G_j
  Mat<T> dV;        // (d_out, ℓ_z)
  Mat<T> dphiK;     // (2D, ℓ_z)
  RfRow<T> dkappa;  // (1, ℓ_z)
};
template <class T>
RfKeyAdjoint<T> rf_key_adjoint(const RfForwardValues<T>& f, const RfQueryAdjoint<T>& q, CRef<T> V);

// Adjoint of lines 5 and 6, x ↦ φ(x): ∇x = Wᵀ ∇u with ∇u_i = −φ_sin,i ∇φ_cos,i + φ_cos,i ∇φ_sin,i
// (u = W x, φ = D^{−1/2}[cos u_i, sin u_i]). (d_attn, ℓ)
template <class T>
Mat<T> rf_phi_adjoint(const Mat<T>& phi, const Mat<T>& dphi, const Mat<T>& W);

// Adjoint of line 7, κ_j = exp(‖k_j‖²/2σ² − c): ∇K[:, j] = ∇κ_j κ_j k_j/σ², σ² = √d_attn (c is a
// constant shift Ṽ does not depend on). (d_attn, ℓ_z)
template <class T>
Mat<T> rf_kappa_adjoint(CRef<T> K, const RfRow<T>& kappa, const RfRow<T>& dkappa);

}  // namespace sf
