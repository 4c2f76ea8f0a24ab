// PagedAttention's block table (not in the paper; Kwon et al. 2023, "Efficient Memory Management for
// Large Language Model Serving with PagedAttention" (vLLM); the encyclopedia article, seed 004): the
// KV cache of a sequence is held in fixed-size blocks of B token slots, and its block table maps the
// sequence's logical block b (tokens b·B + 1 … (b + 1)·B) to a physical block of a shared pool.
#pragma once
#include <algorithm>
#include <vector>

namespace sf {
struct BlockTable {
  int block_size = 0;       // B, token slots per block; 0: the cache is not paged
  std::vector<int> blocks;  // logical block b (0-based) → physical block (0-based, as vLLM numbers them)
  int tokens = 0;           // tokens held; the last block holds tokens − B·(blocks − 1) of its B slots
  // Tokens held in logical block b (B for every block but the last).
  int fill(int b) const { return std::clamp(tokens - b * block_size, 0, block_size); }
};
}  // namespace sf
