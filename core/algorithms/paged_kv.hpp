// PagedAttention's view of Algorithm 14's KV cache (not in the paper; Kwon et al. 2023 (vLLM); the
// encyclopedia article, seed 004). The cache's K and V columns are held in a pool of fixed-size
// physical blocks of B token slots (every layer's and head's K and V for those tokens), and a block
// table maps the sequence's logical blocks to physical ones; a block is taken from the pool only
// when the last one is full, so at most B − 1 slots are ever unused. Each step's attention reads
// K and V gathered through the table, then the new column is written into its block's next slot.
// The numbers do not change: the gather copies floats, and the attention runs the same float
// operations in the same order, so tokens, p, q and K, V are bit for bit those of the unpaged cache.
#pragma once
#include <string>
#include <vector>

#include "core/algorithms/block_table.hpp"
#include "core/algorithms/kv_cache.hpp"

namespace sf {

// Default block size in the app and the CLI: 4 tokens (vLLM's default is 16; 4 shows several blocks
// filling at Stepformer's ℓ_max).
inline constexpr int kDefaultKvBlockSize = 4;

struct PagedKvCache {
  explicit PagedKvCache(int block_size) { table.block_size = block_size; }
  BlockTable table;  // the sequence's logical → physical blocks
  // The pool: physical block j holds, for layer l and head h, B columns of K and of V.
  std::vector<std::vector<std::vector<MatF>>> K, V;  // [block][layer][head] (d_attn | d_mid, B)
  std::vector<int> free;  // physical blocks back in the pool (the last freed is taken first)
};

// Throws sf::Error unless 1 ≤ block_size ≤ 4096.
void check_kv_block_size(int block_size);
// A cache's K or V: [layer][head] (d_attn | d_mid, tokens).
using KvLayers = std::vector<std::vector<MatF>>;
// After a step of the cached forward: writes the columns of K, V the blocks do not hold yet,
// taking a block from the pool whenever the last one is full. `rebuilt` (the step recomputed every
// column: first step, trimmed context, new prefix) returns every block to the pool first.
void paged_store(PagedKvCache& paged, const KvLayers& K, const KvLayers& V, bool rebuilt);
// Before a step: K, V of every layer and head, gathered block by block through the table (the
// first `tokens` slots), for the step's attention to read.
void paged_gather(const PagedKvCache& paged, KvLayers& K, KvLayers& V);
// The cache of Algorithm 14 (GptKvCache: every self-attention's K, V) or of Algorithm 15 (EdKvCache:
// only the decoder self-attention's K, V, which grow by one column a step). Algorithm 15's cross-
// attention K, V of Z are not paged: they are computed once, for all ℓ_z tokens of z, before the first
// step and never grow, so they are one allocation of known size that blocks would only split (vLLM,
// too, keeps an encoder-decoder's cross-attention cache apart).
template <class Cache>
void paged_store(PagedKvCache& paged, const Cache& cache, bool rebuilt) {
  paged_store(paged, cache.K, cache.V, rebuilt);
}
template <class Cache>
void paged_gather(const PagedKvCache& paged, Cache& cache) {
  paged_gather(paged, cache.K, cache.V);
}
// One KV-cached step of Algorithm 14 or 15, through the blocks when `paged_on`: the step's attention
// reads K, V gathered from them, its new columns are written into them after, and `step` keeps the
// block table. `run` computes P's new column (and sets step.cache_rebuilt).
template <class Cache, class Run>
void run_cached_step(bool paged_on, PagedKvCache& paged, Cache& cache, InferenceStep& step, Run&& run) {
  if (paged_on && !cache.K.empty()) paged_gather(paged, cache);
  step.p = run();  // (N_V)
  if (!paged_on) return;
  paged_store(paged, cache, step.cache_rebuilt);
  step.block_table = paged.table;
}
// The block table as the trace binds it on Algorithm 14's line 3 and Algorithm 15's line 4: "block
// table", the physical block (1-based) of each logical block in order, with a note saying B, the
// tokens held and the last block's fill; `held` names the paged cache, `extra` ends the note.
Value block_table_value(const BlockTable& t, const std::string& held = "the cache's", const std::string& extra = "");

}  // namespace sf
