// Gradients of the MLP of Algorithm 10 line 8 (GELU) and Algorithm 8 lines 7 and 18 (ReLU):
//   L8: X ← X + W^l_mlp2 GELU(W^l_mlp1 X̃ + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
// GELU is the exact erf form of eq. (5): GELU(x) = x·Φ(x), so GELU′(x) = Φ(x) + x·φ(x), with Φ
// the standard normal CDF and φ its density.
#include <unsupported/Eigen/SpecialFunctions>

#include "core/gradients/grad.hpp"

namespace sf {

template <class T>
void mlp_forward(CRef<T> Xt, CRef<T> W_mlp1, CRef<T> b_mlp1, CRef<T> W_mlp2, CRef<T> b_mlp2, Activation act,
                 MlpCache<T>& cache, Ref<T> X) {
  cache.H_pre.resize(W_mlp1.rows(), Xt.cols());  // (d_mlp, N)
  cache.H_act.resize(W_mlp1.rows(), Xt.cols());  // (d_mlp, N)
  // L8, inner: W_mlp1 X̃ + b_mlp1 1ᵀ
  linear_forward<T>(Xt, W_mlp1, b_mlp1, cache.H_pre);
  // L8: GELU(…) = x · ½(1 + erf(x/√2))   (or ReLU(…) = max(x, 0))
  const auto x = cache.H_pre.array();
  if (act == Activation::GELU)
    cache.H_act.array() = x * (T(0.5) * (T(1) + (x * T(0.70710678118654752440)).erf()));
  else
    cache.H_act.array() = x.max(T(0));
  // L8: X ← X + W_mlp2 GELU(…) + b_mlp2 1ᵀ
  X.noalias() += W_mlp2 * cache.H_act;
  X.colwise() += b_mlp2.col(0);
}

template <class T>
void mlp_backward(CRef<T> dX, CRef<T> Xt, CRef<T> W_mlp1, CRef<T> W_mlp2, Activation act, const MlpCache<T>& cache,
                  Mat<T>& dH, Ref<T> dW_mlp1, Ref<T> db_mlp1, Ref<T> dW_mlp2, Ref<T> db_mlp2, Ref<T> dXt) {
  dH.resize(W_mlp1.rows(), Xt.cols());  // (d_mlp, N)
  // ∂ of L8, outer: X ← X + W_mlp2 GELU(…) + b_mlp2 1ᵀ   (the residual passes ∂X on unchanged)
  linear_backward<T>(dX, cache.H_act, W_mlp2, dW_mlp2, db_mlp2, dH);
  // ∂ of GELU(x) = x·Φ(x): GELU′(x) = Φ(x) + x·φ(x) = ½(1 + erf(x/√2)) + x·exp(−x²/2)/√(2π)
  // (ReLU′(x) = [[x > 0]])
  const auto x = cache.H_pre.array();
  if (act == Activation::GELU)
    dH.array() *= T(0.5) * (T(1) + (x * T(0.70710678118654752440)).erf()) +
                  x * (x.square() * T(-0.5)).exp() * T(0.39894228040143267794);
  else
    dH.array() *= (x > T(0)).template cast<T>();
  // ∂ of L8, inner: W_mlp1 X̃ + b_mlp1 1ᵀ
  linear_backward<T>(dH, Xt, W_mlp1, dW_mlp1, db_mlp1, dXt);
}

template void mlp_forward<float>(CRef<float>, CRef<float>, CRef<float>, CRef<float>, CRef<float>, Activation,
                                 MlpCache<float>&, Ref<float>);
template void mlp_forward<double>(CRef<double>, CRef<double>, CRef<double>, CRef<double>, CRef<double>, Activation,
                                  MlpCache<double>&, Ref<double>);
template void mlp_backward<float>(CRef<float>, CRef<float>, CRef<float>, CRef<float>, Activation,
                                  const MlpCache<float>&, Mat<float>&, Ref<float>, Ref<float>, Ref<float>, Ref<float>,
                                  Ref<float>);
template void mlp_backward<double>(CRef<double>, CRef<double>, CRef<double>, CRef<double>, Activation,
                                   const MlpCache<double>&, Mat<double>&, Ref<double>, Ref<double>, Ref<double>,
                                   Ref<double>, Ref<double>);

}  // namespace sf
