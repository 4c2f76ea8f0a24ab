#include "core/algorithms/paged_kv.hpp"

#include <string>

#include "core/model/error.hpp"

namespace sf {

namespace {

// A physical block for the next logical block: the last freed one, else a new one in the pool,
// shaped like the cache's layers and heads (B columns each).
int take_block(PagedKvCache& paged, const KvLayers& K, const KvLayers& V) {
  if (!paged.free.empty()) {
    const int j = paged.free.back();
    paged.free.pop_back();
    return j;
  }
  const int B = paged.table.block_size;
  auto shaped = [&](const KvLayers& like) {
    KvLayers block(like.size());
    for (size_t l = 0; l < like.size(); ++l)
      for (const MatF& m : like[l]) block[l].push_back(MatF::Zero(m.rows(), B));
    return block;
  };
  paged.K.push_back(shaped(K));
  paged.V.push_back(shaped(V));
  return static_cast<int>(paged.K.size()) - 1;
}

void release_all(PagedKvCache& paged) {
  for (auto it = paged.table.blocks.rbegin(); it != paged.table.blocks.rend(); ++it) paged.free.push_back(*it);
  paged.table.blocks.clear();
  paged.table.tokens = 0;
}

}  // namespace

void check_kv_block_size(int block_size) {
  if (block_size < 1 || block_size > 4096)
    throw Error("the KV cache's block size must be a whole number of tokens from 1 to 4096, not " +
                std::to_string(block_size));
}

void paged_store(PagedKvCache& paged, const KvLayers& K, const KvLayers& V, bool rebuilt) {
  if (rebuilt) release_all(paged);
  BlockTable& t = paged.table;
  const int B = t.block_size;
  const int n = K.empty() || K[0].empty() ? 0 : static_cast<int>(K[0][0].cols());
  for (int col = t.tokens; col < n; ++col) {
    if (col % B == 0) t.blocks.push_back(take_block(paged, K, V));  // the last block is full
    const int j = t.blocks[col / B], slot = col % B;
    for (size_t l = 0; l < K.size(); ++l)
      for (size_t h = 0; h < K[l].size(); ++h) {
        paged.K[j][l][h].col(slot) = K[l][h].col(col);
        paged.V[j][l][h].col(slot) = V[l][h].col(col);
      }
  }
  t.tokens = n;
}

Value block_table_value(const BlockTable& t, const std::string& held, const std::string& extra) {
  // Block numbers, not token ids: a vector of numbers (as Tokens the Variables panel decoded them as text).
  VecF physical(static_cast<Eigen::Index>(t.blocks.size()));  // (number of logical blocks)
  for (size_t b = 0; b < t.blocks.size(); ++b) physical[static_cast<Eigen::Index>(b)] = static_cast<float>(t.blocks[b] + 1);
  const int n = static_cast<int>(t.blocks.size());
  const std::string last = n == 0 ? "" : "; the last holds " + std::to_string(t.fill(n - 1)) + " of its " +
                                             std::to_string(t.block_size) + " slots";
  return with_note(tv("block table", physical),
                   "PagedAttention (not in the paper; Kwon et al. 2023, vLLM; encyclopedia article 004): " + held + " " +
                       std::to_string(t.tokens) + " tokens in " + std::to_string(n) + " blocks of B = " +
                       std::to_string(t.block_size) + last + ". Entry b is the physical block of logical block b "
                       "(tokens (b − 1)·B + 1 … b·B); this step's attention read K, V gathered through it." + extra);
}

void paged_gather(const PagedKvCache& paged, KvLayers& K_all, KvLayers& V_all) {
  const BlockTable& t = paged.table;
  for (size_t l = 0; l < K_all.size(); ++l)
    for (size_t h = 0; h < K_all[l].size(); ++h) {
      MatF& K = K_all[l][h];
      MatF& V = V_all[l][h];
      K.resize(K.rows(), t.tokens);
      V.resize(V.rows(), t.tokens);
      for (size_t b = 0; b < t.blocks.size(); ++b) {
        const int fill = t.fill(static_cast<int>(b)), j = t.blocks[b];
        const int col = static_cast<int>(b) * t.block_size;
        K.middleCols(col, fill) = paged.K[j][l][h].leftCols(fill);
        V.middleCols(col, fill) = paged.V[j][l][h].leftCols(fill);
      }
    }
}

}  // namespace sf
