// Gradients of Algorithm 4-R's lines 4–13 (random-feature attention, NOT IN THE PAPER; the
// estimate is random_features.hpp's), one head, for training. ω is fixed: no gradient.
//
// Forward, per query t (the sums over the keys j Mask allows t, j ∈ A_t):
//   u = W x (D),  φ(x) = D^{−1/2}[cos u_1, sin u_1, …]            (lines 5–6)
//   κ_j = exp(‖k_j‖²/2σ² − c)                                      (line 7; c is a constant shift:
//         Ṽ does not change with c, so ∂Ṽ/∂c = 0 and c is held fixed)
//   a_t = Σ_j κ_j φ(k_j)ᵀφ(q_t) v_j,  b_t = Σ_j κ_j φ(k_j)ᵀφ(q_t),  g_t = Σ_j κ_j   (lines 10–11)
//   b̂_t = b_t if b_t ≥ ε g_t, else ε g_t;  ỹ_t = a_t / b̂_t          (line 12)
// Backward, from dỹ_t:
//   da_t = dỹ_t / b̂_t,  db̂_t = −dỹ_tᵀ ỹ_t / b̂_t,  then db_t = db̂_t (or, guarded, dg_t = ε db̂_t)
//   dφ(q_t) = S_φ(t) da_t + s_φ(t) db_t            (the running sums at t, as the forward has them)
//   with R_j = Σ_{t: j ∈ A_t} φ(q_t) da_tᵀ, r_j = Σ_t φ(q_t) db_t, G_j = Σ_t dg_t (suffix sums):
//   dv_j = κ_j R_jᵀ φ(k_j),  dφ(k_j) = κ_j (R_j v_j + r_j),  dκ_j = φ(k_j)ᵀ(R_j v_j + r_j) + G_j
//   du_i = −φ_sin,i dφ_cos,i + φ_cos,i dφ_sin,i,  dx = Wᵀ du,  and dk_j += dκ_j κ_j k_j / σ².
// Both passes are linear in ℓ_x + ℓ_z: prefix sums forward, suffix sums backward.
#include <algorithm>

#include "core/algorithms/random_features.hpp"
#include "core/gradients/grad.hpp"

namespace sf {

namespace {

template <class T> using Row = Eigen::Matrix<T, 1, Eigen::Dynamic>;

Mask to_mask(const Eigen::Ref<const Eigen::Matrix<double, -1, -1>>& m) { return (m.array() != 0).cast<unsigned char>(); }
Mask to_mask(const Eigen::Ref<const Eigen::Matrix<float, -1, -1>>& m) { return (m.array() != 0).cast<unsigned char>(); }

// dx = Wᵀ du with du_i = −φ_sin,i dφ_cos,i + φ_cos,i dφ_sin,i (the chain rule through cos and sin of u = W x).
template <class T>
Mat<T> phi_backward(const Mat<T>& phi, const Mat<T>& dphi, const Mat<T>& W) {
  Mat<T> dU(W.rows(), phi.cols());  // (D, ℓ)
  for (Eigen::Index i = 0; i < W.rows(); ++i)
    dU.row(i) = (phi.row(2 * i).array() * dphi.row(2 * i + 1).array() -
                 phi.row(2 * i + 1).array() * dphi.row(2 * i).array()).matrix();
  return W.transpose() * dU;  // (d_attn, ℓ)
}

}  // namespace

template <class T>
void rf_attention_forward(CRef<T> Q, CRef<T> K, CRef<T> V, CRef<T> mask, const Mat<double>& omega, Ref<T> Vt) {
  Vt = rf_attention_qkv<T>(Q, K, V, to_mask(mask), omega);
}

template <class T>
void rf_attention_backward(CRef<T> dVt, CRef<T> Q, CRef<T> K, CRef<T> V, CRef<T> mask, const Mat<double>& omega,
                           Ref<T> dQ, Ref<T> dK, Ref<T> dV) {
  const KeyPrefixes p = key_prefixes(to_mask(mask));
  const Mat<T> W = rf_directions<T>(omega);                                          // (D, d_attn)
  const Mat<T> phiQ = rf_phi<T>(Mat<T>(Q), W), phiK = rf_phi<T>(Mat<T>(K), W);       // (2D, ℓ_x), (2D, ℓ_z)
  const Row<T> kappa = rf_key_weights<T>(Mat<T>(K), p.keep);                         // (1, ℓ_z)
  const Eigen::Index F = phiK.rows(), d_out = V.rows(), l_x = Q.cols(), l_z = K.cols();
  const T eps = static_cast<T>(kRfGuard);
  // Forward again (prefix sums in the order of n), with each query's da_t, db_t, dg_t and dφ(q_t).
  Mat<T> dA(d_out, l_x), dphiQ = Mat<T>::Zero(F, l_x);  // da_t as columns; dφ(q_t)
  Row<T> db = Row<T>::Zero(l_x), dg = Row<T>::Zero(l_x);
  dA.setZero();
  {
    Mat<T> S = Mat<T>::Zero(F, d_out);
    Vec<T> s = Vec<T>::Zero(F);
    T g = 0;
    int n = 0;
    for (int tx : p.order) {
      for (; n < p.n[tx]; ++n)
        if (p.keep[n]) {
          S.noalias() += (kappa(n) * phiK.col(n)) * V.col(n).transpose();
          s += kappa(n) * phiK.col(n);
          g += kappa(n);
        }
      if (g == T(0)) continue;  // Ṽ[:, t_x] = 0 whatever the inputs: no gradient
      const T b = s.dot(phiQ.col(tx));
      const bool guarded = b < eps * g;
      const T bhat = guarded ? eps * g : b;
      const Vec<T> y = S.transpose() * phiQ.col(tx) / bhat;  // ỹ_t
      dA.col(tx) = dVt.col(tx) / bhat;
      const T dbhat = -dVt.col(tx).dot(y) / bhat;
      if (guarded)
        dg(tx) = eps * dbhat;  // b̂ = ε g
      else
        db(tx) = dbhat;
      dphiQ.col(tx).noalias() = S * dA.col(tx) + s * db(tx);
    }
  }
  // Suffix sums over the queries that see key j: keys from the last down, queries in reverse order.
  Mat<T> dphiK = Mat<T>::Zero(F, l_z);
  Row<T> dkappa = Row<T>::Zero(l_z);
  dV.setZero();
  {
    Mat<T> R = Mat<T>::Zero(F, d_out);
    Vec<T> r = Vec<T>::Zero(F);
    T G = 0;
    auto q = p.order.rbegin();
    for (Eigen::Index j = l_z - 1; j >= 0; --j) {
      for (; q != p.order.rend() && p.n[*q] > j; ++q) {  // queries t with n(t) ≥ j + 1 (1-based) see key j
        R.noalias() += phiQ.col(*q) * dA.col(*q).transpose();
        r += phiQ.col(*q) * db(*q);
        G += dg(*q);
      }
      if (!p.keep[j]) continue;  // a padded key: no gradient
      const Vec<T> du = R * V.col(j) + r;  // ∂loss/∂(κ_j φ(k_j))
      dV.col(j).noalias() = kappa(j) * (R.transpose() * phiK.col(j));
      dphiK.col(j) = kappa(j) * du;
      dkappa(j) = phiK.col(j).dot(du) + G;
    }
  }
  dQ = phi_backward<T>(phiQ, dphiQ, W);
  // κ_j = exp(‖k_j‖²/2σ² − c): ∂κ_j/∂k_j = κ_j k_j / σ², σ² = √d_attn
  const T inv_sigma2 = T(1) / std::sqrt(static_cast<T>(K.rows()));
  dK = phi_backward<T>(phiK, dphiK, W) + K * (dkappa.cwiseProduct(kappa) * inv_sigma2).asDiagonal();
}

#define SF_RF_GRAD(T)                                                                                            \
  template void rf_attention_forward<T>(CRef<T>, CRef<T>, CRef<T>, CRef<T>, const Mat<double>&, Ref<T>);        \
  template void rf_attention_backward<T>(CRef<T>, CRef<T>, CRef<T>, CRef<T>, CRef<T>, const Mat<double>&, Ref<T>, \
                                         Ref<T>, Ref<T>);
SF_RF_GRAD(float)
SF_RF_GRAD(double)
#undef SF_RF_GRAD

}  // namespace sf
