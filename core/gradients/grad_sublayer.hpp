// One sub-layer of every architecture, forward and backward: a residual line "X ← X + f(·)" and
// its norm line, in either order (norm_position):
//   pre-LN  (Alg. 10 L5–6, L7–8):  X̃[:, t] ← norm(X[:, t] | γ, β);  X ← X + f(X̃)
//   post-LN (Alg. 9 L5–8, Alg. 8): X ← X + f(X);  X[:, t] ← norm(X[:, t] | γ, β)
// GPT-1's post-LN GPT and pre-LN BERT / encoder-decoder (the encyclopedia article) are variants;
// norm is layer_norm (Algorithm 6) or RMSNorm (a variant). f is a lambda: the attention or the MLP.
#pragma once
#include "core/gradients/grad.hpp"

namespace sf {

// Forward: add_f(F, R) adds f(F) into R (which holds the stream X). X is updated in place.
template <class T, class F>
void sublayer_forward(const LayerSpec& s, Mat<T>& X, const MapV<const T>& gamma, const MapV<const T>& beta,
                      SubLayerCache<T>& c, F&& add_f) {
  const T eps = static_cast<T>(s.eps);
  c.position = s.position;
  c.X = X;  // (d_e, N)
  if (s.position == NormPosition::Pre) {
    layer_norm_forward<T>(c.X, gamma, beta, eps, c.ln, c.Xt, s.norm);  // X̃[:, t] ← norm(X[:, t] | γ, β)
    add_f(c.Xt, X);                                                     // X ← X + f(X̃)
  } else {
    c.R = X;                                                         // (d_e, N)
    add_f(c.X, c.R);                                                 // R ← X + f(X)
    layer_norm_forward<T>(c.R, gamma, beta, eps, c.ln, X, s.norm);  // X[:, t] ← norm(R[:, t] | γ, β)
  }
}

// Backward, mirrored: g.dX holds ∂loss/∂X after the sub-layer and is left holding ∂loss/∂X before
// it. f_backward(dY, dF) assigns dF = ∂loss/∂(f's input) through f alone, given dY = ∂loss/∂(· + f).
template <class T, class F>
void sublayer_backward(StreamGrad<T>& g, const MapV<const T>& gamma, const SubLayerCache<T>& c, Ref<T> dgamma,
                       Ref<T> dbeta, F&& f_backward) {
  g.dT.resize(g.dX.rows(), g.dX.cols());  // (d_e, N)
  if (c.position == NormPosition::Pre) {
    // ∂ of "X ← X + f(X̃)": the residual passes ∂X on; dT = ∂loss/∂X̃
    f_backward(g.dX, g.dT);
    // ∂ of "X̃[:, t] ← norm(X[:, t] | γ, β)" (adds into ∂X)
    layer_norm_backward<T>(g.dT, gamma, c.ln, g.dX, dgamma, dbeta);
    return;
  }
  // ∂ of "X[:, t] ← norm(R[:, t] | γ, β)": dR = ∂loss/∂R (layer_norm_backward adds into it)
  g.dR.setZero(g.dX.rows(), g.dX.cols());  // (d_e, N)
  layer_norm_backward<T>(g.dX, gamma, c.ln, g.dR, dgamma, dbeta);
  // ∂ of "R ← X + f(X)": ∂loss/∂X = dR (the residual) + dT (through f)
  f_backward(g.dR, g.dT);
  g.dX = g.dR + g.dT;
}

// The final norm of a pre-LN stack (variant: BERT's enc.gamma before line 10, the encoder-decoder's
// enc.gamma on Z and dec.gamma before W_u): X_in ← X, then X[:, t] ← norm(X_in[:, t] | γ, β).
template <class T>
void stack_norm_forward(const LayerSpec& s, Mat<T>& X, const MapV<const T>& gamma, const MapV<const T>& beta,
                        Mat<T>& X_in, LayerNormCache<T>& ln) {
  X_in = X;  // (d_e, N)
  layer_norm_forward<T>(X_in, gamma, beta, static_cast<T>(s.eps), ln, X, s.norm);
}
// Its backward: dX holds ∂loss/∂X after the norm and is left holding ∂loss/∂X_in; dY is scratch.
template <class T>
void stack_norm_backward(Mat<T>& dX, const MapV<const T>& gamma, const LayerNormCache<T>& ln, Mat<T>& dY,
                         Ref<T> dgamma, Ref<T> dbeta) {
  dY = dX;
  dX.setZero();
  layer_norm_backward<T>(dY, gamma, ln, dX, dgamma, dbeta);
}

// The MLP sub-layer: Alg. 10 L7–8, Alg. 9 L7–8, Alg. 8 L7–8 (W_mlp1, W_mlp2, γ², β²) and L18–19
// (W_mlp3, W_mlp4, γ⁵, β⁵); W_gate, b_gate under SwiGLU, else empty.
template <class T>
struct MlpW {
  const MapM<const T>& W_a;
  const MapV<const T>& b_a;
  const MapM<const T>& W_b;
  const MapV<const T>& b_b;
  const MapM<const T>& W_gate;
  const MapV<const T>& b_gate;
};
template <class T>
struct MlpDW {
  MapM<T>& W_a;
  MapV<T>& b_a;
  MapM<T>& W_b;
  MapV<T>& b_b;
  MapM<T>& W_gate;
  MapV<T>& b_gate;
};

template <class T>
void mlp_sublayer_forward(const LayerSpec& s, Mat<T>& X, const MlpW<T>& W, const MapV<const T>& gamma,
                          const MapV<const T>& beta, SubLayerCache<T>& c, MlpCache<T>& mlp) {
  sublayer_forward<T>(s, X, gamma, beta, c, [&](const Mat<T>& Xin, Mat<T>& R) {
    mlp_forward<T>(Xin, W.W_a, W.b_a, W.W_b, W.b_b, W.W_gate, W.b_gate, s.act, mlp, R);
  });
}
template <class T>
void mlp_sublayer_backward(const LayerSpec& s, StreamGrad<T>& g, const MlpW<T>& W, const MapV<const T>& gamma,
                           const SubLayerCache<T>& c, const MlpCache<T>& mlp, MlpWorkspace<T>& ws, const MlpDW<T>& dW,
                           Ref<T> dgamma, Ref<T> dbeta) {
  sublayer_backward<T>(g, gamma, c, dgamma, dbeta, [&](const Mat<T>& dY, Mat<T>& dF) {
    mlp_backward<T>(dY, c.input(), W.W_a, W.W_b, W.W_gate, s.act, mlp, ws, dW.W_a, dW.b_a, dW.W_b, dW.b_b, dW.W_gate,
                    dW.b_gate, dF);
  });
}

}  // namespace sf
