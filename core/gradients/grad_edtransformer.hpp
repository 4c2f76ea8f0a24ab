// Reverse-mode gradients of Algorithm 8 (EDTransformer, the encoder-decoder) over a Batch of
// pairs (z, x), with the loss of Algorithm 11 line 5. Conventions as in core/gradients/grad.hpp:
// one column per token, pair b's context at columns b·ℓ_z … of Z (d_e, B·ℓ_z), its x at columns
// b·ℓ … of X (d_e, B·ℓ); parameter gradients assigned; batched and untraced.
//
// Padding: contexts are padded to ℓ_z and masked as keys (z_lengths) in the encoder's
// self-attention (line 5) and the decoder's cross-attention (line 16), so that each real column
// equals the unpadded computation; x is padded to ℓ, which the causal mask of line 14 already
// hides from every real position. The encoder learns only through the cross-attention's keys and
// values (line 16 sends gradient to both X and Z).
#pragma once
#include <vector>

#include "core/gradients/grad.hpp"

namespace sf {

// One post-LN sub-layer of Algorithm 8, two lines: "X ← X + f(X)" (a residual line: 5, 7, 14,
// 16, 18), then "for t: X[:, t] ← layer_norm(X[:, t] | γ, β)" (6, 8, 15, 17, 19).
template <class T>
struct PostLnCache {
  Mat<T> X;              // (d_e, N) the stream before the residual line: f's input
  Mat<T> R;              // (d_e, N) X + f(X), layer_norm's input
  LayerNormCache<T> ln;  // the layer_norm line
};

template <class T>
struct EdEncoderLayerCache {
  PostLnCache<T> attn_ln;    // lines 5–6
  MHAttentionCache<T> attn;  // line 5, key-padded by z_lengths
  PostLnCache<T> mlp_ln;     // lines 7–8
  MlpCache<T> mlp;           // line 7 (ReLU)
};

template <class T>
struct EdDecoderLayerCache {
  PostLnCache<T> self_ln;           // lines 14–15
  MHAttentionCache<T> self_attn;    // line 14, causal
  PostLnCache<T> cross_ln;          // lines 16–17
  MHCrossAttentionCache<T> cross;   // line 16, keys and values from Z, key-padded by z_lengths
  PostLnCache<T> mlp_ln;            // lines 18–19
  MlpCache<T> mlp;                  // line 18 (ReLU)
};

template <class T>
struct EdCache {
  int B = 0, l = 0, l_z = 0;
  Tokens tokens;                               // (B·ℓ) x's ids
  Tokens z_tokens;                             // (B·ℓ_z) z's ids
  std::vector<int> z_lengths;                  // (B) ℓ_z of each context
  Mask enc_mask;                               // (ℓ_z, ℓ_z) line 5: Mask ≡ 1
  Mask dec_mask;                               // (ℓ, ℓ) line 14: Mask[t, t′] = [[t ≤ t′]]
  Mat<T> Z;                                    // (d_e, B·ℓ_z) the encoder's stream; after the forward, its output
  std::vector<EdEncoderLayerCache<T>> enc;     // (L_enc)
  Mat<T> X;                                    // (d_e, B·ℓ) the decoder's stream; after the forward, line 19's X
  std::vector<EdDecoderLayerCache<T>> dec;     // (L_dec)
  std::vector<int> targets;                    // (B·ℓ) x[t+1] where position t predicts one, else 0
  Vec<T> weights;                              // (B·ℓ) the weight of each position's loss term
  LossCache<T> loss;                           // line 21 and the loss
};

// The gradient of one stream (the decoder's X or the encoder's Z) at the current point of the
// backward, and its two scratch buffers.
template <class T>
struct StreamGrad {
  Mat<T> dX;  // (d_e, N) ∂loss/∂X
  Mat<T> dR;  // (d_e, N) ∂loss/∂(X + f(X)), below a layer_norm line
  Mat<T> dT;  // (d_e, N) ∂loss/∂X through the branch f
};

template <class T>
struct EdWorkspace {
  StreamGrad<T> dec;                   // over X (d_e, B·ℓ)
  StreamGrad<T> enc;                   // over Z (d_e, B·ℓ_z)
  Mat<T> dZ_cross;                     // (d_e, B·ℓ_z) ∂loss/∂Z through one layer's cross-attention
  Mat<T> dH;                           // (d_mlp, N)
  Mat<T> dlogits;                      // (N_V, B·ℓ)
  Mat<T> dW_e_z, dW_p_z;               // (d_e, N_V), (d_e, ℓ_max) the context's share of ∂W_e, ∂W_p
  MHAttentionWorkspace<T> attn;        // lines 5 and 14
  MHCrossAttentionWorkspace<T> cross;  // line 16
};

// Forward pass of Algorithm 8 on every pair of the batch, then the loss
//   loss = loss_weight · Σ_b Σ_{t=1}^{ℓ_b−1} −log P_b[x_b[t+1], t]   (batch.targets)
// loss_weight = 1: Algorithm 11's summed loss; 1/batch.n_targets(): the mean. Returns the loss.
// cache.loss.P[:, b·ℓ + t − 1] is EDTransformer(z_b, x_b)[:, t] for t ≤ ℓ_b. Throws sf::Error on
// a batch the model cannot take.
template <class T>
T edtransformer_forward(const ModelConfig& c, const EdW<const T>& W, const Batch& batch, T loss_weight,
                        EdCache<T>& cache);
// ∇loss(θ) into dW (views of a gradient buffer with θ's table): every tensor assigned.
template <class T>
void edtransformer_backward(const EdW<const T>& W, const EdCache<T>& cache, EdWorkspace<T>& ws, EdW<T>& dW);

// Everything one evaluation of loss(θ) and ∇loss(θ) needs, allocated once and reused (as
// GptGradient). Not copyable or movable: dW views `grad`.
template <class T>
struct EdGradient {
  explicit EdGradient(const ParamTable& table);
  EdGradient(const EdGradient&) = delete;
  EdGradient& operator=(const EdGradient&) = delete;

  EdCache<T> cache;
  EdWorkspace<T> ws;
  std::vector<T, Eigen::aligned_allocator<T>> grad;  // (table.total()) ∇loss(θ), in θ's layout
  EdW<T> dW;                                         // views of grad

  // edtransformer_forward, then edtransformer_backward into grad. Returns the loss.
  T loss_and_gradient(const ModelConfig& c, const EdW<const T>& W, const Batch& batch, T loss_weight);
};

}  // namespace sf
