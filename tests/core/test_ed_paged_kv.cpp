// PagedAttention for Algorithm 15's KV cache (not in the paper; Kwon et al. 2023, vLLM;
// core/algorithms/paged_kv.hpp): the decoder self-attention's K, V are held in blocks of B tokens
// through a block table; the cross-attention's K, V of Z are not paged. Translation is unchanged,
// bit for bit; the table grows by one block every B tokens of x̂, and the trace binds it on line 4.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/paged_kv.hpp"
#include "core/model/error.hpp"
#include "core/model/params.hpp"
#include "core/trace/trace.hpp"
#include "core/trace/vocabulary.hpp"

#include "ed_long_run.hpp"
#include "test_bert_support.hpp"
#include "tiny_config.hpp"

namespace test_ed_paged_kv {

using namespace sf;

namespace {

// The tiny GPT's sizes as an encoder-decoder (1 + 2 layers), ℓ_max = 10.
ModelConfig small_ed() {
  ModelConfig c = test::tiny_gpt_config(10);
  c.arch = "ed";
  c.L_enc = 1;
  c.L_dec = 2;
  c.norm_position = NormPosition::Post;  // the paper's
  return c;
}

Tokens context(const ModelConfig& c) { return {c.bos_token(), 1, 2, 3, c.eos_token()}; }

EdInferenceResult translate(const Model& m, int block_size, Tracer* tr = nullptr) {
  EdInferenceOptions opt;
  opt.tau = 0.8;
  opt.seed = 4;
  opt.kv_cache = true;
  opt.kv_block_size = block_size;
  return edinference(context(m.config), m, opt, tr);
}

}  // namespace

// Bitwise, not within a tolerance: paging changes only where the decoder's K and V are stored; the
// gather copies floats and every step runs the same float operations on the same values.
TEST(EdPagedKv, TranslationIsUnchangedBitForBit) {
  for (const Position pos : {Position::Learned, Position::Rope, Position::Relative}) {
    ModelConfig c = small_ed();
    c.position = pos;
    const Model m = test::long_running_ed(c, 31);
    const EdInferenceResult plain = translate(m, 0);
    ASSERT_EQ(plain.steps.size(), 9u) << "the ℓ_max cap: x̂ = [bos_token] and 9 tokens";
    for (const int B : {1, 3, 4, 16}) {
      const EdInferenceResult paged = translate(m, B);
      ASSERT_EQ(paged.x_hat, plain.x_hat) << "B = " << B;
      ASSERT_EQ(paged.steps.size(), plain.steps.size());
      for (size_t i = 0; i < plain.steps.size(); ++i) {
        EXPECT_TRUE(paged.steps[i].p == plain.steps[i].p) << "B = " << B << " step " << i + 1;
        EXPECT_TRUE(paged.steps[i].q == plain.steps[i].q) << "B = " << B << " step " << i + 1;
        EXPECT_EQ(plain.steps[i].block_table.block_size, 0);  // unpaged: no table
      }
    }
  }
}

// B = 4: step i runs x̂ of i tokens (bos_token and the i − 1 drawn before it), so the table holds i
// tokens in ⌈i/4⌉ blocks, the pool's 0, 1, 2 taken in order; only the first step builds the cache.
TEST(EdPagedKv, TheBlockTableGrowsBlockByBlock) {
  const EdInferenceResult r = translate(test::long_running_ed(small_ed(), 32), 4);
  ASSERT_EQ(r.steps.size(), 9u);
  struct Want {
    int tokens;
    std::vector<int> blocks;
    int last_fill;
  };
  const std::vector<Want> want{
      {1, {0}, 1},       {2, {0}, 2},       {3, {0}, 3},       {4, {0}, 4},  // block 1 full at 4 tokens
      {5, {0, 1}, 1},    {6, {0, 1}, 2},    {7, {0, 1}, 3},    {8, {0, 1}, 4},
      {9, {0, 1, 2}, 1},
  };
  for (size_t i = 0; i < want.size(); ++i) {
    const BlockTable& t = r.steps[i].block_table;
    EXPECT_EQ(t.block_size, 4);
    EXPECT_EQ(t.tokens, want[i].tokens) << "step " << i + 1;
    EXPECT_EQ(t.blocks, want[i].blocks) << "step " << i + 1;
    EXPECT_EQ(t.fill(static_cast<int>(t.blocks.size()) - 1), want[i].last_fill) << "step " << i + 1;
    EXPECT_EQ(r.steps[i].cache_rebuilt, i == 0) << "step " << i + 1;
  }
}

// Line 4 of Algorithm 15 binds "block table" (1-based physical blocks) beside P[:, length(x̂)], with
// a note that names the decoder's cache and says Z's K, V are not paged.
TEST(EdPagedKv, TheTraceBindsTheBlockTableOnLine4) {
  Trace trace;
  Tracer tr(trace);
  const EdInferenceResult r = translate(test::long_running_ed(small_ed(), 33), 2, &tr);
  std::vector<Tokens> tables;
  for (const Event& e : trace.events)
    if (e.kind == EventKind::Line && e.ref() == lines::ed_inference::forward)
      if (const Value* v = test::find_value(e, "block table")) {
        Tokens table;  // the bound vector of 1-based physical block numbers
        for (Eigen::Index b = 0; b < v->m.rows(); ++b) table.push_back(static_cast<int>(v->m(b, 0)));
        tables.push_back(table);
        EXPECT_NE(v->note.find("decoder self-attention"), std::string::npos) << v->note;
        EXPECT_NE(v->note.find("not paged"), std::string::npos) << v->note;
      }
  ASSERT_EQ(tables.size(), r.steps.size());
  EXPECT_EQ(tables[0], (Tokens{1}));           // 1 token
  EXPECT_EQ(tables[2], (Tokens{1, 2}));        // 3 tokens in blocks of 2
  EXPECT_EQ(tables[8], (Tokens{1, 2, 3, 4, 5}));  // 9 tokens
}

TEST(EdPagedKv, ABadBlockSizeIsRefused) {
  const Model m = Model::initialised(small_ed(), 34);
  try {
    translate(m, -1);
    FAIL() << "a negative block size was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("block size"), std::string::npos) << e.what();
  }
}

}  // namespace test_ed_paged_kv
