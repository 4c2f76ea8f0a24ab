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
VecF dtransformer_cached(const Tokens& x, const ModelConfig& c, const GptW<const float>& W, GptKvCache& cache,
                         bool* rebuilt = nullptr);

}  // namespace sf
