// Forward and backward of Algorithm 9, P ← ETransformer(x | θ), over a batch of (masked)
// sequences, with the loss of Algorithm 12 line 9. The backward runs the forward's lines in
// mirrored order (12, 11, 10, then 8, 7, 6, 5 for l = L … 1, then 2).
//   L2:  for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t]        L3: X ← [e_1, e_2, … e_ℓ]
//   L4:  for l = 1, 2, …, L do
//   L5:    X ← X + MHAttention(X | W_l, Mask ≡ 1)
//   L6:    for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)
//   L7:    X ← X + W^l_mlp2 GELU(W^l_mlp1 X + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
//   L8:    for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ²_l, β²_l)
//   L10: X ← GELU(W_f X + b_f 1ᵀ)
//   L11: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)
//   L12: return P = softmax(W_u X)
// Post-LN: every layer_norm replaces the residual stream, so its backward writes the stream's
// gradient afresh (into a zeroed buffer: layer_norm_backward ADDS into dX).
#include <unsupported/Eigen/SpecialFunctions>

#include "core/algorithms/algorithms.hpp"
#include "core/gradients/grad_etransformer.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

// GELU(x) = x·Φ(x), eq. (5), the exact erf form (as mlp_forward computes it).
template <class T>
void gelu_forward(const Mat<T>& X, Mat<T>& Y) {
  Y.array() = X.array() * (T(0.5) * (T(1) + (X.array() * T(0.70710678118654752440)).erf()));
}

// dX ⊙= GELU′(X) = Φ(x) + x·φ(x) (as mlp_backward differentiates it).
template <class T>
void gelu_backward(const Mat<T>& X, Mat<T>& dX) {
  const auto x = X.array();
  dX.array() *= T(0.5) * (T(1) + (x * T(0.70710678118654752440)).erf()) +
                x * (x.square() * T(-0.5)).exp() * T(0.39894228040143267794);
}

// The residual stream's input of layer `layer` (0-based): layer `L` is line 10's input.
template <class T>
Mat<T>& layer_input(BertCache<T>& cache, size_t layer) {
  return layer < cache.layers.size() ? cache.layers[layer].X : cache.X;
}

}  // namespace

template <class T>
T etransformer_forward(const ModelConfig& c, const BertW<const T>& W, const Batch& batch, T loss_weight,
                       BertCache<T>& cache) {
  const int B = batch.B, l = batch.l;
  if (B < 1 || l < 1 || l > c.l_max || static_cast<int>(batch.tokens.size()) != B * l ||
      static_cast<int>(batch.lengths.size()) != B)
    throw Error("a batch must hold B ≥ 1 sequences of 1 to ℓ_max = " + std::to_string(c.l_max) +
                " tokens, with their lengths");
  for (int id : batch.tokens)
    if (id < 1 || id > c.N_V())
      throw Error("token id " + std::to_string(id) + " is outside [1, N_V] = [1, " + std::to_string(c.N_V()) + "]");
  if (batch.targets.size() != batch.tokens.size()) throw Error("a batch needs one target per position");
  const T eps = static_cast<T>(c.eps);
  const Eigen::Index N = static_cast<Eigen::Index>(B) * l;
  cache.B = B;
  cache.l = l;
  cache.tokens = batch.tokens;
  cache.lengths = batch.lengths;  // (B) key padding: sequence b's keys t > ℓ_b are masked
  if (cache.mask.rows() != l) cache.mask = bidirectional_mask(l, l);  // (ℓ, ℓ) Mask ≡ 1
  cache.layers.resize(c.L);

  // The loss terms: x[t] at the masked positions t ∈ T̃ (Algorithm 12 line 9).
  cache.targets = batch.targets;  // (N)
  cache.weights.resize(N);        // (N)
  for (Eigen::Index k = 0; k < N; ++k) cache.weights(k) = cache.targets[k] ? loss_weight : T(0);

  // L2: for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t];  L3: X ← [e_1, e_2, … e_ℓ]
  embedding_forward<T>(batch.tokens, l, W.W_e, W.W_p, layer_input(cache, 0));  // (d_e, N)
  // L4: for l = 1, 2, …, L do
  for (size_t layer = 0; layer < cache.layers.size(); ++layer) {
    const LayerW<const T>& Wl = W.layers[layer];
    BertLayerCache<T>& lc = cache.layers[layer];
    // L5: X ← X + MHAttention(X | W_l, Mask ≡ 1)   (padded keys masked)
    cache.R = lc.X;  // (d_e, N)
    mh_attention_forward<T>(lc.X, Wl.attn, B, l, cache.mask, lc.attn, cache.R, &cache.lengths);
    // L6: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)
    layer_norm_forward<T>(cache.R, Wl.gamma1, Wl.beta1, eps, lc.ln1, lc.X_ln1);
    // L7: X ← X + W^l_mlp2 GELU(W^l_mlp1 X + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
    cache.R = lc.X_ln1;
    mlp_forward<T>(lc.X_ln1, Wl.W_mlp1, Wl.b_mlp1, Wl.W_mlp2, Wl.b_mlp2, Activation::GELU, lc.mlp, cache.R);
    // L8: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ²_l, β²_l)
    layer_norm_forward<T>(cache.R, Wl.gamma2, Wl.beta2, eps, lc.ln2, layer_input(cache, layer + 1));
  }
  // L10: X ← GELU(W_f X + b_f 1ᵀ)
  cache.F_pre.resize(W.W_f.rows(), N);  // (d_f, N)
  cache.F_act.resize(W.W_f.rows(), N);  // (d_f, N)
  linear_forward<T>(cache.X, W.W_f, W.b_f, cache.F_pre);
  gelu_forward<T>(cache.F_pre, cache.F_act);
  // L11: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)
  layer_norm_forward<T>(cache.F_act, W.gamma, W.beta, eps, cache.ln_f, cache.X_f);
  // L12: return P = softmax(W_u X), then Alg. 12 L9: loss = Σ_{t∈T̃} w_t · (−log P[x[t], t])
  return loss_forward<T>(cache.X_f, W.W_u, cache.targets, cache.weights, cache.loss);
}

template <class T>
void etransformer_backward(const BertW<const T>& W, const BertCache<T>& cache, BertWorkspace<T>& ws, BertW<T>& dW) {
  const Eigen::Index d_e = cache.X.rows(), d_f = cache.X_f.rows(), N = cache.X_f.cols();
  ws.dX_f.resize(d_f, N);  // (d_f, N)
  ws.dX.resize(d_e, N);    // (d_e, N)
  ws.dXt.resize(d_e, N);   // (d_e, N)
  // ∂ of Alg. 12 L9 and of L12: P = softmax(W_u X)
  loss_backward<T>(cache.X_f, W.W_u, cache.targets, cache.weights, cache.loss, ws.dlogits, dW.W_u, ws.dX_f);
  // ∂ of L11: X[:, t] ← layer_norm(X[:, t] | γ, β)
  ws.dF.setZero(d_f, N);  // (d_f, N)
  layer_norm_backward<T>(ws.dX_f, W.gamma, cache.ln_f, ws.dF, dW.gamma, dW.beta);
  // ∂ of L10: X ← GELU(W_f X + b_f 1ᵀ)
  gelu_backward<T>(cache.F_pre, ws.dF);
  linear_backward<T>(ws.dF, cache.X, W.W_f, dW.W_f, dW.b_f, ws.dX);
  // ∂ of L4's loop body, for l = L, …, 1; ws.dX is ∂loss/∂X after line 8
  for (int layer = static_cast<int>(cache.layers.size()) - 1; layer >= 0; --layer) {
    const LayerW<const T>& Wl = W.layers[layer];
    LayerW<T>& dWl = dW.layers[layer];
    const BertLayerCache<T>& lc = cache.layers[layer];
    // ∂ of L8: X[:, t] ← layer_norm(X[:, t] | γ²_l, β²_l)   (dR ← ∂loss/∂(X + MLP(X)))
    ws.dR.setZero(d_e, N);
    layer_norm_backward<T>(ws.dX, Wl.gamma2, lc.ln2, ws.dR, dWl.gamma2, dWl.beta2);
    // ∂ of L7: X ← X + W^l_mlp2 GELU(W^l_mlp1 X + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ   (the MLP's input is X itself)
    mlp_backward<T>(ws.dR, lc.X_ln1, Wl.W_mlp1, Wl.W_mlp2, Activation::GELU, lc.mlp, ws.dH, dWl.W_mlp1, dWl.b_mlp1,
                    dWl.W_mlp2, dWl.b_mlp2, ws.dXt);
    ws.dR += ws.dXt;  // ∂loss/∂X after line 6: the residual path plus the MLP's
    // ∂ of L6: X[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)   (dX ← ∂loss/∂(X + MHAttention(X)))
    ws.dX.setZero();
    layer_norm_backward<T>(ws.dR, Wl.gamma1, lc.ln1, ws.dX, dWl.gamma1, dWl.beta1);
    // ∂ of L5: X ← X + MHAttention(X | W_l, Mask ≡ 1)   (the attention's input is X itself)
    mh_attention_backward<T>(ws.dX, lc.X, Wl.attn, cache.B, cache.l, lc.attn, ws.attn, dWl.attn, ws.dXt);
    ws.dX += ws.dXt;  // ∂loss/∂X before line 5: the residual path plus the attention's
  }
  // ∂ of L2: e_t ← W_e[:, x[t]] + W_p[:, t]
  embedding_backward<T>(cache.tokens, cache.l, ws.dX, dW.W_e, dW.W_p);
}

template <class T>
BertGradient<T>::BertGradient(const ParamTable& table)
    : grad(table.total(), T(0)), dW(bind_bert<T>(table, grad.data())) {}

template <class T>
T BertGradient<T>::loss_and_gradient(const ModelConfig& c, const BertW<const T>& W, const Batch& batch, T loss_weight) {
  const T loss = etransformer_forward<T>(c, W, batch, loss_weight, cache);
  etransformer_backward<T>(W, cache, ws, dW);
  return loss;
}

template struct BertGradient<float>;
template struct BertGradient<double>;
template float etransformer_forward<float>(const ModelConfig&, const BertW<const float>&, const Batch&, float,
                                           BertCache<float>&);
template double etransformer_forward<double>(const ModelConfig&, const BertW<const double>&, const Batch&, double,
                                             BertCache<double>&);
template void etransformer_backward<float>(const BertW<const float>&, const BertCache<float>&, BertWorkspace<float>&,
                                           BertW<float>&);
template void etransformer_backward<double>(const BertW<const double>&, const BertCache<double>&,
                                            BertWorkspace<double>&, BertW<double>&);

}  // namespace sf
