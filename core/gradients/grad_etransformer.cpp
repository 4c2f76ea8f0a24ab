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
// The layers are grad_layer.cpp's (post-LN, or pre-LN as a variant with the stack's final norm
// enc.gamma, enc.beta before line 10); the other variants are the blocks'. Not in the paper, as BERT
// checkpoints have them: line 2's W_s[:, 1] and embedding layer norm, line 12's bias b_u.
#include <unsupported/Eigen/SpecialFunctions>

#include "core/algorithms/algorithms.hpp"
#include "core/gradients/grad_etransformer.hpp"
#include "core/gradients/grad_sublayer.hpp"
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
  const Eigen::Index N = static_cast<Eigen::Index>(B) * l;
  cache.B = B;
  cache.l = l;
  cache.tokens = batch.tokens;
  cache.lengths = batch.lengths;  // (B) key padding: sequence b's keys t > ℓ_b are masked

  // The loss terms: x[t] at the masked positions t ∈ T̃ (Algorithm 12 line 9).
  cache.targets = batch.targets;  // (N)
  cache.weights.resize(N);        // (N)
  for (Eigen::Index k = 0; k < N; ++k) cache.weights(k) = cache.targets[k] ? loss_weight : T(0);

  // L2: for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t];  L3: X ← [e_1, e_2, … e_ℓ]
  embedding_forward<T>(batch.tokens, l, W.W_e, positions_for<T>(c, W.W_p, cache.W_p), cache.X);  // (d_e, N)
  embedding_extras_forward<T>(c, W.extras, cache.extras, cache.X);  // not in the paper: + W_s[:, 1], layer_norm
  return etransformer_stack_forward<T>(c, W, cache);
}

template <class T>
T etransformer_stack_forward(const ModelConfig& c, const BertW<const T>& W, BertCache<T>& cache) {
  const LayerSpec spec = layer_spec(c);
  const T eps = static_cast<T>(c.eps);
  const int B = cache.B, l = cache.l;
  const Eigen::Index N = static_cast<Eigen::Index>(B) * l;
  if (cache.mask.rows() != l) cache.mask = windowed(bidirectional_mask(l, l), c.window);  // (ℓ, ℓ) Mask ≡ 1
  cache.layers.resize(c.L);
  // L4: for l = 1, 2, …, L do   L5–L8 (post-LN; pre-LN is a variant)   (padded keys masked)
  for (int layer = 0; layer < c.L; ++layer)
    layer_forward<T>(spec, W.layers[layer], B, l, cache.mask, &cache.lengths, cache.layers[layer], cache.X);
  if (spec.position == NormPosition::Pre) {
    // pre-LN (variant): the stack's final norm, X[:, t] ← norm(X[:, t] | enc.γ, enc.β)
    stack_norm_forward<T>(spec, cache.X, W.enc_gamma, W.enc_beta, cache.X_stack, cache.ln_enc);
  }
  // L10: X ← GELU(W_f X + b_f 1ᵀ)   (the paper's GELU whatever the MLPs' activation)
  cache.F_pre.resize(W.W_f.rows(), N);  // (d_f, N)
  cache.F_act.resize(W.W_f.rows(), N);  // (d_f, N)
  linear_forward<T>(cache.X, W.W_f, W.b_f, cache.F_pre);
  gelu_forward<T>(cache.F_pre, cache.F_act);
  // L11: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)
  layer_norm_forward<T>(cache.F_act, W.gamma, W.beta, eps, cache.ln_f, cache.X_f, c.norm);
  // L12: return P = softmax(W_u X) (tied: W_u = W_eᵀ; + b_u 1ᵀ, not in the paper), then Alg. 12 L9:
  //      loss = Σ_{t∈T̃} w_t · (−log P[x[t], t])
  return loss_forward<T>(cache.X_f, unembedding_for<T>(W.W_u, W.W_e, cache.W_u), W.extras.b_u, cache.targets,
                         cache.weights, cache.loss);
}

template <class T>
void etransformer_backward(const ModelConfig& c, const BertW<const T>& W, const BertCache<T>& cache,
                           BertWorkspace<T>& ws, BertW<T>& dW, ResidualGradients<T>* kept) {
  etransformer_stack_backward<T>(c, W, cache, ws, dW, kept);
  // ∂ of line 2's extras (not in the paper): layer_norm(e_t | γ_emb, β_emb), e_t + W_s[:, 1]
  embedding_extras_backward<T>(c, W.extras, cache.extras, ws.s.dX, ws.dE, dW.extras.emb_gamma, dW.extras.emb_beta,
                               dW.extras.W_s);
  // ∂ of L2: e_t ← W_e[:, x[t]] + W_p[:, t]   (no gradient for a W_p that is not trained)
  embedding_backward<T>(cache.tokens, cache.l, ws.s.dX, dW.W_e, dW.W_p);
  add_tied_gradient<T>(dW.W_u, ws.dW_u, dW.W_e);
}

template <class T>
void etransformer_stack_backward(const ModelConfig& c, const BertW<const T>& W, const BertCache<T>& cache,
                                 BertWorkspace<T>& ws, BertW<T>& dW, ResidualGradients<T>* kept) {
  const LayerSpec spec = layer_spec(c);
  const Eigen::Index d_e = cache.X.rows(), d_f = cache.X_f.rows(), N = cache.X_f.cols();
  ws.dX_f.resize(d_f, N);  // (d_f, N)
  // ∂ of Alg. 12 L9 and of L12: P = softmax(W_u X)
  loss_backward<T>(cache.X_f, unembedding_used<T>(W.W_u, cache.W_u), cache.targets, cache.weights, cache.loss,
                   ws.dlogits, unembedding_gradient<T>(dW.W_u, dW.W_e, ws.dW_u), dW.extras.b_u, ws.dX_f);
  // ∂ of L11: X[:, t] ← layer_norm(X[:, t] | γ, β)
  ws.dF.setZero(d_f, N);  // (d_f, N)
  layer_norm_backward<T>(ws.dX_f, W.gamma, cache.ln_f, ws.dF, dW.gamma, dW.beta);
  // ∂ of L10: X ← GELU(W_f X + b_f 1ᵀ)
  gelu_backward<T>(cache.F_pre, ws.dF);
  ws.s.dX.resize(d_e, N);  // (d_e, N)
  linear_backward<T>(ws.dF, cache.X, W.W_f, dW.W_f, dW.b_f, ws.s.dX);
  // ∂ of the pre-LN stack's final norm (variant)
  if (spec.position == NormPosition::Pre)
    stack_norm_backward<T>(ws.s.dX, W.enc_gamma, cache.ln_enc, ws.s.dR, dW.enc_gamma, dW.enc_beta);
  const int L = static_cast<int>(cache.layers.size());
  if (kept) kept->X.assign(L + 1, Mat<T>());
  if (kept) kept->X[L] = ws.s.dX;  // after layer L
  // ∂ of L4's loop body, for l = L, …, 1; ws.s.dX is ∂loss/∂X after line 8
  for (int layer = L - 1; layer >= 0; --layer) {
    layer_backward<T>(spec, W.layers[layer], cache.B, cache.l, cache.layers[layer], ws.s, ws.mlp, ws.attn,
                      dW.layers[layer]);
    if (kept) kept->X[layer] = ws.s.dX;  // as X enters layer `layer` + 1
  }
}

template <class T>
BertGradient<T>::BertGradient(const ParamTable& table)
    : grad(table.total(), T(0)), dW(bind_bert<T>(table, grad.data())) {}

template <class T>
T BertGradient<T>::loss_and_gradient(const ModelConfig& c, const BertW<const T>& W, const Batch& batch, T loss_weight) {
  const T loss = etransformer_forward<T>(c, W, batch, loss_weight, cache);
  etransformer_backward<T>(c, W, cache, ws, dW);
  return loss;
}

template struct BertGradient<float>;
template struct BertGradient<double>;
template float etransformer_forward<float>(const ModelConfig&, const BertW<const float>&, const Batch&, float,
                                           BertCache<float>&);
template double etransformer_forward<double>(const ModelConfig&, const BertW<const double>&, const Batch&, double,
                                             BertCache<double>&);
template void etransformer_backward<float>(const ModelConfig&, const BertW<const float>&, const BertCache<float>&,
                                           BertWorkspace<float>&, BertW<float>&, ResidualGradients<float>*);
template float etransformer_stack_forward<float>(const ModelConfig&, const BertW<const float>&, BertCache<float>&);
template double etransformer_stack_forward<double>(const ModelConfig&, const BertW<const double>&, BertCache<double>&);
template void etransformer_stack_backward<float>(const ModelConfig&, const BertW<const float>&, const BertCache<float>&,
                                                 BertWorkspace<float>&, BertW<float>&, ResidualGradients<float>*);
template void etransformer_stack_backward<double>(const ModelConfig&, const BertW<const double>&,
                                                  const BertCache<double>&, BertWorkspace<double>&, BertW<double>&,
                                                  ResidualGradients<double>*);
template void etransformer_backward<double>(const ModelConfig&, const BertW<const double>&, const BertCache<double>&,
                                            BertWorkspace<double>&, BertW<double>&, ResidualGradients<double>*);

}  // namespace sf
