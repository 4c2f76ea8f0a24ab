// Gradients of Algorithm 6, ê ← layer_norm(e | γ, β), applied to every column of X:
//   L1: m ← Σ_{i=1}^{d_e} e[i] / d_e
//   L2: v ← Σ_{i=1}^{d_e} (e[i] − m)² / d_e
//   L3: return ê = (e − m)/√(v + ε) ⊙ γ + β      (the paper has no ε: see alg06_layer_norm.cpp)
// and RMSNorm (variant "rms_norm", the encyclopedia article): no L1 (m = 0), L2 v ← Σ_i e[i]² / d_e,
// L3 ê = e/√(v + ε) ⊙ γ, no β.
#include <cmath>

#include "core/gradients/grad.hpp"

namespace sf {

template <class T>
void layer_norm_forward(CRef<T> X, CRef<T> gamma, CRef<T> beta, T eps, LayerNormCache<T>& cache, Mat<T>& Y,
                        Norm norm) {
  const Eigen::Index d_e = X.rows(), N = X.cols();
  const bool rms = norm == Norm::RmsNorm;
  cache.norm = norm;
  cache.X_hat.resize(d_e, N);  // (d_e, N)
  cache.rstd.resize(N);        // (N)
  Y.resize(d_e, N);            // (d_e, N)
  for (Eigen::Index t = 0; t < N; ++t) {
    // L1: m ← Σ_i e[i] / d_e   (RMSNorm, a variant: no m)
    const T m = rms ? T(0) : X.col(t).sum() / static_cast<T>(d_e);
    // L2: v ← Σ_i (e[i] − m)² / d_e   (RMSNorm: v ← Σ_i e[i]² / d_e)
    const T v = (X.col(t).array() - m).square().sum() / static_cast<T>(d_e);
    // L3: ê = (e − m)/√(v + ε) ⊙ γ + β   (RMSNorm: ê = e/√(v + ε) ⊙ γ)
    const T rstd = T(1) / std::sqrt(v + eps);
    cache.rstd(t) = rstd;
    cache.X_hat.col(t) = (X.col(t).array() - m) * rstd;
    Y.col(t) = (cache.X_hat.col(t).array() * gamma.col(0).array()).matrix();
    if (!rms) Y.col(t) += beta.col(0);
  }
}

template <class T>
void layer_norm_backward(CRef<T> dY, CRef<T> gamma, const LayerNormCache<T>& cache, Ref<T> dX, Ref<T> dgamma,
                         Ref<T> dbeta) {
  const Eigen::Index d_e = dY.rows(), N = dY.cols();
  const bool rms = cache.norm == Norm::RmsNorm;
  // ∂ of L3: ê = x̂ ⊙ γ + β with x̂ = (e − m)/√(v + ε)   (RMSNorm: no β)
  dgamma = (dY.array() * cache.X_hat.array()).rowwise().sum().matrix();  // (d_e, 1)
  if (!rms) dbeta = dY.rowwise().sum();                                  // (d_e, 1)
  for (Eigen::Index t = 0; t < N; ++t) {
    const T r = cache.rstd(t);                                       // 1/√(v + ε)
    const auto x_hat = cache.X_hat.col(t).array();                   // (d_e) (e − m)/√(v + ε)
    const auto dx_hat = (dY.col(t).array() * gamma.col(0).array());  // (d_e) ∂loss/∂x̂
    // ∂ of L3 through x̂ = (e − m) · r, r = (v + ε)^(−1/2): ∂(e − m) = r ∂x̂, and
    // ∂v = Σ_i ∂x̂[i] (e[i] − m) · (−½ r³) = −½ r² Σ_i ∂x̂[i] x̂[i].
    const T dv = T(-0.5) * r * r * (dx_hat * x_hat).sum();
    // ∂ of L1: m ← Σ_i e[i] / d_e adds ∂m / d_e to every e[i] (RMSNorm: no m).
    const T dm = rms ? T(0) : -r * dx_hat.sum();
    // ∂ of L2: v ← Σ_i (e[i] − m)² / d_e adds 2 (e − m)/d_e · ∂v = 2 x̂/(r d_e) · ∂v (its path
    // through m vanishes: Σ_i (e[i] − m) = 0).
    dX.col(t).array() += r * dx_hat + (T(2) * dv / (r * static_cast<T>(d_e))) * x_hat + dm / static_cast<T>(d_e);
  }
}

template void layer_norm_forward<float>(CRef<float>, CRef<float>, CRef<float>, float, LayerNormCache<float>&,
                                        Mat<float>&, Norm);
template void layer_norm_forward<double>(CRef<double>, CRef<double>, CRef<double>, double, LayerNormCache<double>&,
                                         Mat<double>&, Norm);
template void layer_norm_backward<float>(CRef<float>, CRef<float>, const LayerNormCache<float>&, Ref<float>, Ref<float>,
                                         Ref<float>);
template void layer_norm_backward<double>(CRef<double>, CRef<double>, const LayerNormCache<double>&, Ref<double>,
                                          Ref<double>, Ref<double>);

}  // namespace sf
