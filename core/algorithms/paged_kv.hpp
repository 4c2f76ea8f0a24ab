// PagedAttention's view of Algorithm 14's KV cache (not in the paper; Kwon et al. 2023 (vLLM); the
// encyclopedia article, seed 004). The cache's K and V columns are held in a pool of fixed-size
// physical blocks of B token slots (every layer's and head's K and V for those tokens), and a block
// table maps the sequence's logical blocks to physical ones; a block is taken from the pool only
// when the last one is full, so at most B − 1 slots are ever unused. Each step's attention reads
// K and V gathered through the table, then the new column is written into its block's next slot.
// The numbers do not change: the gather copies floats, and the attention runs the same float
// operations in the same order, so tokens, p, q and K, V are bit for bit those of the unpaged cache.
#pragma once
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
// After a step of dtransformer_cached: writes the columns of `cache` the blocks do not hold yet,
// taking a block from the pool whenever the last one is full. `rebuilt` (the step recomputed every
// column: first step, trimmed context, new prefix) returns every block to the pool first.
void paged_store(PagedKvCache& paged, const GptKvCache& cache, bool rebuilt);
// The block table as the trace binds it on Algorithm 14's line 3: "block table", the physical block
// (1-based) of each logical block in order, with a note saying B, the tokens held and the last block's fill.
Value block_table_value(const BlockTable& t);
// Before a step: cache.K, cache.V of every layer and head, gathered block by block through the table
// (the first `tokens` slots), for the step's attention to read.
void paged_gather(const PagedKvCache& paged, GptKvCache& cache);

}  // namespace sf
