// The paper's algorithms, one function per algorithm, one file per algorithm
// (core/algNN_*.cpp). All are templated on the scalar (float for the app, double for
// gradient checks) and take an optional Tracer (nullptr: tracing off).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>

#include "core/algorithms/block_table.hpp"
#include "core/algorithms/sampling.hpp"
#include "core/experiments/patch_point.hpp"
#include "core/model/params.hpp"
#include "core/trace/trace.hpp"

namespace sf {

// Eq. (2): softmax of a matrix normalises each column. −∞ entries get weight exactly 0.
// A column that is −∞ everywhere has no distribution: it is returned as all zeros.
template <class T> Mat<T> softmax_columns(const Mat<T>& A);

// Eq. (5): GELU(x) = x·Φ(x), the exact erf form (vectorised).
template <class T> Mat<T> gelu(const Mat<T>& A);
template <class T> Mat<T> relu(const Mat<T>& A);
// Variant (GPT-2): GELU's tanh approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
template <class T> Mat<T> gelu_tanh(const Mat<T>& A);
// Variant (SwiGLU's gate, encyclopedia article 004): SiLU(x) = x·σ(x).
template <class T> Mat<T> silu(const Mat<T>& A);

// Eq. (3): Mask[t_z, t_x] = 1 (bidirectional) or [[t_z ≤ t_x]] (unidirectional).
Mask bidirectional_mask(int l_z, int l_x);
Mask unidirectional_mask(int l_z, int l_x);
// Variant (prefix-LM, encyclopedia article 004): Mask[t_z, t_x] = [[t_z ≤ max(t_x, p)]] (ℓ×ℓ);
// p = 0 is the causal mask.
Mask prefix_mask(int l, int p);
// Variant (sliding-window attention, issue 25, encyclopedia article 004): a self-attention's square
// (ℓ, ℓ) mask ∧ [[|t_z − t_x| ≤ w]]: under the causal mask t_x − w ≤ t_z ≤ t_x (w + 1 keys), under
// the bidirectional one |t_x − t_z| ≤ w. w = 0 (off) returns the mask unchanged.
Mask windowed(Mask m, int w);
// p: the 1-based position of the first c.prefix_separator in x, 0 when x has none.
int prefix_position(const Tokens& x, const ModelConfig& c);

// Algorithm 1: e = W_e[:, v]. v is a 1-based token id.
template <class T> Vec<T> token_embedding(int v, const MapM<const T>& W_e, Tracer* tr = nullptr);

// Algorithm 2: e_p = W_p[:, ℓ]. ℓ is a 1-based position.
template <class T> Vec<T> positional_embedding(int l, const MapM<const T>& W_p, Tracer* tr = nullptr);

// Algorithm 3: basic single-query attention. E holds the context vectors e_t as columns.
template <class T>
Vec<T> basic_attention(const Vec<T>& e, const Mat<T>& E, const AttentionHeadW<const T>& W, Tracer* tr = nullptr);

// What a self-attention adds under the position variants (encyclopedia article 004), and which
// key/value head a query head reads. The default is the paper's attention.
struct AttentionOptions {
  double rope_base = 0;  // > 0: RoPE, Q and K columns rotated by t·θ_i, θ_i = rope_base^{−2(i−1)/d_attn}
  bool alibi = false;    // ALiBi: line 6 adds m_h·B, B[t_z, t_x] = −|t_z − t_x|
  double m = 0;          // ALiBi's m_h = 2^{−8h/H} of this head (mh_attention sets it per head)
  int H_kv = 0;          // key/value heads (0: one per query head); Algorithm 5 binds g(h)
  int x_pos0 = 0;        // positions before X's first column (KV cache: the new column is t = x_pos0 + 1)
  int z_pos0 = 0;        // positions before Z's first column
  // Experiments (core/experiments/): Algorithm 4's patch points for this call, with the calling
  // line of the forward algorithm, the layer and (set per head by Algorithm 5) the head.
  PatchSite patch;
  // Not in the paper (config "attention": "flash"): > 0 makes Algorithm 5's line 2 run FlashAttention
  // (Algorithm 4-F) with query blocks of flash_B_r columns and key blocks of flash_B_c tokens.
  int flash_B_r = 0, flash_B_c = 0;
  // Not in the paper (config "attention": "random_features"): rf_D > 0 makes Algorithm 5's line 2 run
  // random-feature attention (Algorithm 4-R) with D = rf_D features of head h drawn as
  // rf_omega(rf_D, d_attn, rf_seed, h, rf_orthogonal) (core/algorithms/random_features.hpp).
  int rf_D = 0;
  int rf_seed = 1;
  bool rf_orthogonal = false;
  // Not in the paper (position "relative", T5; issue 25): rel_buckets > 0 adds B[t_z, t_x] =
  // rel_table[relative_bucket(t_z − t_x, …)] to line 6's S/√d_attn (self-attention only).
  // rel_bidirectional: T5's encoder buckets (BERT: each sign of t_z − t_x has half of them); else
  // its decoder's (GPT: the distance t_x − t_z, keys after the query share bucket 0).
  int rel_buckets = 0, rel_max_distance = 0;
  bool rel_bidirectional = false;
  std::vector<double> rel_table;  // this head's W_rel[h, :] (mh_attention sets it per head)
  bool relative() const { return rel_buckets > 0; }
  bool positional() const { return rope_base > 0 || alibi || relative(); }
  bool flash() const { return flash_B_r > 0 && flash_B_c > 0; }
  bool random_features() const { return rf_D > 0; }
};
// The variant of a self-attention (self = true) or a cross-attention (no RoPE, no ALiBi) of c.
AttentionOptions attention_options(const ModelConfig& c, bool self);
// RoPE: rotates coordinates (2i−1, 2i) of column j of A (the token at t = pos0 + j) by t·θ_i.
template <class T> void rope_rotate(Mat<T>& A, int pos0, double rope_base);
// ALiBi's B (ℓ_z, ℓ_x): B[t_z, t_x] = −|(z_pos0 + t_z) − (x_pos0 + t_x)|.
template <class T> Mat<T> alibi_bias(int l_z, int l_x, int z_pos0, int x_pos0);
// T5's bucket (0-based, < buckets) of the relative position rel = t_z − t_x: bidirectional, each
// sign gets buckets/2 (keys after the query from buckets/2 on), else only t_x − t_z ≥ 0 counts
// (rel > 0 is bucket 0). Of the n buckets of a sign, distances d < n/2 are exact; larger ones
// share n/2 + ⌊log(d/(n/2)) / log(max_distance/(n/2)) · (n − n/2)⌋, capped at n − 1.
int relative_bucket(int rel, bool bidirectional, int buckets, int max_distance);
// The relative bias B (ℓ_z, ℓ_x) of one head: B[t_z, t_x] = av.rel_table[bucket((z_pos0 + t_z) −
// (x_pos0 + t_x))], constant along each diagonal (a Toeplitz matrix).
template <class T> Mat<T> relative_bias(const AttentionOptions& av, int l_z, int l_x);
// Each cell's bucket (ℓ_z, ℓ_x), as relative_bias reads them (the gradient sums ∇B over them).
Eigen::MatrixXi relative_buckets(const AttentionOptions& av, int l_z, int l_x);
// av with head h's (1-based) row W_rel[h, :] as rel_table under the relative bias; av itself
// otherwise. Throws sf::Error when W has no W_rel of H×rel_buckets.
template <class T> AttentionOptions relative_head(AttentionOptions av, const MHAttentionW<const T>& W, int h);

// Everything Algorithm 4 computes, kept (never overwritten) for viewing and for backward.
template <class T>
struct AttentionRecord {
  Mat<T> Q;         // (d_attn, ℓ_x)  line 1
  Mat<T> K;         // (d_attn, ℓ_z)  line 2
  Mat<T> V;         // (d_out, ℓ_z)   line 3
  Mat<T> S;         // (ℓ_z, ℓ_x)     line 4, before masking
  Mat<T> S_masked;  // (ℓ_z, ℓ_x)     line 5, −∞ where ¬Mask
  Mat<T> A;         // (ℓ_z, ℓ_x)     line 6, softmax(S/√d_attn)
  Mat<T> Vt;        // (d_out, ℓ_x)   line 6, Ṽ = V·A
  Mat<T> Q_pre;     // (d_attn, ℓ_x)  RoPE only: line 1 before the rotation (else empty)
  Mat<T> K_pre;     // (d_attn, ℓ_z)  RoPE only: line 2 before the rotation (else empty)
  Mat<T> B;         // (ℓ_z, ℓ_x)     ALiBi: the distance bias B; relative bias: B itself (else empty)
  T m = 0;          // ALiBi only: the head's slope m_h (relative bias: 1, B is added as it is)
  bool relative = false;  // B is the learned relative bias (T5, issue 25), not ALiBi's
};

// Algorithm 4: Ṽ ← Attention(X, Z | W_qkv, Mask). X (d_x, ℓ_x), Z (d_z, ℓ_z).
template <class T>
Mat<T> attention(const Mat<T>& X, const Mat<T>& Z, const AttentionHeadW<const T>& W, const Mask& mask,
                 Tracer* tr = nullptr, AttentionRecord<T>* rec = nullptr, const AttentionOptions& av = {});

// Algorithm 4-F (NOT IN THE PAPER; Dao et al. 2022, encyclopedia article 004):
// Ṽ ← FlashAttention(X, Z | W_qkv, Mask; B_r, B_c): Algorithm 4's Ṽ (equal up to rounding) over query
// blocks of B_r columns and key blocks of B_c tokens with an online softmax, never holding the
// ℓ_z×ℓ_x matrix S. Blocks that the mask rules out entirely are skipped. A query column whose keys are
// all masked gives a 0 column (as Algorithm 4). RoPE and ALiBi as Algorithm 4 (av); no patch points
// (throws if av.patch has experiments). Throws sf::Error for B_r or B_c < 1 or a Mask of the wrong size.
// Traced as algs::flash_attention (lines::flash_attention): each block's S_blk, m, ℓ and O, and on
// the last line max |Ṽ_flash − Ṽ| against Algorithm 4 (run untraced) and the memory each needs.
template <class T>
Mat<T> flash_attention(const Mat<T>& X, const Mat<T>& Z, const AttentionHeadW<const T>& W, const Mask& mask,
                       int B_r, int B_c, Tracer* tr = nullptr, const AttentionOptions& av = {});

// Algorithm 4-R (NOT IN THE PAPER; Peng et al. 2021, Performer, encyclopedia article 004):
// Ṽ ← RFAttention(X, Z | W_qkv, Mask; D, ω): a random-feature estimate of Algorithm 4's Ṽ in time
// linear in ℓ_x + ℓ_z, never building an ℓ_z×ℓ_x matrix (core/algorithms/random_features.hpp says
// what it estimates and how). ω (D, d_attn) is the head's fixed random directions (rf_omega). RoPE as
// Algorithm 4 (av); ALiBi cannot be expressed (a bias on scores 4-R never forms) and patch points
// do not exist: both throw sf::Error, as do masks that are not per-query key prefixes (key_prefixes).
// Traced as algs::random_feature_attention: φ(Q), φ(K), κ, the running S_φ and s_φ, each query's
// numerator and denominator, and on the last line max |Ṽ_rfa − Ṽ| against Algorithm 4 (untraced)
// with the implied weights (view only) and their error against softmax's.
template <class T>
Mat<T> random_feature_attention(const Mat<T>& X, const Mat<T>& Z, const AttentionHeadW<const T>& W, const Mask& mask,
                                const Mat<double>& omega, Tracer* tr = nullptr, const AttentionOptions& av = {});

// Algorithm 5: Ṽ ← MHAttention(X, Z | W, Mask); all heads, then W_o Y + b_o 1ᵀ.
// `recs`, when given, receives each head's AttentionRecord.
template <class T>
Mat<T> mh_attention(const Mat<T>& X, const Mat<T>& Z, const MHAttentionW<const T>& W, const Mask& mask,
                    Tracer* tr = nullptr, std::vector<AttentionRecord<T>>* recs = nullptr,
                    const AttentionOptions& av = {});

// The trace events of Algorithm 4 for a completed record (what attention emits with a tracer),
// and of Algorithm 5 with its heads for results computed elsewhere, e.g. the GPU's teaching
// form (what mh_attention emits). No-ops without a tracer.
template <class T>
void trace_attention_record(Tracer* tr, const Mat<T>& X, const Mat<T>& Z, const AttentionHeadW<const T>& W,
                            const Mask& mask, const AttentionRecord<T>& r);
template <class T>
void trace_mh_attention_replay(Tracer* tr, const Mat<T>& X, const Mat<T>& Z, const MHAttentionW<const T>& W,
                               const Mask& mask, const std::vector<AttentionRecord<T>>& recs, const Mat<T>& Vt,
                               const AttentionOptions& av = {});

// Algorithm 6: ê ← layer_norm(e | γ, β), with √(v + ε) (the paper has no ε).
template <class T>
Vec<T> layer_norm(const Vec<T>& e, const MapV<const T>& gamma, const MapV<const T>& beta, T eps,
                  Tracer* tr = nullptr);
// "for t ∈ [ℓ]: Y[:, t] ← layer_norm(X[:, t] | γ, β)": one call per column (nested events).
template <class T>
Mat<T> layer_norm_columns(const Mat<T>& X, const MapV<const T>& gamma, const MapV<const T>& beta, T eps,
                          Tracer* tr = nullptr);
// Variant (RMSNorm, encyclopedia article 004): ê = e/√(Σ e[i]²/d_e + ε) ⊙ γ, traced as Algorithm 6
// without line 1 (no m) and without β.
template <class T>
Vec<T> rms_norm(const Vec<T>& e, const MapV<const T>& gamma, T eps, Tracer* tr = nullptr);
// "for t ∈ [ℓ]: Y[:, t] ← norm(X[:, t] | γ, β)" with c's norm (layer_norm or rms_norm) and ε.
template <class T>
Mat<T> norm_columns(const Mat<T>& X, const MapV<const T>& gamma, const MapV<const T>& beta, const ModelConfig& c,
                    Tracer* tr = nullptr);

// Algorithm 7: p = softmax(W_u e).
template <class T> Vec<T> unembedding(const Vec<T>& e, const MapM<const T>& W_u, Tracer* tr = nullptr);

// Another implementation of MHAttention (Algorithm 5) for the forward algorithms' attention lines
// (8's lines 5, 14, 16; 9's line 5; 10's line 6), e.g. the GPU's (gpu/): same arguments and result
// as mh_attention with the call's variant `av` (RoPE, ALiBi, H_kv, positions), untraced.
template <class T>
using MHAttentionFn = std::function<Mat<T>(const Mat<T>& X, const Mat<T>& Z, const MHAttentionW<const T>& W,
                                           const Mask& mask, const AttentionOptions& av)>;

// Not in the paper (seed 004; kv_cache.hpp): another implementation of the KV-cached step's
// MHAttention (Algorithm 5 for n new query columns X (d_x, n) over cached keys and values), e.g. the
// GPU's. K[h], V[h]: query head h's cached K (d_attn, ℓ_c) and V (d_mid, ℓ_c), after RoPE.
// append = true (a cached self-attention, Z = X): lines 2–3 for the new columns (RoPE at positions
// ℓ_c + 1 … ℓ_c + n) are appended to K[h], V[h], then lines 4–6 run over all ℓ_c + n keys with
// `mask` (ℓ_c + n, n), the new columns' part of the layer's mask. append = false (cross-attention
// over a cached Z): K, V as they are, mask (ℓ_c, n). Returns W_o Y + b_o 1ᵀ (d_out, n), untraced.
// av: the call's variant and, in av.patch.call / av.patch.l, the calling line and layer.
using CachedMHAttentionFn =
    std::function<MatF(const MatF& X, const MHAttentionW<const float>& W, std::vector<MatF>& K,
                       std::vector<MatF>& V, bool append, const Mask& mask, const AttentionOptions& av)>;

// Algorithm 10: P ← DTransformer(x | θ). x holds 1-based ids, 1 ≤ length(x) ≤ ℓ_max.
// Returns P ∈ (0,1)^{N_V×ℓ}. Throws sf::Error on an empty, too long or out-of-range x.
// `attn`, when set, computes line 6's MHAttention instead of core's mh_attention (then the
// trace, if any, has no events inside line 6), for every variant; never while `patches` are in
// force (experiments run on core's MHAttention).
// `patches`: experiments in force (core/experiments/), changing values at the patch points.
template <class T>
Mat<T> dtransformer(const Tokens& x, const ModelConfig& c, const GptW<const T>& W, Tracer* tr = nullptr,
                    const MHAttentionFn<T>& attn = {}, const Patches* patches = nullptr);

// Throws sf::Error naming the problem when x cannot be fed to the model.
void check_tokens(const Tokens& x, const ModelConfig& c);

// Algorithm 9: P ← ETransformer(x | θ), BERT (encoder-only, post-LN, Mask ≡ 1, GELU).
// Returns P ∈ (0,1)^{N_V×ℓ}. Throws sf::Error on an empty, too long or out-of-range x. `attn`
// as for dtransformer (line 5's MHAttention).
template <class T>
Mat<T> etransformer(const Tokens& x, const ModelConfig& c, const BertW<const T>& W, Tracer* tr = nullptr,
                    const MHAttentionFn<T>& attn = {}, const Patches* patches = nullptr);
// Algorithm 9 from line 3 on, inside an open frame of Algorithm 9: X (d_e, ℓ) is the embedded
// sequence [e_1, …, e_ℓ] of line 2 (BERT: W_e[:, x[t]] + W_p[:, t]; the vision transformer, arch
// "vit": its patches' W_patch p + b_patch, core/arch/vit.cpp). Traces lines 3–12; returns P.
template <class T>
Mat<T> etransformer_layers(Mat<T> X, const ModelConfig& c, const BertW<const T>& W, Tracer* tr,
                           const MHAttentionFn<T>& attn, const Patches* patches);

// Algorithm 8: P ← EDTransformer(z, x | θ), the encoder-decoder (post-LN, ReLU). Returns
// P ∈ (0,1)^{N_V×length(x)}. Throws sf::Error when z or x cannot be fed to the model.
template <class T>
Mat<T> edtransformer(const Tokens& z, const Tokens& x, const ModelConfig& c, const EdW<const T>& W,
                     Tracer* tr = nullptr, const Patches* patches = nullptr);

// Algorithm 14: y ← DInference(x, θ̂).
struct InferenceOptions {
  int l_gen = 16;      // ℓ_gen, tokens to generate
  double tau = 1.0;    // τ; 0 means argmax (q ∝ p^{1/τ} is undefined at 0)
  uint64_t seed = 1;   // the sampling generator's seed
  // Carpenter's COMPLETE_TEXT: when prompt + output outgrow ℓ_max, feed only the last ℓ_max
  // tokens. Off: generation refuses to go past ℓ_max (the paper's DTransformer cannot).
  bool trim_context = true;
  bool stop_at_eos = false;  // stop early when eos_token is drawn (not in the paper's Alg. 14)
  // Not in the paper (seed 004): keep each self-attention's K, V between steps and compute only the
  // new column (kv_cache.hpp). The same p, q and y up to float rounding.
  bool kv_cache = false;
  // Not in the paper: another implementation of Algorithm 5 (e.g. the GPU's) for line 3's
  // DTransformer (`attn`, as dtransformer takes it) and for the KV-cached step (`cached_attn`).
  // Unset: core's mh_attention. Untraced when set.
  MHAttentionFn<float> attn;
  CachedMHAttentionFn cached_attn;
  // Not in the paper (seed 004): top-k / top-p applied to q after τ (sampling.hpp), traced as
  // sub-steps of line 5. Off by default.
  TopKTopP cut;
  // Not in the paper (PagedAttention, block_table.hpp): with kv_cache, hold the cache in blocks of
  // this many tokens; each step's attention reads K, V gathered through the block table. 0: off.
  int kv_block_size = 0;
};
struct InferenceStep {  // one pass of lines 3–6, kept for the sampling panel
  VecF p;               // P[:, ℓ+i−1]
  VecF q;               // the q y was drawn from: q ∝ p^{1/τ}, renormalised over the kept set under top-k / top-p
  VecF q_tau;           // q ∝ p^{1/τ} before the top-k / top-p cut (= q when nothing is cut)
  int kept = 0;         // top-k / top-p: the tokens kept (the first `kept` by decreasing p); N_V when none is cut
  double kept_mass = 1.0;  // Σ of q_tau over the kept tokens
  BlockTable block_table;  // PagedAttention (kv_block_size > 0): the cache's block table after this step
  int y = 0;            // the sampled token (1-based)
  int context_start = 1;  // 1-based position in the full x where the model's input began
  bool cache_rebuilt = false;  // KV cache: this step recomputed every column (first step, trimmed, new prefix)
};
struct InferenceResult {
  Tokens y;  // x[ℓ+1 : ℓ+ℓ_gen]
  std::vector<InferenceStep> steps;
  std::string stopped;  // "" or why generation ended before ℓ_gen tokens
};
InferenceResult dinference(const Tokens& x, const Model& model, const InferenceOptions& opt, Tracer* tr = nullptr);

// Algorithm 15: x̂ ← EDInference(z, θ̂).
struct EdInferenceOptions {
  double tau = 1.0;    // τ; 0 means argmax
  uint64_t seed = 1;   // the sampling generator's seed
  // Not in the paper (the paper re-encodes z at every step): compute the encoder (lines 1–9 of
  // Algorithm 8) once and reuse Z. The same x̂.
  bool reuse_encoding = false;
  // Not in the paper (seed 004): encode z once, keep each decoder self-attention's K, V and each
  // cross-attention's K, V of Z between steps, compute only x̂'s new column (kv_cache.hpp).
  bool kv_cache = false;
  // Not in the paper: another implementation of Algorithm 5 (e.g. the GPU's) for line 4's
  // EDTransformer (`attn`: the encoder's and decoder's self-attention and the cross-attention)
  // and for the KV-cached step (`cached_attn`). Unset: core's mh_attention. Untraced when set.
  MHAttentionFn<float> attn;
  CachedMHAttentionFn cached_attn;
  // Not in the paper (seed 004): top-k / top-p applied to q after τ (sampling.hpp), traced as
  // sub-steps of line 6. Off by default.
  TopKTopP cut;
  // Not in the paper (PagedAttention, block_table.hpp): with kv_cache, hold the decoder's
  // self-attention K, V in blocks of this many tokens; each step reads them gathered through the
  // block table (the cross-attention's K, V of Z are not paged: see paged_kv.hpp). 0: off.
  int kv_block_size = 0;
};
struct EdInferenceResult {
  Tokens x_hat;                       // [bos_token, …] as the algorithm returns it
  std::vector<InferenceStep> steps;   // one per pass of lines 4–7
  std::string stopped;                // "eos_token" or why the loop was cut (the ℓ_max cap)
};
EdInferenceResult edinference(const Tokens& z, const Model& model, const EdInferenceOptions& opt,
                              Tracer* tr = nullptr);

}  // namespace sf
