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

// The decoder's layer (lines 14–19): three sub-layers (grad_sublayer.hpp), post-LN as the paper
// or pre-LN (a variant: γ³ before the self-attention, γ⁴ before the cross-attention, γ⁵ before the
// MLP). The encoder's layers (lines 5–8) are LayerCache (grad_layer.cpp).
template <class T>
struct EdDecoderLayerCache {
  SubLayerCache<T> self_ln;         // lines 14–15
  MHAttentionCache<T> self_attn;    // line 14, causal
  SubLayerCache<T> cross_ln;        // lines 16–17
  MHCrossAttentionCache<T> cross;   // line 16, keys and values from Z, key-padded by z_lengths
  SubLayerCache<T> mlp_ln;          // lines 18–19
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
  Mat<T> W_p;                                  // (d_e, ℓ_max) the fixed sinusoid (variant "sinusoidal"), else empty
  Mat<T> W_u;                                  // (N_V, d_e) W_eᵀ when tied (variant), else empty
  EmbeddingExtrasCache<T> z_extras, x_extras;  // lines 2 and 11's extras (not in the paper: BERT checkpoints)
  Mat<T> Z;                                    // (d_e, B·ℓ_z) the encoder's stream; after the forward, its output
  std::vector<LayerCache<T>> enc;              // (L_enc)
  Mat<T> Z_stack;                              // pre-LN (variant): the last encoder layer's output
  LayerNormCache<T> ln_enc;                    // pre-LN: Z ← norm(Z | enc.γ, enc.β)
  Mat<T> X;                                    // (d_e, B·ℓ) the decoder's stream; after the forward, line 21's input
  std::vector<EdDecoderLayerCache<T>> dec;     // (L_dec)
  Mat<T> X_stack;                              // pre-LN (variant): the last decoder layer's output
  LayerNormCache<T> ln_dec;                    // pre-LN: X ← norm(X | dec.γ, dec.β)
  std::vector<int> targets;                    // (B·ℓ) x[t+1] where position t predicts one, else 0
  Vec<T> weights;                              // (B·ℓ) the weight of each position's loss term
  LossCache<T> loss;                           // line 21 and the loss
};

template <class T>
struct EdWorkspace {
  StreamGrad<T> dec;                   // over X (d_e, B·ℓ)
  StreamGrad<T> enc;                   // over Z (d_e, B·ℓ_z)
  Mat<T> dZ_cross;                     // (d_e, B·ℓ_z) ∂loss/∂Z through one layer's cross-attention
  Mat<T> dX_out;                       // (d_e, B·ℓ) pre-LN: ∂loss/∂X after the decoder's final norm
  MlpWorkspace<T> mlp;
  Mat<T> dlogits;                      // (N_V, B·ℓ)
  Mat<T> dW_u;                         // (N_V, d_e) ∂loss/∂W_u when tied (added into ∇W_e)
  Mat<T> dW_e_z, dW_p_z;               // (d_e, N_V), (d_e, ℓ_max) the context's share of ∂W_e, ∂W_p
  Mat<T> dE;                           // line 2 or 11's extras: ∂loss/∂e_t before the embedding norm
  Mat<T> dgamma_emb_z, dbeta_emb_z, dW_s_z;  // (d_e), (d_e), (d_e, token_types) the context's share of the extras' ∂
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
// ∇loss(θ) into dW (views of a gradient buffer with θ's table): every tensor assigned. With `kept`,
// also ∂loss/∂X entering each decoder layer (ResidualGradients::X, L_dec + 1 matrices (d_e, B·ℓ)) and
// ∂loss/∂Z entering each encoder layer (ResidualGradients::Z, L_enc + 1 matrices (d_e, B·ℓ_z)); Z's
// after the last encoder layer is the sum over every decoder layer's cross-attention (line 16).
template <class T>
void edtransformer_backward(const ModelConfig& c, const EdW<const T>& W, const EdCache<T>& cache, EdWorkspace<T>& ws,
                            EdW<T>& dW, ResidualGradients<T>* kept = nullptr);

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
