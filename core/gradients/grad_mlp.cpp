// Gradients of the MLP of Algorithm 10 line 8 (GELU) and Algorithm 8 lines 7 and 18 (ReLU):
//   L8: X ← X + W^l_mlp2 GELU(W^l_mlp1 X̃ + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
// GELU is the exact erf form of eq. (5): GELU(x) = x·Φ(x), so GELU′(x) = Φ(x) + x·φ(x), with Φ
// the standard normal CDF and φ its density.
// Variants: gelu_tanh (GPT-2) ½x(1 + tanh(√(2/π)(x + 0.044715x³))); SwiGLU (the encyclopedia
// article): L8 becomes X ← X + W_mlp2 (SiLU(W_gate X̃ + b_gate 1ᵀ) ⊙ (W_mlp1 X̃ + b_mlp1 1ᵀ)) + b_mlp2 1ᵀ.
#include <unsupported/Eigen/SpecialFunctions>

#include "core/gradients/grad.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

constexpr double kSqrtHalf = 0.70710678118654752440;     // 1/√2
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1/√(2π)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // √(2/π)
constexpr double kTanhCubic = 0.044715;

// H_act ← act(H_pre) for the element-wise activations.
template <class T>
void activate(Activation act, const Mat<T>& H_pre, Mat<T>& H_act) {
  const auto x = H_pre.array();
  switch (act) {
    case Activation::GELU:  // x · ½(1 + erf(x/√2))
      H_act.array() = x * (T(0.5) * (T(1) + (x * T(kSqrtHalf)).erf()));
      break;
    case Activation::GELUTanh:  // ½x(1 + tanh(√(2/π)(x + 0.044715x³)))
      H_act.array() = T(0.5) * x * (T(1) + (T(kSqrt2OverPi) * (x + T(kTanhCubic) * x.cube())).tanh());
      break;
    case Activation::ReLU:  // max(x, 0)
      H_act.array() = x.max(T(0));
      break;
    case Activation::SwiGLU:
      throw Error("SwiGLU is a gated MLP, not an element-wise activation");
  }
}

// dH ⊙= act′(H_pre).
template <class T>
void activate_backward(Activation act, const Mat<T>& H_pre, Mat<T>& dH) {
  const auto x = H_pre.array();
  switch (act) {
    case Activation::GELU:  // Φ(x) + x·φ(x)
      dH.array() *= T(0.5) * (T(1) + (x * T(kSqrtHalf)).erf()) + x * (x.square() * T(-0.5)).exp() * T(kInvSqrt2Pi);
      break;
    case Activation::GELUTanh: {  // ½(1 + tanh u) + ½x(1 − tanh² u)·√(2/π)(1 + 3·0.044715x²)
      const auto th = (T(kSqrt2OverPi) * (x + T(kTanhCubic) * x.cube())).tanh();
      dH.array() *= T(0.5) * (T(1) + th) +
                    T(0.5) * x * (T(1) - th.square()) * T(kSqrt2OverPi) * (T(1) + T(3 * kTanhCubic) * x.square());
      break;
    }
    case Activation::ReLU:  // [[x > 0]]
      dH.array() *= (x > T(0)).template cast<T>();
      break;
    case Activation::SwiGLU:
      throw Error("SwiGLU is a gated MLP, not an element-wise activation");
  }
}

}  // namespace

template <class T>
void mlp_forward(CRef<T> Xt, CRef<T> W_mlp1, CRef<T> b_mlp1, CRef<T> W_mlp2, CRef<T> b_mlp2, CRef<T> W_gate,
                 CRef<T> b_gate, Activation act, MlpCache<T>& cache, Ref<T> X) {
  cache.H_pre.resize(W_mlp1.rows(), Xt.cols());  // (d_mlp, N)
  cache.H_act.resize(W_mlp1.rows(), Xt.cols());  // (d_mlp, N)
  // L8, inner: W_mlp1 X̃ + b_mlp1 1ᵀ
  linear_forward<T>(Xt, W_mlp1, b_mlp1, cache.H_pre);
  if (act == Activation::SwiGLU) {
    if (W_gate.size() == 0) throw Error("SwiGLU needs W_gate and b_gate");
    // SwiGLU (variant): SiLU(W_gate X̃ + b_gate 1ᵀ) ⊙ (W_mlp1 X̃ + b_mlp1 1ᵀ), SiLU(g) = g·σ(g)
    cache.G_pre.resize(W_gate.rows(), Xt.cols());  // (d_mlp, N)
    linear_forward<T>(Xt, W_gate, b_gate, cache.G_pre);
    const auto g = cache.G_pre.array();
    cache.H_act.array() = g / (T(1) + (-g).exp()) * cache.H_pre.array();
  } else {
    // L8: GELU(…) (the variants: gelu_tanh, or ReLU as Algorithm 8)
    activate<T>(act, cache.H_pre, cache.H_act);
  }
  // L8: X ← X + W_mlp2 GELU(…) + b_mlp2 1ᵀ
  X.noalias() += W_mlp2 * cache.H_act;
  X.colwise() += b_mlp2.col(0);
}

template <class T>
void mlp_backward(CRef<T> dX, CRef<T> Xt, CRef<T> W_mlp1, CRef<T> W_mlp2, CRef<T> W_gate, Activation act,
                  const MlpCache<T>& cache, MlpWorkspace<T>& ws, Ref<T> dW_mlp1, Ref<T> db_mlp1, Ref<T> dW_mlp2,
                  Ref<T> db_mlp2, Ref<T> dW_gate, Ref<T> db_gate, Ref<T> dXt) {
  ws.dH.resize(W_mlp1.rows(), Xt.cols());  // (d_mlp, N)
  // ∂ of L8, outer: X ← X + W_mlp2 GELU(…) + b_mlp2 1ᵀ   (the residual passes ∂X on unchanged)
  linear_backward<T>(dX, cache.H_act, W_mlp2, dW_mlp2, db_mlp2, ws.dH);
  if (act == Activation::SwiGLU) {
    // ∂ of SiLU(G) ⊙ H: ∂H = ∂ ⊙ SiLU(G), ∂G = ∂ ⊙ H ⊙ SiLU′(G), SiLU′(g) = σ(g)(1 + g(1 − σ(g)))
    const auto g = cache.G_pre.array();
    const auto sigma = T(1) / (T(1) + (-g).exp());
    ws.dG.resize(ws.dH.rows(), ws.dH.cols());  // (d_mlp, N)
    ws.dG.array() = ws.dH.array() * cache.H_pre.array() * sigma * (T(1) + g * (T(1) - sigma));
    ws.dH.array() *= g * sigma;
  } else {
    // ∂ of GELU(x) = x·Φ(x): GELU′(x) = Φ(x) + x·φ(x)   (or the variant's derivative)
    activate_backward<T>(act, cache.H_pre, ws.dH);
  }
  // ∂ of L8, inner: W_mlp1 X̃ + b_mlp1 1ᵀ
  linear_backward<T>(ws.dH, Xt, W_mlp1, dW_mlp1, db_mlp1, dXt);
  if (act == Activation::SwiGLU) {
    // ∂ of W_gate X̃ + b_gate 1ᵀ: its share of ∂X̃ adds to the W_mlp1 path's
    dW_gate.noalias() = ws.dG * Xt.transpose();  // (d_mlp, d_e)
    db_gate = ws.dG.rowwise().sum();              // (d_mlp, 1)
    dXt.noalias() += W_gate.transpose() * ws.dG;  // (d_e, N)
  }
}

#define SF_MLP(T)                                                                                                 \
  template void mlp_forward<T>(CRef<T>, CRef<T>, CRef<T>, CRef<T>, CRef<T>, CRef<T>, CRef<T>, Activation,         \
                               MlpCache<T>&, Ref<T>);                                                             \
  template void mlp_backward<T>(CRef<T>, CRef<T>, CRef<T>, CRef<T>, CRef<T>, Activation, const MlpCache<T>&,      \
                                MlpWorkspace<T>&, Ref<T>, Ref<T>, Ref<T>, Ref<T>, Ref<T>, Ref<T>, Ref<T>);
SF_MLP(float)
SF_MLP(double)
#undef SF_MLP

}  // namespace sf
