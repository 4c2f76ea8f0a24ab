// Stepformer's backward listing of the MLP lines (not in the paper): Algorithm 10 line 8, Algorithm
// 9 line 7, Algorithm 8 lines 7 and 18, X ← X + W_mlp2 act(W_mlp1 X̃ + b_mlp1 1ᵀ) + b_mlp2 1ᵀ, as
// sub-steps of the line's adjoint (H = act(W_mlp1 X̃ + b_mlp1 1ᵀ)):
//   ∇W_mlp2 ← ∇X Hᵀ;  ∇b_mlp2 ← ∇X 1;  ∇H ← W_mlp2ᵀ ∇X
//   ∇(W_mlp1 X̃ + b_mlp1 1ᵀ) ← ∇H ⊙ act′(W_mlp1 X̃ + b_mlp1 1ᵀ)
//   ∇W_mlp1 ← ∇(…) X̃ᵀ;  ∇b_mlp1 ← ∇(…) 1;  ∇X̃ ← W_mlp1ᵀ ∇(…)
// The residual X ← X + … passes ∇X on unchanged. act′: GELU′(x) = Φ(x) + x φ(x) (the exact erf form of
// eq. 5); variants GELU_tanh (the derivative of GPT-2's tanh form), ReLU′(x) = [[x > 0]], and SwiGLU,
// H = SiLU(G) ⊙ (W_mlp1 X̃ + b_mlp1 1ᵀ) with G = W_gate X̃ + b_gate 1ᵀ: both factors' adjoints.
#include <cmath>
#include <unsupported/Eigen/SpecialFunctions>

#include "core/backprop/adjoints.hpp"

namespace sf {

namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;     // 1/√2
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1/√(2π): φ(0)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // √(2/π)
constexpr double kTanhCubic = 0.044715;

// act′(x), element-wise, for the element-wise activations.
template <class T>
Mat<T> activation_derivative(Activation act, const Mat<T>& X) {
  const auto x = X.array();
  switch (act) {
    case Activation::GELU:  // Φ(x) + x φ(x)
      return (T(0.5) * (T(1) + (x * T(kInvSqrt2)).erf()) + x * T(kInvSqrt2Pi) * (T(-0.5) * x.square()).exp()).matrix();
    case Activation::GELUTanh: {  // u = √(2/π)(x + 0.044715x³): ½(1 + tanh u) + ½x(1 − tanh² u) u′
      const auto th = (T(kSqrt2OverPi) * (x + T(kTanhCubic) * x.cube())).tanh().eval();
      return (T(0.5) * (T(1) + th) +
              T(0.5) * x * (T(1) - th.square()) * T(kSqrt2OverPi) * (T(1) + T(3 * kTanhCubic) * x.square()))
          .matrix();
    }
    case Activation::ReLU:  // [[x > 0]]
      return (x > T(0)).template cast<T>().matrix();
    case Activation::SwiGLU:
      break;
  }
  return Mat<T>();  // SwiGLU is gated: adjoint_mlp differentiates its two factors instead
}

const char* activation_label(Activation act) {
  switch (act) {
    case Activation::GELU: return "GELU(…)";
    case Activation::GELUTanh: return "GELU_tanh(…)";
    case Activation::ReLU: return "ReLU(…)";
    case Activation::SwiGLU: return "SiLU(…) ⊙ (…)";
  }
  return "act(…)";
}

}  // namespace

template <class T>
void adjoint_mlp(const MlpForward<T>& f, const MlpLineW<T>& W, Activation act, CView<T> dX, MlpLineGrad<T>& dW,
                 Ref<T> din, const std::string& in_name, const MlpNames& names, Tracer* tr, int alg, int line) {
  const MlpCache<T>& c = f.c;
  const std::string a = names.a, b = names.b, g = names.gate;
  auto affine = [&](const std::string& w) { return "W_" + w + " " + in_name + " + b_" + w + " 1ᵀ"; };
  const std::string H = activation_label(act), pre = affine(a), gate = affine(g);
  auto sub = [&](const std::string& label, std::vector<Value> v) { tr->substep(LineRef{alg, line}, label, std::move(v)); };
  std::vector<Value> params;  // the parameter gradients: bound once, the sub-step and the line share them
  auto param = [&](const std::string& name, const Mat<T>& m) {  // a copy of the Value shares its matrix
    params.push_back(tv(name, m));
    return params.back();
  };

  // The outer affine map: W_mlp2 H + b_mlp2 1ᵀ
  const Mat<T> dW_b = dX * c.H_act.transpose();  // (d_e, d_mlp)
  const Mat<T> db_b = dX.rowwise().sum();        // (d_e, 1)
  if (tr) {
    const Value v_dW = param("∇W_" + b, dW_b), v_db = param("∇b_" + b, db_b);
    sub("∇W_" + b + " ← ∇X (" + H + ")ᵀ, ∇b_" + b + " ← ∇X 1", {v_dW, v_db});
  }
  const Mat<T> dH = W.W_b.transpose() * dX;  // (d_mlp, ℓ)
  if (tr) sub("∇" + H + " ← W_" + b + "ᵀ ∇X", {tv("∇" + H, dH, Axis::Feature, Axis::TokenX)});
  // The activation: ∇ of its argument(s)
  Mat<T> dpre;   // (d_mlp, ℓ) ∇(W_mlp1 X̃ + b_mlp1 1ᵀ)
  Mat<T> dgate;  // (d_mlp, ℓ) SwiGLU: ∇(W_gate X̃ + b_gate 1ᵀ)
  if (act == Activation::SwiGLU) {
    const auto G = c.G_pre.array();
    const auto sigma = (T(1) / (T(1) + (-G).exp())).eval();                  // σ(G)
    const Mat<T> dsilu = (dH.array() * c.H_pre.array()).matrix();            // ∇SiLU(G) = ∇H ⊙ (W_mlp1 X̃ + b 1ᵀ)
    dgate = (dsilu.array() * sigma * (T(1) + G * (T(1) - sigma))).matrix();  // SiLU′(g) = σ(g)(1 + g(1 − σ(g)))
    dpre = (dH.array() * G * sigma).matrix();                                // ∇H ⊙ SiLU(G)
    if (tr) {
      sub("variant: SwiGLU — ∇SiLU(…) ← ∇" + H + " ⊙ (" + pre + ")", {tv("∇SiLU(…)", dsilu, Axis::Feature, Axis::TokenX)});
      sub("variant: SwiGLU — ∇(" + gate + ") ← ∇SiLU(…) ⊙ SiLU′(…)",
          {tv("∇(" + gate + ")", dgate, Axis::Feature, Axis::TokenX)});
      sub("variant: SwiGLU — ∇(" + pre + ") ← ∇" + H + " ⊙ SiLU(…)",
          {tv("∇(" + pre + ")", dpre, Axis::Feature, Axis::TokenX)});
    }
  } else {
    dpre = dH.cwiseProduct(activation_derivative<T>(act, c.H_pre));
    const std::string d = act == Activation::GELU ? "GELU′" : act == Activation::ReLU ? "ReLU′" : "GELU_tanh′";
    if (tr) sub("∇(" + pre + ") ← ∇" + H + " ⊙ " + d + "(…)", {tv("∇(" + pre + ")", dpre, Axis::Feature, Axis::TokenX)});
  }
  // The inner affine map(s): W_mlp1 X̃ + b_mlp1 1ᵀ (and W_gate X̃ + b_gate 1ᵀ)
  const Mat<T> dW_a = dpre * f.in.transpose();  // (d_mlp, d_e)
  const Mat<T> db_a = dpre.rowwise().sum();     // (d_mlp, 1)
  Mat<T> din_f = W.W_a.transpose() * dpre;      // (d_e, ℓ) ∇ of f's input
  Mat<T> dW_gate, db_gate;
  if (act == Activation::SwiGLU) {
    dW_gate = dgate * f.in.transpose();  // (d_mlp, d_e)
    db_gate = dgate.rowwise().sum();     // (d_mlp, 1)
    din_f.noalias() += W.W_gate.transpose() * dgate;
  }
  if (tr) {
    std::vector<Value> inner{param("∇W_" + a, dW_a), param("∇b_" + a, db_a)};
    if (act == Activation::SwiGLU) inner.insert(inner.end(), {param("∇W_" + g, dW_gate), param("∇b_" + g, db_gate)});
    sub("∇W_" + a + " ← ∇(…) " + in_name + "ᵀ, ∇b_" + a + " ← ∇(…) 1" +
            (act == Activation::SwiGLU ? " (and ∇W_" + g + ", ∇b_" + g + ")" : ""),
        std::move(inner));
  }
  dW.dW_b += dW_b;
  dW.db_b += db_b;
  dW.dW_a += dW_a;
  dW.db_a += db_a;
  if (act == Activation::SwiGLU) {
    dW.dW_gate += dW_gate;
    dW.db_gate += db_gate;
  }
  din += din_f;
  if (!tr) return;
  params.insert(params.begin(), tv("∇" + in_name, din, Axis::Feature, Axis::TokenX));
  tr->line(LineRef{alg, line}, std::move(params));
}

#define SF_ADJOINT_MLP(T)                                                                                          \
  template void adjoint_mlp<T>(const MlpForward<T>&, const MlpLineW<T>&, Activation, CView<T>, MlpLineGrad<T>&, \
                               Ref<T>, const std::string&, const MlpNames&, Tracer*, int, int);
SF_ADJOINT_MLP(float)
SF_ADJOINT_MLP(double)
#undef SF_ADJOINT_MLP

}  // namespace sf
