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
// The steps are rf_backward.hpp's, which the stepped backward (core/backprop/adjoint_rf_attention.cpp)
// binds line by line: one implementation of the maths.
#include <algorithm>

#include "core/gradients/rf_backward.hpp"

namespace sf {

namespace {

Mask to_mask(const Eigen::Ref<const Eigen::Matrix<double, -1, -1>>& m) { return (m.array() != 0).cast<unsigned char>(); }
Mask to_mask(const Eigen::Ref<const Eigen::Matrix<float, -1, -1>>& m) { return (m.array() != 0).cast<unsigned char>(); }

}  // namespace

template <class T>
RfForwardValues<T> rf_forward_values(CRef<T> Q, CRef<T> K, const Mask& mask, const Mat<double>& omega) {
  RfForwardValues<T> f{key_prefixes(mask), rf_directions<T>(omega), {}, {}, {}};
  f.phiQ = rf_phi<T>(Mat<T>(Q), f.W);
  f.phiK = rf_phi<T>(Mat<T>(K), f.W);
  f.kappa = rf_key_weights<T>(Mat<T>(K), f.p.keep);
  return f;
}

template <class T>
RfQueryAdjoint<T> rf_query_adjoint(const RfForwardValues<T>& f, CRef<T> dVt, CRef<T> V) {
  const Eigen::Index F = f.phiK.rows(), d_out = V.rows(), l_x = f.phiQ.cols();
  const T eps = static_cast<T>(kRfGuard);
  RfQueryAdjoint<T> q{Mat<T>::Zero(d_out, l_x), RfRow<T>::Zero(l_x), RfRow<T>::Zero(l_x), Mat<T>::Zero(F, l_x), 0};
  // The forward's prefix sums again, in the order of n, to have each query's S_φ(t_x), s_φ(t_x), g(t_x)
  Mat<T> S = Mat<T>::Zero(F, d_out);
  Vec<T> s = Vec<T>::Zero(F);
  T g = 0;
  int n = 0;
  for (int tx : f.p.order) {
    for (; n < f.p.n[tx]; ++n)
      if (f.p.keep[n]) {
        S.noalias() += (f.kappa(n) * f.phiK.col(n)) * V.col(n).transpose();
        s += f.kappa(n) * f.phiK.col(n);
        g += f.kappa(n);
      }
    if (g == T(0)) continue;  // Ṽ[:, t_x] = 0 whatever the inputs: no gradient
    const T b = s.dot(f.phiQ.col(tx));
    const bool guarded = b < eps * g;
    const T bhat = guarded ? eps * g : b;
    const Vec<T> y = S.transpose() * f.phiQ.col(tx) / bhat;  // Ṽ[:, t_x]
    q.da.col(tx) = dVt.col(tx) / bhat;
    const T dbhat = -dVt.col(tx).dot(y) / bhat;
    if (guarded) {
      q.dg(tx) = eps * dbhat;  // b̂ = ε g
      ++q.guarded;
    } else {
      q.db(tx) = dbhat;
    }
    q.dphiQ.col(tx).noalias() = S * q.da.col(tx) + s * q.db(tx);
  }
  return q;
}

template <class T>
RfKeyAdjoint<T> rf_key_adjoint(const RfForwardValues<T>& f, const RfQueryAdjoint<T>& q, CRef<T> V) {
  const Eigen::Index F = f.phiK.rows(), d_out = V.rows(), l_z = f.phiK.cols();
  RfKeyAdjoint<T> k{Mat<T>::Zero(F, d_out), Mat<T>::Zero(F, l_z), RfRow<T>::Zero(l_z),
                    Mat<T>::Zero(d_out, l_z), Mat<T>::Zero(F, l_z), RfRow<T>::Zero(l_z)};
  Mat<T> R = Mat<T>::Zero(F, d_out);
  Vec<T> r = Vec<T>::Zero(F);
  T G = 0;
  auto t = f.p.order.rbegin();
  // Keys from the last down, queries in reverse order: queries t with n(t) ≥ j + 1 (1-based) see key j
  for (Eigen::Index j = l_z - 1; j >= 0; --j) {
    for (; t != f.p.order.rend() && f.p.n[*t] > j; ++t) {
      R.noalias() += f.phiQ.col(*t) * q.da.col(*t).transpose();
      r += f.phiQ.col(*t) * q.db(*t);
      G += q.dg(*t);
    }
    if (!f.p.keep[j]) continue;  // a padded key: no gradient
    k.ds.col(j) = r;
    k.dg(j) = G;
    const Vec<T> du = R * V.col(j) + r;  // ∂loss/∂(κ_j φ(k_j))
    k.dV.col(j).noalias() = f.kappa(j) * (R.transpose() * f.phiK.col(j));
    k.dphiK.col(j) = f.kappa(j) * du;
    k.dkappa(j) = f.phiK.col(j).dot(du) + G;
  }
  // After key 1: every query's term (a query that sees no real key has ∇a = 0), R at the first real key
  k.dS_first = R;
  return k;
}

template <class T>
Mat<T> rf_phi_adjoint(const Mat<T>& phi, const Mat<T>& dphi, const Mat<T>& W) {
  Mat<T> dU(W.rows(), phi.cols());  // (D, ℓ)
  for (Eigen::Index i = 0; i < W.rows(); ++i)
    dU.row(i) = (phi.row(2 * i).array() * dphi.row(2 * i + 1).array() -
                 phi.row(2 * i + 1).array() * dphi.row(2 * i).array()).matrix();
  return W.transpose() * dU;  // (d_attn, ℓ)
}

template <class T>
Mat<T> rf_kappa_adjoint(CRef<T> K, const RfRow<T>& kappa, const RfRow<T>& dkappa) {
  const T inv_sigma2 = T(1) / std::sqrt(static_cast<T>(K.rows()));  // σ² = √d_attn
  return K * (dkappa.cwiseProduct(kappa) * inv_sigma2).asDiagonal();
}

template <class T>
void rf_attention_forward(CRef<T> Q, CRef<T> K, CRef<T> V, CRef<T> mask, const Mat<double>& omega, Ref<T> Vt) {
  Vt = rf_attention_qkv<T>(Q, K, V, to_mask(mask), omega);
}

template <class T>
void rf_attention_backward(CRef<T> dVt, CRef<T> Q, CRef<T> K, CRef<T> V, CRef<T> mask, const Mat<double>& omega,
                           Ref<T> dQ, Ref<T> dK, Ref<T> dV) {
  const RfForwardValues<T> f = rf_forward_values<T>(Q, K, to_mask(mask), omega);
  const RfQueryAdjoint<T> q = rf_query_adjoint<T>(f, dVt, V);  // lines 12, 11
  const RfKeyAdjoint<T> k = rf_key_adjoint<T>(f, q, V);        // line 10
  dV = k.dV;
  dQ = rf_phi_adjoint<T>(f.phiQ, q.dphiQ, f.W);                                           // line 5
  dK = rf_phi_adjoint<T>(f.phiK, k.dphiK, f.W) + rf_kappa_adjoint<T>(K, f.kappa, k.dkappa);  // lines 6, 7
}

#define SF_RF_GRAD(T)                                                                                            \
  template RfForwardValues<T> rf_forward_values<T>(CRef<T>, CRef<T>, const Mask&, const Mat<double>&);          \
  template RfQueryAdjoint<T> rf_query_adjoint<T>(const RfForwardValues<T>&, CRef<T>, CRef<T>);                  \
  template RfKeyAdjoint<T> rf_key_adjoint<T>(const RfForwardValues<T>&, const RfQueryAdjoint<T>&, CRef<T>);     \
  template Mat<T> rf_phi_adjoint<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&);                               \
  template Mat<T> rf_kappa_adjoint<T>(CRef<T>, const RfRow<T>&, const RfRow<T>&);                               \
  template void rf_attention_forward<T>(CRef<T>, CRef<T>, CRef<T>, CRef<T>, const Mat<double>&, Ref<T>);        \
  template void rf_attention_backward<T>(CRef<T>, CRef<T>, CRef<T>, CRef<T>, CRef<T>, const Mat<double>&, Ref<T>, \
                                         Ref<T>, Ref<T>);
SF_RF_GRAD(float)
SF_RF_GRAD(double)
#undef SF_RF_GRAD

}  // namespace sf
