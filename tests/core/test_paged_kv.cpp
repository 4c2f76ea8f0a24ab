// PagedAttention's block view of Algorithm 14's KV cache (not in the paper; Kwon et al. 2023, vLLM;
// core/algorithms/paged_kv.hpp): generation is unchanged, bit for bit, and the block table grows
// block by block as the sequence does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/kv_cache.hpp"
#include "core/algorithms/paged_kv.hpp"
#include "core/model/config.hpp"
#include "core/model/error.hpp"
#include "core/model/params.hpp"

#include "tiny_config.hpp"

namespace test_paged_kv {

using namespace sf;

namespace {

ModelConfig small(Position position = Position::Learned) {
  ModelConfig c = test::tiny_gpt_config(10);
  c.position = position;
  return c;
}

Tokens prompt5(const ModelConfig& c) { return {c.bos_token(), 5, 6, 7, 8}; }

InferenceResult generate(const Model& m, int block_size) {
  InferenceOptions opt;
  opt.l_gen = 8;  // 5 + 8 tokens pass ℓ_max = 10: steps 7 and 8 trim the context and rebuild the cache
  opt.tau = 0.8;
  opt.seed = 5;
  opt.kv_cache = true;
  opt.kv_block_size = block_size;
  return dinference(prompt5(m.config), m, opt);
}

// Bitwise, not within a tolerance: paging only changes where K and V are stored. The gather copies
// floats, and every step runs the same float operations in the same order on the same values, so
// p, q and the tokens cannot differ by even one rounding.
TEST(PagedKv, GenerationIsUnchangedBitForBit) {
  for (const Position pos : {Position::Learned, Position::Rope, Position::Alibi}) {
    const Model m = Model::initialised(small(pos), 21);
    const InferenceResult plain = generate(m, 0);
    for (const int B : {1, 3, 4, 16}) {
      const InferenceResult paged = generate(m, B);
      ASSERT_EQ(paged.y, plain.y) << "B = " << B;
      ASSERT_EQ(paged.steps.size(), plain.steps.size());
      for (size_t i = 0; i < plain.steps.size(); ++i) {
        EXPECT_TRUE(paged.steps[i].p == plain.steps[i].p) << "B = " << B << " step " << i + 1;
        EXPECT_TRUE(paged.steps[i].q == plain.steps[i].q) << "B = " << B << " step " << i + 1;
        EXPECT_EQ(plain.steps[i].block_table.block_size, 0);  // unpaged: no table
      }
    }
  }
}

// The K and V every step's attention reads, gathered through the table, equal the unpaged cache's.
TEST(PagedKv, GatheredKAndVEqualTheContiguousCacheBitForBit) {
  const ModelConfig c = small();
  const Model m = Model::initialised(c, 22);
  const GptW<const float> W = m.weights();
  GptKvCache plain, cache;
  PagedKvCache paged(3);
  Tokens x{c.bos_token()};
  for (int t = 2; t <= 9; ++t) {
    x.push_back(4 + t);
    bool rebuilt_plain = false, rebuilt = false;
    const VecF p_plain = dtransformer_cached(x, c, W, plain, &rebuilt_plain);
    if (!cache.K.empty()) paged_gather(paged, cache);
    const VecF p = dtransformer_cached(x, c, W, cache, &rebuilt);
    paged_store(paged, cache, rebuilt);
    EXPECT_TRUE(p == p_plain) << "ℓ = " << t;
    GptKvCache gathered = cache;
    paged_gather(paged, gathered);
    for (int l = 0; l < c.L; ++l)
      for (int h = 0; h < c.H; ++h) {
        EXPECT_TRUE(gathered.K[l][h] == plain.K[l][h]) << "ℓ = " << t << " layer " << l + 1 << " head " << h + 1;
        EXPECT_TRUE(gathered.V[l][h] == plain.V[l][h]) << "ℓ = " << t << " layer " << l + 1 << " head " << h + 1;
      }
  }
}

// B = 4, prompt of 5 tokens, ℓ_max = 10. Step i holds 4 + i tokens (the prompt and the i − 1 drawn
// before it, plus its own column) until step 7, where x (11 tokens) is trimmed to the last 10 and the
// cache is rebuilt: its blocks go back to the pool and are taken again, the last-freed first.
TEST(PagedKv, TheBlockTableGrowsBlockByBlock) {
  const InferenceResult r = generate(Model::initialised(small(), 23), 4);
  ASSERT_EQ(r.steps.size(), 8u);
  struct Want {
    int tokens;
    std::vector<int> blocks;
    int last_fill;
  };
  const std::vector<Want> want{
      {5, {0, 1}, 1},     {6, {0, 1}, 2},     {7, {0, 1}, 3},     {8, {0, 1}, 4},  // block 2 full at ℓ = 8
      {9, {0, 1, 2}, 1},  {10, {0, 1, 2}, 2}, {10, {0, 1, 2}, 2}, {10, {0, 1, 2}, 2},
  };
  for (size_t i = 0; i < want.size(); ++i) {
    const BlockTable& t = r.steps[i].block_table;
    EXPECT_EQ(t.block_size, 4);
    EXPECT_EQ(t.tokens, want[i].tokens) << "step " << i + 1;
    EXPECT_EQ(t.blocks, want[i].blocks) << "step " << i + 1;
    const int n = static_cast<int>(t.blocks.size());
    EXPECT_EQ(t.fill(n - 1), want[i].last_fill) << "step " << i + 1;
    for (int b = 0; b + 1 < n; ++b) EXPECT_EQ(t.fill(b), 4) << "step " << i + 1 << " block " << b + 1;
  }
  EXPECT_TRUE(r.steps[6].cache_rebuilt);
}

TEST(PagedKv, ReleasedBlocksAreReusedNotAdded) {
  const ModelConfig c = small();
  const Model m = Model::initialised(c, 24);
  GptKvCache cache;
  PagedKvCache paged(2);
  const Tokens x{c.bos_token(), 5, 6, 7, 8};
  bool rebuilt = false;
  dtransformer_cached(x, c, m.weights(), cache, &rebuilt);
  paged_store(paged, cache, rebuilt);
  EXPECT_EQ(paged.table.blocks, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(paged.K.size(), 3u);
  cache = {};  // a rebuild from 3 tokens: the three blocks go back to the pool, two are taken again
  dtransformer_cached(Tokens(x.begin(), x.begin() + 3), c, m.weights(), cache, &rebuilt);
  paged_store(paged, cache, rebuilt);
  EXPECT_EQ(paged.table.blocks, (std::vector<int>{0, 1}));
  EXPECT_EQ(paged.table.fill(1), 1);
  EXPECT_EQ(paged.free, (std::vector<int>{2}));
  EXPECT_EQ(paged.K.size(), 3u);
}

TEST(PagedKv, BadBlockSizeIsRefused) {
  const Model m = Model::initialised(small(), 25);
  try {
    generate(m, -2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("block size must be a whole number of tokens from 1 to 4096"),
              std::string::npos);
  }
}

}  // namespace

}  // namespace test_paged_kv
