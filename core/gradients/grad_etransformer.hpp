// Reverse-mode gradients of Algorithm 9 (ETransformer, BERT) over a batch, with the masked-LM loss
// of Algorithm 12 line 9. The conventions are core/gradients/grad.hpp's (a column per token,
// sequence b at columns b·ℓ … b·ℓ+ℓ−1, N := B·ℓ, parameter gradients assigned); the blocks are
// its forward/backward pairs and the sub-layers of grad_sublayer.hpp (post-LN as the paper, or
// pre-LN, a variant, with the stack's final norm enc.gamma, enc.beta before line 10).
//
// Padding: sequences shorter than ℓ are padded; attention masks their padded keys (key-padding
// lengths = batch.lengths), so each real column equals Algorithm 9 on the unpadded sequence.
#pragma once
#include <vector>

#include "core/gradients/grad.hpp"

namespace sf {

template <class T>
struct BertCache {
  int B = 0, l = 0;
  Tokens tokens;                     // (B·ℓ) the batch's ids (x̃)
  std::vector<int> lengths;          // (B) ℓ_b, the key-padding lengths
  Mask mask;                         // (ℓ, ℓ) Mask ≡ 1
  Mat<T> W_p;                        // (d_e, ℓ_max) the fixed sinusoid (variant "sinusoidal"), else empty
  Mat<T> W_u;                        // (N_V, d_e) W_eᵀ when tied (variant), else empty
  EmbeddingExtrasCache<T> extras;    // line 2's extras (not in the paper: BERT checkpoints)
  std::vector<LayerCache<T>> layers;  // (L)
  Mat<T> X_stack;                    // (d_e, N) pre-LN (variant): the last layer's output, before enc.gamma
  LayerNormCache<T> ln_enc;          // pre-LN: the stack's final norm (enc.gamma, enc.beta)
  Mat<T> X;                          // (d_e, N) line 10's input: after the last layer (pre-LN: its final norm)
  Mat<T> F_pre;                      // (d_f, N) W_f X + b_f 1ᵀ, line 10
  Mat<T> F_act;                      // (d_f, N) GELU(…), line 10
  LayerNormCache<T> ln_f;            // line 11
  Mat<T> X_f;                        // (d_f, N) after line 11
  std::vector<int> targets;          // (N) x[t] at masked positions t ∈ T̃, else 0
  Vec<T> weights;                    // (N) the weight of each position's loss term
  LossCache<T> loss;                 // line 12 and the loss
};

template <class T>
struct BertWorkspace {
  StreamGrad<T> s;  // the residual stream's gradient
  Mat<T> dF;        // (d_f, N) ∂loss/∂X after line 10, then ∂loss/∂(W_f X + b_f 1ᵀ)
  Mat<T> dX_f;      // (d_f, N) ∂loss/∂X after line 11
  Mat<T> dlogits;   // (N_V, N)
  Mat<T> dW_u;      // (N_V, d_e) ∂loss/∂W_u when tied (added into ∇W_e)
  Mat<T> dE;        // (d_e, N) line 2's extras: ∂loss/∂e_t before the embedding norm
  MlpWorkspace<T> mlp;
  MHAttentionWorkspace<T> attn;
};

// Forward pass of Algorithm 9 on every sequence x̃_b of the batch, then the loss
//   loss = loss_weight · Σ_b Σ_{t : targets ≠ 0} −log P_b[target, t]   (Algorithm 12 line 9)
// with loss_weight = 1 for the paper's summed loss and 1/batch.n_targets() for the mean.
// cache.loss.P[:, b·ℓ + t − 1] is ETransformer(x̃_b)[:, t] for t ≤ ℓ_b. Throws sf::Error on a batch
// the model cannot take.
template <class T>
T etransformer_forward(const ModelConfig& c, const BertW<const T>& W, const Batch& batch, T loss_weight,
                       BertCache<T>& cache);
// ∇loss(θ) into dW (views of a gradient buffer with θ's table): every tensor assigned. With `kept`,
// also ∂loss/∂X entering each layer (ResidualGradients::X, L + 1 matrices (d_e, N)).
template <class T>
void etransformer_backward(const ModelConfig& c, const BertW<const T>& W, const BertCache<T>& cache,
                           BertWorkspace<T>& ws, BertW<T>& dW, ResidualGradients<T>* kept = nullptr);

// Lines 4–12 and the loss, from cache.X (d_e, B·ℓ) = line 3's X (after line 2's extras): the part of
// Algorithm 9 after the embedding, shared by BERT and the vision transformer (arch "vit", whose line 2
// embeds patches: core/gradients/grad_vit.cpp). Needs cache.B, l, lengths, targets, weights and X.
template <class T>
T etransformer_stack_forward(const ModelConfig& c, const BertW<const T>& W, BertCache<T>& cache);
// Its backward: every tensor of lines 4–12 assigned in dW, and ∂loss/∂X of line 3 left in ws.s.dX.
template <class T>
void etransformer_stack_backward(const ModelConfig& c, const BertW<const T>& W, const BertCache<T>& cache,
                                 BertWorkspace<T>& ws, BertW<T>& dW, ResidualGradients<T>* kept = nullptr);

// Everything one evaluation of loss(θ) and ∇loss(θ) needs, allocated once and reused (as
// GptGradient). Not copyable or movable: dW views `grad`.
template <class T>
struct BertGradient {
  explicit BertGradient(const ParamTable& table);
  BertGradient(const BertGradient&) = delete;
  BertGradient& operator=(const BertGradient&) = delete;

  BertCache<T> cache;
  BertWorkspace<T> ws;
  std::vector<T, Eigen::aligned_allocator<T>> grad;  // (table.total()) ∇loss(θ), θ's layout, aligned
  BertW<T> dW;                                       // views of grad

  // etransformer_forward, then etransformer_backward into grad. Returns the loss.
  T loss_and_gradient(const ModelConfig& c, const BertW<const T>& W, const Batch& batch, T loss_weight);
};

}  // namespace sf
