// Reverse-mode gradients of everything Algorithm 10 (DTransformer) computes, for training.
//
// Each operation is a pair of plain functions, NAME_forward / NAME_backward, one pair per
// file (core/grad_*.cpp). The forward keeps what its backward needs in a cache struct; the
// backward only reads the cache (never overwrites a forward value), restates as a comment
// the paper line it differentiates, and runs the forward's steps in mirrored order.
//
// Conventions (the paper's, as in core/algorithms.hpp):
//   - A batch of B token sequences, each padded to ℓ tokens, is one matrix with a COLUMN PER
//     TOKEN: sequence b occupies columns b·ℓ … b·ℓ+ℓ−1. N := B·ℓ. X ∈ ℝ^{d_e×N}.
//   - Gradients are named d<name>: dX = ∂loss/∂X, same shape as X.
//   - Parameter gradients are ASSIGNED (every parameter is used once per forward pass), except
//     where a variant shares storage: W_e under tied_unembedding collects both uses, and the
//     query heads sharing a key/value head (H_kv < H) accumulate into the same dW_k, dW_v.
//     Gradients of a block's input are ASSIGNED too, except layer_norm_backward, which ADDS
//     into dX: its input is the residual stream X, whose gradient also flows past the block
//     (X ← X + f(layer_norm(X))).
//   - Forward functions that compute a residual branch ADD it to their output, as the paper's
//     "X ← X + …" does.
//   - Everything is templated on the scalar: float for training, double for gradient checks.
//     Buffers are resized only when a shape changes, so steps of one shape allocate nothing.
//
// This is the fast path for training: batched, untraced, attention weights kept only as the
// softmax output A. The stepped (traced) run is core/algNN_*.cpp; the forward here computes
// the same values (tests/core/test_grad_model.cpp).
#pragma once
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/model/params.hpp"
#include "core/model/types.hpp"

namespace sf {

template <class T>
using Ref = Eigen::Ref<Mat<T>>;
template <class T>
using CRef = const Eigen::Ref<const Mat<T>>&;

// ---- Linear map: Y ← W X + b 1ᵀ (Alg. 4 lines 1–3, Alg. 5 line 4, Alg. 10 line 8) --------------

// Y (d_out, N) = W (d_out, d_in) · X (d_in, N) + b 1ᵀ.
template <class T>
void linear_forward(CRef<T> X, CRef<T> W, CRef<T> b, Ref<T> Y);
// dW = dY Xᵀ, db = dY 1, dX = Wᵀ dY (all assigned).
template <class T>
void linear_backward(CRef<T> dY, CRef<T> X, CRef<T> W, Ref<T> dW, Ref<T> db, Ref<T> dX);

// ---- Embedding: Alg. 10 line 2, e_t ← W_e[:, x[t]] + W_p[:, t] ------------------------------------

// X (d_e, B·ℓ): column b·ℓ + t − 1 is W_e[:, x_b[t]] + W_p[:, t]. tokens (B·ℓ), 1-based ids.
// An empty W_p adds no position (variants "rope", "alibi", "none"); the fixed sinusoid
// (variant "sinusoidal") is passed as W_p (positions_for).
template <class T>
void embedding_forward(const Tokens& tokens, int l, CRef<T> W_e, CRef<T> W_p, Mat<T>& X);
// dW_e[:, v] = Σ over columns whose token is v of dX; dW_p[:, t] = Σ_b dX[:, b·ℓ + t − 1]
// (skipped when dW_p is empty: no trained W_p).
template <class T>
void embedding_backward(const Tokens& tokens, int l, CRef<T> dX, Ref<T> dW_e, Ref<T> dW_p);
// The W_p that line 2 adds: the trained W_p (position "learned"), the sinusoid of §5 computed into
// `fixed` (variant "sinusoidal", never trained), or an empty matrix (no position added).
template <class T>
Eigen::Ref<const Mat<T>> positions_for(const ModelConfig& c, const MapM<const T>& W_p, Mat<T>& fixed);

// ---- Alg. 10 line 11 with W_u, or W_u = W_eᵀ (tied_unembedding: Dinan–Yaida–Zhang, GPT-2) ---------

// The W_u of line 11: W_u itself, or W_eᵀ copied into `tied` when the model has no W_u tensor.
template <class T>
Eigen::Ref<const Mat<T>> unembedding_for(const MapM<const T>& W_u, const MapM<const T>& W_e, Mat<T>& tied);
// The backward's W_u: the same matrix the forward used (`tied` as unembedding_for filled it).
template <class T>
Eigen::Ref<const Mat<T>> unembedding_used(const MapM<const T>& W_u, const Mat<T>& tied);
// Where ∂loss/∂W_u goes: dW_u, or `tied` (resized to W_e's transpose) when there is no W_u tensor.
template <class T>
Ref<T> unembedding_gradient(MapM<T>& dW_u, const MapM<T>& dW_e, Mat<T>& tied);
// Tied: ∇W_e collects the unembedding's use too, dW_e += (∂loss/∂W_u)ᵀ (after embedding_backward).
template <class T>
void add_tied_gradient(const MapM<T>& dW_u, const Mat<T>& tied, MapM<T>& dW_e);

// ---- Algorithm 6, on every column: ê = (e − m)/√(v + ε) ⊙ γ + β ---------------------------------
// or RMSNorm (variant "rms_norm", the encyclopedia article): ê = e/√(Σ_i e[i]²/d_e + ε) ⊙ γ.

template <class T>
struct LayerNormCache {
  Norm norm = Norm::LayerNorm;
  Mat<T> X_hat;  // (d_e, N) (e − m)/√(v + ε) (RMSNorm: e/√(v + ε)), before γ and β
  Vec<T> rstd;   // (N)      1/√(v + ε) of each column
};
// Y (d_e, N) ← layer_norm(X[:, t] | γ, β) (or rms_norm(X[:, t] | γ), β empty) for every column t.
template <class T>
void layer_norm_forward(CRef<T> X, CRef<T> gamma, CRef<T> beta, T eps, LayerNormCache<T>& cache, Mat<T>& Y,
                        Norm norm = Norm::LayerNorm);
// dX += ∂/∂X (ADDS: X is the residual stream); dγ, dβ assigned (RMSNorm: no dβ, pass it empty).
template <class T>
void layer_norm_backward(CRef<T> dY, CRef<T> gamma, const LayerNormCache<T>& cache, Ref<T> dX, Ref<T> dgamma,
                         Ref<T> dbeta);

// ---- Not in the paper (BERT checkpoints, Hugging Face's BertEmbeddings): line 2's extras --------------
//   e_t ← e_t + W_s[:, 1]                   (token_types > 0: the token-type embedding of segment 0)
//   e_t ← layer_norm(e_t | γ_emb, β_emb)    (embedding_norm: Algorithm 6 with the model's ε)

template <class T>
struct EmbeddingExtrasCache {
  Mat<T> E;              // (d_e, N) e_t (+ W_s[:, 1]) before the embedding norm (embedding_norm only)
  LayerNormCache<T> ln;  // the embedding norm
};
// X (d_e, N): embedding_forward's e_t in, with the model's extras out (unchanged without them).
template <class T>
void embedding_extras_forward(const ModelConfig& c, const ExtrasW<const T>& W, EmbeddingExtrasCache<T>& cache,
                              Mat<T>& X);
// dX (d_e, N): ∂loss/∂e_t after the extras in, before them out; dE (d_e, N) is workspace.
// dγ_emb, dβ_emb (d_e) and dW_s (d_e, token_types) are assigned: dW_s[:, 1] = Σ over every column of
// ∂loss/∂(e_t + W_s[:, 1]), the other segments' columns 0. Pass empty views for extras the model lacks.
template <class T>
void embedding_extras_backward(const ModelConfig& c, const ExtrasW<const T>& W, const EmbeddingExtrasCache<T>& cache,
                               Mat<T>& dX, Mat<T>& dE, Ref<T> dgamma, Ref<T> dbeta, Ref<T> dW_s);

// ---- Algorithm 4 lines 4–6, one head: Ṽ = V · softmax(masked Kᵀ Q / √d_attn) ---------------------

// A (ℓ_z, ℓ_x) = softmax(S/√d_attn) with S = Kᵀ Q and S[t_z, t_x] = −∞ where ¬Mask[t_z, t_x]:
// masked entries get weight exactly 0 (a column masked everywhere is all 0, as softmax_columns
// returns it). Vt (d_mid, ℓ_x) = V A. Q (d_attn, ℓ_x), K (d_attn, ℓ_z), V (d_mid, ℓ_z).
// mask (ℓ_z, ℓ_x) is Mask with its 0/1 entries as T (so that masking is vectorised).
// ALiBi (variant "alibi", the encyclopedia article): alibi_slope = m_h > 0 adds m_h·B[t_z, t_x] =
// −m_h·|t_z − t_x| to S/√d_attn before the softmax (row t_z and column t_x of the block as the
// sequence's positions); 0 adds nothing.
// Relative position bias (variant "relative", T5; issue 25): bias (ℓ_z, ℓ_x), when given, is added
// to S/√d_attn as it is (B[t_z, t_x] = W_rel[h, bucket(t_z − t_x)]); its gradient is ∇S·√d_attn.
template <class T>
void attention_forward(CRef<T> Q, CRef<T> K, CRef<T> V, CRef<T> mask, Ref<T> A, Ref<T> Vt, T alibi_slope = 0,
                       const Mat<T>* bias = nullptr);
// dQ, dK, dV assigned; dS (ℓ_z, ℓ_x) is workspace. Masked entries get zero gradient.
template <class T>
void attention_backward(CRef<T> dVt, CRef<T> Q, CRef<T> K, CRef<T> V, CRef<T> A, Ref<T> dS, Ref<T> dQ, Ref<T> dK,
                        Ref<T> dV);

// ---- Algorithm 4-R lines 4–13, one head (random-feature attention, not in the paper) --------------
// core/gradients/grad_random_features.cpp. ω (D, d_attn) is the head's fixed directions (rf_omega).
// mask (ℓ_z, ℓ_x) as attention_forward's; it must give each query a prefix of the keys (key_prefixes).
template <class T>
void rf_attention_forward(CRef<T> Q, CRef<T> K, CRef<T> V, CRef<T> mask, const Mat<double>& omega, Ref<T> Vt);
// dQ, dK, dV assigned (recomputing the forward's sums; no cache beyond Q, K, V). ω gets no gradient.
template <class T>
void rf_attention_backward(CRef<T> dVt, CRef<T> Q, CRef<T> K, CRef<T> V, CRef<T> mask, const Mat<double>& omega,
                           Ref<T> dQ, Ref<T> dK, Ref<T> dV);

// ---- Algorithm 5 over a batch: X ← X + MHAttention(X̃, Z | W, Mask) -------------------------------
//
// B sequences (or sequence pairs), each padded: query sequence b is the columns b·ℓ_x … b·ℓ_x+ℓ_x−1
// of X̃, its context the columns b·ℓ_z … of Z (self-attention: Z = X̃, ℓ_z = ℓ_x = ℓ). Key padding:
// context b has real length ℓ_b ≤ ℓ_z, and its keys t_z > ℓ_b are masked for every query
// (Alg. 4 L5 with Mask_b[t_z, t_x] = Mask[t_z, t_x] · [[t_z ≤ ℓ_b]]): their weight is exactly 0,
// so each real column equals the unpadded computation. A query whose every key is masked gets
// all-zero weights (Y = 0). key_lengths (B) gives ℓ_b, 0 ≤ ℓ_b ≤ ℓ_z; nullptr means no padding
// (ℓ_b = ℓ_z). Padded query columns are computed too (finite values that nothing should use).

// Self-attention (Alg. 10 L6, Alg. 9 L5, Alg. 8 L5 and L14): Z = X̃, lines 1–3 of every head as
// ONE product with the heads' W_q, W_k, W_v stacked. With H_kv < H (a variant) each query head
// stacks the K, V of its key/value head g(h) (views of the same storage; their gradients add up).
//
// The position variants of self-attention (never of cross-attention):
//   RoPE: after lines 1–2's bias, coordinates (2i−1, 2i) of Q[:, t] and K[:, t] are rotated by
//         t·θ_i, θ_i = rope_base^{−2(i−1)/d_attn}, t the position within the sequence;
//   ALiBi: head h adds m_h·B, m_h = 2^{−8h/H}, to the scaled scores (attention_forward);
//   relative bias (issue 25): head h adds B = W_rel[h, bucket(t_z − t_x)] to them; the backward
//         assigns ∇W_rel[h, k] = Σ over the cells of bucket k of ∇S·√d_attn (masked cells give 0).
// (AttentionOptions and attention_options(c, self) are Algorithm 4's, core/algorithms/algorithms.hpp:
// rope_base > 0 and alibi are what the batched self-attention reads.)

template <class T>
struct MHAttentionCache {
  Mat<T> W_qkv;           // (H·(2·d_attn + d_mid), d_e) W^1_q … W^H_q, W^1_k … W^H_k, W^1_v … W^H_v stacked
  Mat<T> b_qkv;           // (H·(2·d_attn + d_mid), 1)  the biases, stacked the same way
  Mat<T> mask;            // (ℓ, ℓ) Mask as 0/1 values of T, or (ℓ, B·ℓ): sequence b's own at columns b·ℓ …
  AttentionOptions variant;
  Mat<T> rope_cos, rope_sin;  // (d_attn/2, ℓ) cos(tθ_i), sin(tθ_i) under RoPE, else unused
  std::vector<int> keys;  // (B) ℓ_b, the real keys of sequence b (ℓ without key padding)
  Mat<T> QKV;             // (H·(2·d_attn + d_mid), N)  Alg. 4 lines 1–3 for every head: [Q^1;…;Q^H; K^1;…; V^H]
  Mat<T> A;               // (ℓ, B·H·ℓ) softmax(S/√d_attn) of sequence b, head h at columns (b·H + h − 1)·ℓ …;
                          //            rows t_z > ℓ_b (padded keys) are exactly 0
  Mat<T> Y;               // (H·d_mid, N) [Y^1; …; Y^H], Alg. 5 line 3
};
template <class T>
struct MHAttentionWorkspace {
  Mat<T> dY;      // (H·d_mid, N)
  Mat<T> dQKV;    // (H·(2·d_attn + d_mid), N)
  Mat<T> dS;      // (ℓ, ℓ)
  Mat<T> dW_qkv;  // (H·(2·d_attn + d_mid), d_e)
  Mat<T> db_qkv;  // (H·(2·d_attn + d_mid), 1)
};
// Xt (d_e, B·ℓ) is X̃; mask (ℓ, ℓ) applies within each sequence, or (ℓ, B·ℓ) gives each sequence
// its own (the prefix-LM variant); key_lengths (B) or nullptr as above (BERT and the encoder pass
// their lengths with a bidirectional mask). Adds W_o Y + b_o 1ᵀ to X (d_e, B·ℓ).
template <class T>
void mh_attention_forward(CRef<T> Xt, const MHAttentionW<const T>& W, int B, int l, const Mask& mask,
                          MHAttentionCache<T>& cache, Ref<T> X, const std::vector<int>* key_lengths = nullptr,
                          const AttentionOptions& variant = {});
// dX is ∂loss/∂(X + MHAttention(X̃)); dXt (d_e, B·ℓ) = ∂loss/∂X̃ is assigned, and every dW.
// The key padding is the forward's (kept in cache.keys).
template <class T>
void mh_attention_backward(CRef<T> dX, CRef<T> Xt, const MHAttentionW<const T>& W, int B, int l,
                           const MHAttentionCache<T>& cache, MHAttentionWorkspace<T>& ws, MHAttentionW<T>& dW,
                           Ref<T> dXt);

// Cross-attention (Alg. 8 L16: X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1)): queries from X̃,
// keys and values from Z, the encoder's output; Mask ≡ 1 apart from Z's key padding. Line 1 of
// every head is one product over X̃, lines 2–3 one product over Z with W_k and W_v stacked.
template <class T>
struct MHCrossAttentionCache {
  Mat<T> W_q;             // (H·d_attn, d_x)              W^1_q … W^H_q stacked
  Mat<T> b_q;             // (H·d_attn, 1)                b^1_q … b^H_q
  Mat<T> W_kv;            // (H·(d_attn + d_mid), d_z)    W^1_k … W^H_k, W^1_v … W^H_v stacked
  Mat<T> b_kv;            // (H·(d_attn + d_mid), 1)      the biases, stacked the same way
  Mat<T> mask;            // (ℓ_z, ℓ_x) Mask ≡ 1 as values of T
  AttentionOptions variant;  // random-feature attention's D, seed (no position variant in cross-attention)
  std::vector<int> keys;  // (B) ℓ_b, the real length of context b (ℓ_z without key padding)
  Mat<T> Q;               // (H·d_attn, B·ℓ_x)            Alg. 4 line 1 for every head: [Q^1;…;Q^H]
  Mat<T> KV;              // (H·(d_attn + d_mid), B·ℓ_z)  Alg. 4 lines 2–3: [K^1;…;K^H; V^1;…;V^H]
  Mat<T> A;               // (ℓ_z, B·H·ℓ_x) softmax(S/√d_attn) of pair b, head h at columns (b·H + h − 1)·ℓ_x …;
                          //                rows t_z > ℓ_b (padded keys) are exactly 0
  Mat<T> Y;               // (H·d_mid, B·ℓ_x) [Y^1; …; Y^H], Alg. 5 line 3
};
template <class T>
struct MHCrossAttentionWorkspace {
  Mat<T> dY;     // (H·d_mid, B·ℓ_x)
  Mat<T> dQ;     // (H·d_attn, B·ℓ_x)
  Mat<T> dKV;    // (H·(d_attn + d_mid), B·ℓ_z)
  Mat<T> dS;     // (ℓ_z, ℓ_x)
  Mat<T> dW_q;   // (H·d_attn, d_x)
  Mat<T> db_q;   // (H·d_attn, 1)
  Mat<T> dW_kv;  // (H·(d_attn + d_mid), d_z)
  Mat<T> db_kv;  // (H·(d_attn + d_mid), 1)
};
// Xt (d_x, B·ℓ_x) is X̃ (the queries' side), Z (d_z, B·ℓ_z) the context; z_lengths (B) the real
// length ℓ_b ≤ ℓ_z of each context, or nullptr. Adds W_o Y + b_o 1ᵀ to X (d_out, B·ℓ_x).
template <class T>
void mh_cross_attention_forward(CRef<T> Xt, CRef<T> Z, const MHAttentionW<const T>& W, int B, int l_x, int l_z,
                                MHCrossAttentionCache<T>& cache, Ref<T> X, const std::vector<int>* z_lengths = nullptr,
                                const AttentionOptions& variant = {});
// dX is ∂loss/∂(X + MHAttention(X̃, Z)); assigns dXt (d_x, B·ℓ_x) = ∂loss/∂X̃,
// dZ (d_z, B·ℓ_z) = ∂loss/∂Z (zero in padded columns) and every dW.
template <class T>
void mh_cross_attention_backward(CRef<T> dX, CRef<T> Xt, CRef<T> Z, const MHAttentionW<const T>& W, int B, int l_x,
                                 int l_z, const MHCrossAttentionCache<T>& cache, MHCrossAttentionWorkspace<T>& ws,
                                 MHAttentionW<T>& dW, Ref<T> dXt, Ref<T> dZ);

// ---- Alg. 10 line 8 (GELU) and Alg. 8 line 7 (ReLU): X ← X + W_mlp2 act(W_mlp1 X̃ + b_mlp1 1ᵀ) + b_mlp2 1ᵀ
// Variants: act = gelu_tanh (GPT-2), or SwiGLU (the encyclopedia article):
//   X ← X + W_mlp2 (SiLU(W_gate X̃ + b_gate 1ᵀ) ⊙ (W_mlp1 X̃ + b_mlp1 1ᵀ)) + b_mlp2 1ᵀ, SiLU(x) = x·σ(x).

template <class T>
struct MlpCache {
  Mat<T> H_pre;  // (d_mlp, N) W_mlp1 X̃ + b_mlp1 1ᵀ
  Mat<T> G_pre;  // (d_mlp, N) W_gate X̃ + b_gate 1ᵀ (SwiGLU only)
  Mat<T> H_act;  // (d_mlp, N) act(H_pre), or SiLU(G_pre) ⊙ H_pre
};
template <class T>
struct MlpWorkspace {
  Mat<T> dH;  // (d_mlp, N) ∂loss/∂H_pre
  Mat<T> dG;  // (d_mlp, N) ∂loss/∂G_pre (SwiGLU only)
};
// Adds the MLP's output to X (d_e, N). W_gate, b_gate are empty unless act is SwiGLU.
template <class T>
void mlp_forward(CRef<T> Xt, CRef<T> W_mlp1, CRef<T> b_mlp1, CRef<T> W_mlp2, CRef<T> b_mlp2, CRef<T> W_gate,
                 CRef<T> b_gate, Activation act, MlpCache<T>& cache, Ref<T> X);
// dX = ∂loss/∂(X + MLP(X̃)); assigns dXt (d_e, N) and the parameter gradients (dW_gate, db_gate
// only under SwiGLU, else empty). GELU′(x) = Φ(x) + x·φ(x) (exact erf form), ReLU′(x) = [[x > 0]].
template <class T>
void mlp_backward(CRef<T> dX, CRef<T> Xt, CRef<T> W_mlp1, CRef<T> W_mlp2, CRef<T> W_gate, Activation act,
                  const MlpCache<T>& cache, MlpWorkspace<T>& ws, Ref<T> dW_mlp1, Ref<T> db_mlp1, Ref<T> dW_mlp2,
                  Ref<T> db_mlp2, Ref<T> dW_gate, Ref<T> db_gate, Ref<T> dXt);

// ---- Alg. 10 line 11 and Alg. 13 line 5: P = softmax(W_u X), loss = Σ_t w_t · (−log P[y_t, t]) --
// Not in the paper (BERT checkpoints' masked-LM head): P = softmax(W_u X + b_u 1ᵀ) with a bias b_u.

// targets (N): y_t = x[t+1] (1-based), 0 where position t has no target; weights (N): w_t,
// 1 for the paper's summed loss, 1/#targets for the mean, 0 where there is no target.
template <class T>
struct LossCache {
  Mat<T> P;       // (N_V, N) softmax(W_u X), Alg. 10 line 11
  Vec<T> losses;  // (N) −log P[y_t, t] where a target exists, else 0
};
// Returns the loss. X (d_e, N), W_u (N_V, d_e), b_u (N_V) or empty (the paper: no bias).
template <class T>
T loss_forward(CRef<T> X, CRef<T> W_u, CRef<T> b_u, const std::vector<int>& targets, const Vec<T>& weights,
               LossCache<T>& cache);
// dW_u, db_u (when not empty), dX assigned; dlogits (N_V, N) is workspace:
// ∂loss/∂(W_u X + b_u 1ᵀ) = w_t (P[:, t] − onehot(y_t)), and db_u = Σ_t of its columns.
template <class T>
void loss_backward(CRef<T> X, CRef<T> W_u, const std::vector<int>& targets, const Vec<T>& weights,
                   const LossCache<T>& cache, Mat<T>& dlogits, Ref<T> dW_u, Ref<T> db_u, Ref<T> dX);

// ---- The whole model: Algorithm 10 over a batch, with the loss of Algorithm 13 line 5 ------------

// A minibatch for any architecture: B sequences padded to ℓ tokens (and, for the
// encoder-decoder, B contexts padded to ℓ_z tokens), with the target of every position.
// Positions past a sequence's length ℓ_n are padding: attention never lets a real position see
// them (causal masks, or key-padding masks), and they carry no loss.
struct Batch {
  int B = 0;
  int l = 0;
  Tokens tokens;             // (B·ℓ) 1-based ids of the input x (BERT: x̃), sequence b at [b·ℓ, b·ℓ + ℓ)
  std::vector<int> lengths;  // (B) ℓ_n of each sequence, 1 ≤ ℓ_n ≤ ℓ
  // (B·ℓ) the id that position t's column of P is scored against, 0 where there is no loss
  // term: x[t+1] for t < ℓ_n (Algorithms 11 and 13), x[t] for t ∈ T̃ (Algorithm 12).
  std::vector<int> targets;
  int l_z = 0;                 // the context's padded length (encoder-decoder), else 0
  Tokens z_tokens;             // (B·ℓ_z) 1-based ids of the contexts z
  std::vector<int> z_lengths;  // (B) ℓ_z of each context
  // The number of loss terms (positions with a target).
  int n_targets() const;
  // The number of real (unpadded) tokens of x, Σ_n ℓ_n.
  int real_tokens() const;
};
// Algorithm 13's minibatch: each sequence padded to ℓ (≥ every length) with `pad` (a valid id),
// position t targeting x[t+1] for t = 1 … ℓ_n − 1. Throws sf::Error on an empty sequence or one
// longer than ℓ.
Batch make_batch(const std::vector<Tokens>& xs, int l, int pad);
// Only the sequences xs[i] for i in `pick`, in that order, written into `b` (whose buffers are
// reused: a batch of the same shape allocates nothing).
void make_batch(const std::vector<Tokens>& xs, const std::vector<size_t>& pick, int l, int pad, Batch& b);
// The shared part of every architecture's batch: x (or x̃) padded, lengths set, no targets yet.
// `side` says which sequence the messages name ("a training sequence", "a context z", …).
void pad_sequences(const std::vector<const Tokens*>& xs, int l, int pad, const char* side, Tokens& tokens,
                   std::vector<int>& lengths);
// Next-token targets (Algorithms 11 and 13): position t of sequence b targets x_b[t+1] for
// t = 1 … ℓ_b − 1, nothing after. Needs b.B, b.l, b.tokens and b.lengths.
void next_token_targets(Batch& b);

// Prefix-LM (variant mask "prefix", the encyclopedia article): Mask_b[t_z, t_x] = [[t_z ≤ max(t_x, p_b)]]
// of each sequence b (p_b: its first prefix_separator, prefix_position), side by side: (ℓ, B·ℓ).
Mask prefix_masks(const Batch& b, const ModelConfig& c);

// ---- One sub-layer: a residual line and its norm, pre-LN or post-LN -------------------------------
//   pre-LN  (Alg. 10 L5–L8):      X̃[:, t] ← norm(X[:, t] | γ, β);   X ← X + f(X̃)
//   post-LN (Alg. 9, Alg. 8):     X ← X + f(X);                      X[:, t] ← norm(X[:, t] | γ, β)
// (norm_position: GPT-1's post-LN GPT, or pre-LN BERT and encoder-decoder, are variants.)

// What every layer reads from the configuration.
struct LayerSpec {
  NormPosition position = NormPosition::Pre;
  Norm norm = Norm::LayerNorm;
  double eps = 1e-5;
  Activation act = Activation::GELU;
  AttentionOptions attn;  // self-attention's position variant
};
LayerSpec layer_spec(const ModelConfig& c);

template <class T>
struct SubLayerCache {
  NormPosition position = NormPosition::Pre;
  Mat<T> X;              // (d_e, N) the stream before the sub-layer (post-LN: f's input)
  Mat<T> Xt;             // (d_e, N) pre-LN: X̃ = norm(X), f's input
  Mat<T> R;              // (d_e, N) post-LN: X + f(X), the norm's input
  LayerNormCache<T> ln;  // the norm line
  // f's input.
  const Mat<T>& input() const { return position == NormPosition::Pre ? Xt : X; }
};

// The gradient of one stream (the decoder's X or the encoder's Z) at the current point of the
// backward, and its two scratch buffers.
template <class T>
struct StreamGrad {
  Mat<T> dX;  // (d_e, N) ∂loss/∂X
  Mat<T> dR;  // (d_e, N) post-LN: ∂loss/∂(X + f(X)), below the norm line
  Mat<T> dT;  // (d_e, N) ∂loss/∂(f's input) through the branch f
};

// One layer of Algorithm 10 (lines 5–8), Algorithm 9 (lines 5–8) or the encoder of Algorithm 8
// (lines 5–8): self-attention (γ¹, β¹) then the MLP (γ², β²), each a sub-layer.
template <class T>
struct LayerCache {
  SubLayerCache<T> attn_ln;  // Alg. 10 L5–6 (Alg. 9, Alg. 8: L5–6)
  MHAttentionCache<T> attn;  // the self-attention line
  SubLayerCache<T> mlp_ln;   // Alg. 10 L7–8 (Alg. 9, Alg. 8: L7–8)
  MlpCache<T> mlp;           // the MLP line
};
// X (d_e, B·ℓ) ← the layer applied to every sequence; mask (ℓ, ℓ) or (ℓ, B·ℓ); key_lengths or nullptr.
template <class T>
void layer_forward(const LayerSpec& s, const LayerW<const T>& W, int B, int l, const Mask& mask,
                   const std::vector<int>* key_lengths, LayerCache<T>& lc, Mat<T>& X);
// g.dX: ∂loss/∂X after the layer in, before it out; every dW assigned.
template <class T>
void layer_backward(const LayerSpec& s, const LayerW<const T>& W, int B, int l, const LayerCache<T>& lc,
                    StreamGrad<T>& g, MlpWorkspace<T>& mlp, MHAttentionWorkspace<T>& attn, LayerW<T>& dW);

template <class T>
struct GptCache {
  int B = 0, l = 0;
  Tokens tokens;                      // (B·ℓ) the batch's ids
  std::vector<int> lengths;           // (B) ℓ_b (key padding)
  Mask mask;                          // (ℓ, ℓ) Mask[t, t′] = [[t ≤ t′]], or (ℓ, B·ℓ) the prefix-LM masks
  Mat<T> W_p;                         // (d_e, ℓ_max) the fixed sinusoid (variant "sinusoidal"), else empty
  Mat<T> W_u;                         // (N_V, d_e) W_eᵀ when tied (variant), else empty
  EmbeddingExtrasCache<T> extras;     // line 2's extras (not in the paper: BERT checkpoints)
  Mat<T> X;                           // (d_e, N) the residual stream; after the forward, X before line 10
  std::vector<LayerCache<T>> layers;  // (L)
  LayerNormCache<T> ln_f;             // line 10 (pre-LN; GPT-1's post-LN has none)
  Mat<T> X_f;                         // (d_e, N) after line 10 (post-LN: X)
  std::vector<int> targets;           // (N) x[t+1] where position t predicts one, else 0
  Vec<T> weights;                     // (N) the weight of each position's loss term
  LossCache<T> loss;                  // line 11 and the loss
};

// ∂loss/∂X of the residual stream as it enters each layer, kept by a backward when asked (for
// inspection: stepformer-cli backward): X[l − 1] as X enters layer l = 1 … L, and X[L] after the last
// layer: pre-LN, before the stack's final norm; post-LN, after the last layer's last norm. The
// encoder-decoder keeps its decoder's stream in X (L_dec + 1) and its encoder's in Z (L_enc + 1).
template <class T>
struct ResidualGradients {
  std::vector<Mat<T>> X;
  std::vector<Mat<T>> Z;
};

template <class T>
struct GptWorkspace {
  StreamGrad<T> s;  // the residual stream's gradient
  Mat<T> dX_f;      // (d_e, N) ∂loss/∂X after line 10
  Mat<T> dlogits;   // (N_V, N)
  Mat<T> dW_u;      // (N_V, d_e) ∂loss/∂W_u when tied (added into ∇W_e)
  Mat<T> dE;        // (d_e, N) line 2's extras: ∂loss/∂e_t before the embedding norm
  MlpWorkspace<T> mlp;
  MHAttentionWorkspace<T> attn;
};

// Forward pass of Algorithm 10 on every sequence of the batch, then the loss
//   loss = loss_weight · Σ_b Σ_{t=1}^{ℓ_b−1} −log P_b[x_b[t+1], t]   (batch.targets)
// with loss_weight = 1 for the paper's summed loss (Algorithm 13 line 5) and 1/batch.targets()
// for the mean over predicted tokens (minibatch practice). Returns the loss.
// cache.loss.P[:, b·ℓ + t − 1] is DTransformer(x_b)[:, t] for t ≤ ℓ_b.
template <class T>
T dtransformer_forward(const ModelConfig& c, const GptW<const T>& W, const Batch& batch, T loss_weight,
                       GptCache<T>& cache);
// ∇loss(θ) into dW (views of a gradient buffer with θ's table): every tensor assigned. With `kept`,
// also ∂loss/∂X entering each layer (ResidualGradients::X, L + 1 matrices (d_e, N)).
template <class T>
void dtransformer_backward(const ModelConfig& c, const GptW<const T>& W, const GptCache<T>& cache,
                           GptWorkspace<T>& ws, GptW<T>& dW, ResidualGradients<T>* kept = nullptr);

// Everything one evaluation of loss(θ) and ∇loss(θ) needs, allocated once and reused.
// Not copyable or movable: dW views `grad`.
template <class T>
struct GptGradient {
  explicit GptGradient(const ParamTable& table);
  GptGradient(const GptGradient&) = delete;
  GptGradient& operator=(const GptGradient&) = delete;

  GptCache<T> cache;
  GptWorkspace<T> ws;
  // (table.total()) ∇loss(θ), in θ's layout. Aligned like Eigen's own matrices, so that
  // vectorised sums over it (norms) add in the same order in every run: resumed runs then
  // repeat an uninterrupted one bitwise.
  std::vector<T, Eigen::aligned_allocator<T>> grad;
  GptW<T> dW;  // views of grad

  // dtransformer_forward, then dtransformer_backward into grad. Returns the loss.
  T loss_and_gradient(const ModelConfig& c, const GptW<const T>& W, const Batch& batch, T loss_weight);
};

}  // namespace sf
