// Algorithm 4-F (FlashAttention, not in the paper) in the app, headless: the blocks the Attention tab
// draws (app/logic/flash_blocks.hpp), read from the trace, against the listing's loops; the learner's
// B_r and B_c (set_flash_blocks); the GPU tab's words on its fused shader (fused_form_text); and lesson 12,
// which steps the blocks of the default model and ends on max |Ṽ_flash − Ṽ|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "app/attention_calls.hpp"
#include "app/logic/flash_blocks.hpp"
#include "app/logic/lesson_player.hpp"
#include "app/panels/gpu_text.hpp"
#include "app/session.hpp"
#include "core/io/session_file.hpp"
#include "core/model/error.hpp"

namespace sf {
namespace test_session_flash {

// The default model ("hello=", ℓ = 7, causal) with FlashAttention over B_r × B_c blocks.
void use_flash(Session& s, int B_r, int B_c) {
  std::string error;
  ASSERT_TRUE(set_flash_blocks(s, B_r, B_c, error)) << error;
  s.wait_for_trace();
}

// Under the causal mask (key t_z may serve query t_x iff t_z ≤ t_x, 1-based), a block is fully masked iff
// its first key comes after its last query: (j−1)·B_c + 1 > min(i·B_r, ℓ). Written from the mask's
// definition, not from the listing's line 7. With keys as rows (the paper's S), these blocks lie below the
// diagonal (Dao et al.'s "above": their rows are queries).
bool causal_block_masked(int i, int j, int B_r, int B_c, int l) { return (j - 1) * B_c + 1 > std::min(i * B_r, l); }

// The Line event of `r` for layer 1, head 1 with the given i and j of Algorithm 4-F (0: any).
size_t flash_line(const Trace& t, LineRef r, int want_i, int want_j) {
  int i = 0, j = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.kind != EventKind::Line || e.alg != algs::flash_attention || e.idx.l != 1 || e.idx.h != 1) continue;
    if (e.ref() == lines::flash_attention::for_i) i = static_cast<int>(event_value(e, "i")->m(0, 0)), j = 0;
    if (e.ref() == lines::flash_attention::for_j) j = static_cast<int>(event_value(e, "j")->m(0, 0));
    if (e.ref() == r && (!want_i || want_i == i) && (!want_j || want_j == j)) return k;
  }
  return t.size();
}

TEST(SessionFlash, SkippedBlocksAreExactlyTheCausalMasksBlocksBelowTheDiagonal) {
  Session s;
  const int l = static_cast<int>(s.tokens().size());
  ASSERT_EQ(l, 7);  // <bos>hello=
  for (auto [B_r, B_c] : {std::pair{3, 3}, {2, 3}, {4, 1}, {1, 2}, {7, 7}, {5, 2}}) {
    SCOPED_TRACE("B_r = " + std::to_string(B_r) + ", B_c = " + std::to_string(B_c));
    use_flash(s, B_r, B_c);
    ASSERT_TRUE(s.jump_to(lines::flash_attention::V_tilde, 1, 1));  // line 16: every block seen
    const FlashBlocks f = flash_blocks(s.trace(), s.cursor());
    ASSERT_TRUE(f.found());
    EXPECT_EQ(f.n_i, (l + B_r - 1) / B_r);
    EXPECT_EQ(f.n_j, (l + B_c - 1) / B_c);
    EXPECT_EQ(f.i, 0);
    EXPECT_EQ(f.j, 0);
    for (const FlashBlock& b : f.blocks) {
      const bool masked = causal_block_masked(b.i, b.j, B_r, B_c, l);
      EXPECT_EQ(b.state, masked ? FlashBlockState::Skipped : FlashBlockState::Done) << "block " << b.i << ", " << b.j;
      EXPECT_EQ(b.m.size() == 0, masked) << "m and ℓ bound only for a computed block";
    }
  }
}

// The whole S the tab assembles from the blocks equals Algorithm 4's S after masking, divided by √d_attn,
// of the same head of the same model run exactly: both are the same dot products of the same Q and K
// (layer 1's input does not depend on how attention is computed). Tolerance: one float rounding of the
// product by 1/√d_attn against the division, plus GEMM blocking's reordering of the d_attn = 16 terms:
// (d_attn + 2)·ε_float·max|S|, ε_float = 2⁻²³.
TEST(SessionFlash, BlocksInPlaceAreAlgorithm4sScores) {
  Session exact;
  const std::vector<HeadCall> calls = head_calls(exact.trace());
  const HeadCall* c = find_head_call(calls, 10, 6, 1, 1, 0);
  ASSERT_TRUE(c && c->S_masked);
  const MatF S4 = MatF(c->S_masked->m) / std::sqrt(16.0f);  // d_attn = 16
  Session s;
  use_flash(s, 3, 2);
  ASSERT_TRUE(s.jump_to(lines::flash_attention::V_tilde, 1, 1));
  const FlashBlocks f = flash_blocks(s.trace(), s.cursor());
  ASSERT_EQ(f.S.rows(), S4.rows());
  ASSERT_EQ(f.S.cols(), S4.cols());
  const float tol = 18.0f * std::numeric_limits<float>::epsilon() * S4.array().isFinite().select(S4.array().abs(), 0.0f).maxCoeff();
  for (int tz = 0; tz < S4.rows(); ++tz)
    for (int tx = 0; tx < S4.cols(); ++tx) {
      const FlashBlock* b = f.block_of_cell(tz, tx);
      ASSERT_NE(b, nullptr);
      if (b->state == FlashBlockState::Skipped) {  // never computed: no value, and every cell masked in Algorithm 4
        EXPECT_TRUE(std::isnan(f.S(tz, tx)));
        EXPECT_EQ(S4(tz, tx), -std::numeric_limits<float>::infinity());
      } else if (std::isinf(S4(tz, tx))) {
        EXPECT_EQ(f.S(tz, tx), S4(tz, tx)) << tz << ", " << tx;
      } else {
        EXPECT_NEAR(f.S(tz, tx), S4(tz, tx), tol) << tz << ", " << tx;
      }
    }
}

// Half-way through: at line 7 of block (1, 2) block (1, 1) is done with the m and ℓ its lines 12 and 11
// bound, (1, 2) is the current block and skipped, every later block unseen, and its cells have no value.
TEST(SessionFlash, MidwayTheCurrentBlockIsTheListingsLoopIndices) {
  Session s;
  use_flash(s, 3, 3);
  const size_t k = flash_line(s.trace(), lines::flash_attention::skip, 1, 2);
  ASSERT_LT(k, s.trace().size());
  s.jump_ungated(k);
  const FlashBlocks f = flash_blocks(s.trace(), s.cursor());
  ASSERT_TRUE(f.found());
  EXPECT_EQ(f.i, 1);
  EXPECT_EQ(f.j, 2);
  EXPECT_EQ(f.at(1, 1).state, FlashBlockState::Done);
  EXPECT_EQ(f.at(1, 2).state, FlashBlockState::Skipped);
  for (int i = 1; i <= 3; ++i)
    for (int j = 1; j <= 3; ++j)
      if (i > 1 || j > 2) EXPECT_EQ(f.at(i, j).state, FlashBlockState::Unseen) << i << ", " << j;
  const Trace& t = s.trace();
  EXPECT_EQ(f.at(1, 1).m, MatF(event_value(t.events[flash_line(t, lines::flash_attention::m, 1, 1)], "m")->m));
  EXPECT_EQ(f.at(1, 1).ell, MatF(event_value(t.events[flash_line(t, lines::flash_attention::ell, 1, 1)], "ℓ")->m));
  EXPECT_TRUE(std::isnan(f.S(6, 6)));  // block (3, 3): not reached
  const std::string text = flash_block_text(f, f.at(1, 1));
  EXPECT_NE(text.find("Query block i = 1 of ⌈ℓ_x/B_r⌉ = 3 (t_x = 1 … 3), key block j = 1 of ⌈ℓ_z/B_c⌉ = 3"), std::string::npos)
      << text;
  EXPECT_NE(text.find("m = ("), std::string::npos) << text;
}

// New block sizes re-run the forward pass: the cursor stays on its line, layer and head; sizes below 1
// are refused with a message and change nothing.
TEST(SessionFlash, NewBlockSizesReRunKeepingTheLine) {
  Session s;
  use_flash(s, 4, 4);
  ASSERT_TRUE(s.jump_to(lines::flash_attention::m_new, 1, 2));
  EXPECT_EQ(flash_blocks(s.trace(), s.cursor()).n_i, 2);
  use_flash(s, 2, 3);
  EXPECT_EQ(s.current().ref(), lines::flash_attention::m_new);
  EXPECT_EQ(s.current().idx.l, 1);
  EXPECT_EQ(s.current().idx.h, 2);
  const FlashBlocks f = flash_blocks(s.trace(), s.cursor());
  EXPECT_EQ(f.n_i, 4);  // ⌈7/2⌉
  EXPECT_EQ(f.n_j, 3);  // ⌈7/3⌉
  std::string error;
  EXPECT_FALSE(set_flash_blocks(s, 0, 3, error));
  EXPECT_NE(error.find("at least 1"), std::string::npos) << error;
  EXPECT_EQ(s.model().config.block_r, 2);
  EXPECT_EQ(s.model().config.block_c, 3);
}

// The GPU tab's words: B_r = 64, and B_c the largest power of two up to 32 whose (d_attn + d_mid)·4 bytes
// per key fit in shared memory (worked by hand for each case below).
TEST(SessionFlash, GpuTabNamesAlgorithm4FWithTheBlockSizesOfItsSharedMemory) {
  const std::string unknown = fused_form_text(16, 16, 0);  // 128 B/key; OpenGL 4.3's 32768 B hold 32 keys
  EXPECT_NE(unknown.find("flash_attention.comp"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("Algorithm 4-F"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("B_r = 64 "), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("B_c = 32 "), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("OpenGL 4.3's minimum"), std::string::npos) << unknown;
  EXPECT_NE(fused_form_text(16, 16, 1000).find("B_c = 4 "), std::string::npos);        // 8·128 = 1024 > 1000
  EXPECT_NE(fused_form_text(256, 256, 32768).find("B_c = 16 "), std::string::npos);    // 2048 B/key
  EXPECT_NE(fused_form_text(4096, 4096, 32768).find("B_c = 1 "), std::string::npos);   // 32768 B/key
  EXPECT_NE(fused_form_text(8192, 8192, 32768).find("refuses"), std::string::npos);    // 65536 B/key
  EXPECT_NE(fused_form_text(16, 16, 65536).find("this device's 65536 bytes"), std::string::npos);
  EXPECT_EQ(fused_form_title(16, 16, 1000), "Fused shader: Algorithm 4-F (B_r = 64, B_c = 4)");
  EXPECT_EQ(fused_form_title(8192, 8192, 32768), "Fused shader: Algorithm 4-F (B_r = 64, no B_c fits)");
}

// The lesson's model is the default model's θ with "attention": "flash" and 3 × 3 blocks.
TEST(SessionFlash, LessonModelIsTheDefaultModelWithFlashAttention) {
  Session s;
  const std::vector<float> theta = s.model().theta;
  std::string error;
  ASSERT_TRUE(s.load_model(std::string(STEPFORMER_SOURCE_DIR) + "/assets/lessons/flash-default.safetensors", error)) << error;
  EXPECT_EQ(s.model().theta, theta);
  EXPECT_EQ(s.model().config.attention, AttentionKind::Flash);
  EXPECT_EQ(s.model().config.block_r, 3);
  EXPECT_EQ(s.model().config.block_c, 3);
}

// Lesson 12 steps the blocks of layer 1, head 1 named in its notes, and its last stop shows max |Ṽ_flash − Ṽ|:
// the difference of this trace's Ṽ from the exact model's Algorithm 4 Ṽ of the same head (the same
// computation on the same inputs, so equal up to float rounding of the final value: 4 ulps).
TEST(SessionFlash, LessonTwelveStepsTheBlocksAndEndsOnTheComparison) {
  LessonPlayer p;
  std::string error;
  ASSERT_TRUE(p.open(find_lesson("12-attention-without-the-l-by-l-matrix"), error)) << error;
  ASSERT_EQ(p.size(), 8u);
  Session s;
  // The (i, j) each stop's note talks about (0: none yet / every block done).
  const std::pair<int, int> blocks[] = {{0, 0}, {1, 1}, {1, 2}, {2, 1}, {2, 2}, {2, 2}, {2, 0}, {0, 0}};
  for (size_t n = 0; n < p.size(); ++n) {
    SCOPED_TRACE("stop " + std::to_string(n + 1));
    ASSERT_TRUE(p.go(s, n, nullptr, error)) << error;
    const FlashBlocks f = flash_blocks(s.trace(), s.cursor());
    ASSERT_TRUE(f.found());
    EXPECT_EQ(f.idx.l, 1);
    EXPECT_EQ(f.idx.h, 1);
    EXPECT_EQ(f.B_r, 3);
    EXPECT_EQ(f.i, blocks[n].first);
    EXPECT_EQ(f.j, blocks[n].second);
  }
  EXPECT_EQ(flash_blocks(s.trace(), s.cursor()).at(1, 2).state, FlashBlockState::Skipped);
  EXPECT_EQ(s.current().ref(), lines::flash_attention::V_tilde);
  const Value* diff = event_value(s.current(), "max |Ṽ_flash − Ṽ|");
  const Value* Vt = event_value(s.current(), "Ṽ");
  ASSERT_TRUE(diff && Vt);
  Session exact;
  const Trace& t = exact.trace();
  const Value* V4 = nullptr;
  for (const Event& e : t.events)
    if (!V4 && e.kind == EventKind::Line && e.ref() == lines::attention::V_tilde && e.idx.l == 1 && e.idx.h == 1)
      V4 = event_value(e, "Ṽ");
  ASSERT_NE(V4, nullptr);
  const float want = (MatF(Vt->m) - MatF(V4->m)).cwiseAbs().maxCoeff();
  EXPECT_FLOAT_EQ(diff->m(0, 0), want);
  EXPECT_GT(want, 0.0f);  // another order of sums: not bit for bit
}

// A session or lesson may put its cursor and breakpoints on Algorithm 4-F's steps (104); a number that is
// neither the paper's 1–15 nor one of Stepformer's listings is refused with a message naming both.
TEST(SessionFlash, SessionFilesAcceptAlgorithm4FSteps) {
  const std::string head = R"({"version": 1, "model": {"path": ""}, )";
  const SessionFile f = session_from_json(head + R"("cursor": {"alg": 104, "line": 8, "idx": {"l": 1, "h": 1}},
                                                      "breakpoints": [{"alg": 104, "line": 10}]})");
  EXPECT_EQ(f.state.cursor.alg, algs::flash_attention);
  ASSERT_EQ(f.state.breakpoints.size(), 1u);
  EXPECT_EQ(f.state.breakpoints[0].alg, algs::flash_attention);
  try {
    session_from_json(head + R"("cursor": {"alg": 99, "line": 1}})");
    ADD_FAILURE() << "alg 99 was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cursor.alg must be an integer 1–15, or 104 (Algorithm 4-F, not in the paper)"), std::string::npos)
        << what;
  }
}

}  // namespace test_session_flash
}  // namespace sf
