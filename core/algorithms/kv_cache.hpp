// KV cache for Algorithm 14 (not in the paper; the encyclopedia article, seed 004): the K and V of
// every self-attention head of every layer of Algorithm 10 are kept between generation steps, so
// each step computes only the new token's column.
#pragma once
#include <vector>

#include "core/algorithms/algorithms.hpp"

namespace sf {

struct GptKvCache {
  std::vector<std::vector<MatF>> K;  // [layer][head] (d_attn, ℓ_z): after RoPE when on
  std::vector<std::vector<MatF>> V;  // [layer][head] (d_mid, ℓ_z)
  Tokens x;                          // the tokens whose columns are cached
  int p = 0;                         // the prefix position they were computed with (prefix-LM mask)
};

// The last column of DTransformer(x | θ) (Algorithm 10), P[:, ℓ], using and extending the cache:
// when the cache holds x without its last token (same prefix p), only column ℓ is computed;
// otherwise (first step, context trimmed, the prefix changed) the cache is rebuilt from all of x
// and *rebuilt is set. Equals dtransformer(x, …).col(ℓ − 1) up to rounding, for every variant.
// `attn`, when set, computes each cached MHAttention instead of core's kv_cached_mh_attention
// (av.patch.call = Algorithm 10's calling line, av.patch.l = the layer, as Algorithm 10 labels them).
VecF dtransformer_cached(const Tokens& x, const ModelConfig& c, const GptW<const float>& W, GptKvCache& cache,
                         bool* rebuilt = nullptr, const CachedMHAttentionFn& attn = {});

// The same for Algorithm 15: the decoder's self-attention K, V per layer and head, and the
// cross-attention's K, V of the encoder output Z (computed once: z does not change).
struct EdKvCache {
  Tokens z;                                // the context whose Z is kept
  MatF Z;                                  // (d_e, ℓ_z) Algorithm 8 lines 1–9
  std::vector<std::vector<MatF>> K, V;     // [layer][head] decoder self-attention, (d_attn | d_mid, ℓ_x)
  std::vector<std::vector<MatF>> Kz, Vz;   // [layer][head] cross-attention of Z, (d_attn | d_mid, ℓ_z)
  Tokens x;                                // the tokens of x̂ whose columns are cached
};

// The last column of EDTransformer(z, x | θ) (Algorithm 8), P[:, ℓ_x]: when the cache holds z and x
// without its last token, only column ℓ_x runs through the decoder; otherwise the cache is rebuilt
// (z encoded, every column of x) and *rebuilt is set. Equals edtransformer(z, x, …).col(ℓ_x − 1)
// up to rounding, for every variant.
// `attn`, when set, is the MHAttention of the rebuild's full pass (the encoder, lines 1–9, runs
// through edtransformer_parts); `cached_attn`, when set, computes each cached MHAttention of the
// decoder, self (append) and cross (over Z's cached K, V), labelled by Algorithm 8's line and the layer.
VecF edtransformer_cached(const Tokens& z, const Tokens& x, const ModelConfig& c, const EdW<const float>& W,
                          EdKvCache& cache, bool* rebuilt = nullptr, const MHAttentionFn<float>& attn = {},
                          const CachedMHAttentionFn& cached_attn = {});

// Core's cached MHAttention, a CachedMHAttentionFn (algorithms.hpp): Algorithm 5 for the new
// columns X over K[h], V[h] (appended to first when `append`), with the new columns' `mask`.
MatF kv_cached_mh_attention(const MatF& X, const MHAttentionW<const float>& W, std::vector<MatF>& K,
                            std::vector<MatF>& V, bool append, const Mask& mask, const AttentionOptions& av);

}  // namespace sf
