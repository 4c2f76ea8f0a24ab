// Algorithm 4-F (FlashAttention, not in the paper) in the real app under Xvfb: the Attention tab's
// block view (--dump-state "flash_blocks": which block is current, done, unseen or skipped, drawn this
// frame, the block under the pointer), the --actions verb flash-blocks:R:C, the GPU tab's words on its
// fused shader ("gpu_fused_form") and its button into Algorithm 4-F, and lesson 12's last stop. The same
// logic is checked headless, against the listing and Algorithm 4, in test_session_flash.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>

#include "gui_harness.hpp"

namespace test_gui_flash {

namespace {

using namespace gui;

// The state of block (i, j) in the dump ("" when the dump has no such block).
std::string state_of(const json& f, int i, int j) {
  for (const json& b : f["blocks"])
    if (b["i"] == i && b["j"] == j) return b["state"];
  return "";
}

// Under the causal mask (t_z ≤ t_x, 1-based) block (i, j) is fully masked iff its first key comes after
// its last query: (j−1)·B_c + 1 > min(i·B_r, ℓ).
bool causal_block_masked(int i, int j, int B_r, int B_c, int l) { return (j - 1) * B_c + 1 > std::min(i * B_r, l); }

TEST(GuiFlash, AttentionTabDrawsTheBlocksOfTheCursorsCall) {
  // Line 16 of layer 1, head 1, 3 × 2 blocks on "hello=" (ℓ = 7): every block seen.
  AppRun r = run_app("", "flash-blocks:3:2,goto:104:16:1:1,open:attention");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json f = r.state["flash_blocks"];
  EXPECT_TRUE(f["found"].get<bool>());
  EXPECT_TRUE(f["drawn"].get<bool>());
  EXPECT_EQ(f["B_r"], 3);
  EXPECT_EQ(f["B_c"], 2);
  ASSERT_EQ(f["n_i"], 3);  // ⌈7/3⌉
  ASSERT_EQ(f["n_j"], 4);  // ⌈7/2⌉
  for (int i = 1; i <= 3; ++i)
    for (int j = 1; j <= 4; ++j)
      EXPECT_EQ(state_of(f, i, j), causal_block_masked(i, j, 3, 2, 7) ? "skipped" : "done") << i << ", " << j;
  // Line 8 of the first block: it is being computed, nothing else is seen yet.
  r = run_app("", "flash-blocks:3:2,goto:104:8:1:1,open:attention");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  f = r.state["flash_blocks"];
  EXPECT_TRUE(f["drawn"].get<bool>());
  EXPECT_EQ(f["i"], 1);
  EXPECT_EQ(f["j"], 1);
  for (int i = 1; i <= 3; ++i)
    for (int j = 1; j <= 4; ++j) EXPECT_EQ(state_of(f, i, j), i == 1 && j == 1 ? "current" : "unseen") << i << ", " << j;
}

TEST(GuiFlash, BlockSizesVerbReRunsOnTheSameLine) {
  AppRun r = run_app("", "flash-blocks:4:4,goto:104:9:1:2,flash-blocks:2:3,open:attention");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["config"]["attention"], "flash");
  EXPECT_EQ(r.state["config"]["block_r"], 2);
  EXPECT_EQ(r.state["config"]["block_c"], 3);
  EXPECT_EQ(r.state["event"]["alg"], 104);
  EXPECT_EQ(r.state["event"]["line"], 9);
  EXPECT_EQ(r.state["event"]["l"], 1);
  EXPECT_EQ(r.state["event"]["h"], 2);
  EXPECT_EQ(r.state["flash_blocks"]["n_i"], 4);  // ⌈7/2⌉, was ⌈7/4⌉ = 2
  EXPECT_EQ(r.state["flash_blocks"]["n_j"], 3);
  r = run_app("", "flash-blocks:4:4,flash-blocks:0:2");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("must be whole numbers of at least 1 (B_r = 0, B_c = 2)"), std::string::npos) << r.output;
  EXPECT_EQ(r.state["config"]["block_r"], 4);  // unchanged
}

TEST(GuiFlash, HoverNamesTheBlockWithItsMAndEll) {
  const std::string go = "flash-blocks:3:3,goto:104:16:1:1,open:attention";
  AppRun r = run_app("", go);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json cells = r.state["flash_blocks"]["cells"];  // x, y, w, h of the 7 × 7 cells
  ASSERT_GT(cells[2].get<double>(), 0.0);
  // The middle of block (i = 2, j = 1): query columns 4 … 6, key rows 1 … 3.
  const int x = static_cast<int>(cells[0].get<double>() + cells[2].get<double>() * 5.0 / 7.0);
  const int y = static_cast<int>(cells[1].get<double>() + cells[3].get<double>() * 2.0 / 7.0);
  r = run_app("", go + ",mouse:" + std::to_string(x) + ":" + std::to_string(y));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json h = r.state["flash_blocks"]["hovered"];
  EXPECT_EQ(h["i"], 2);
  EXPECT_EQ(h["j"], 1);
  const std::string text = h["text"];
  EXPECT_NE(text.find("Query block i = 2 of ⌈ℓ_x/B_r⌉ = 3 (t_x = 4 … 6), key block j = 1 of ⌈ℓ_z/B_c⌉ = 3 (t_z = 1 … 3): done"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("m = ("), std::string::npos) << text;
  EXPECT_NE(text.find("ℓ = ("), std::string::npos) << text;
}

// The GPU tab names Algorithm 4-F with the block sizes its fused shader is compiled with: B_r = 64 and
// B_c the largest power of two up to 32 whose (d_attn + d_mid)·4 = 128 bytes per key (the default model)
// fit in the shared memory the device reports (read from the text, then worked out here).
TEST(GuiFlash, GpuTabSaysItsFusedShaderIsAlgorithm4F) {
  AppRun r = run_app("", "attention:gpu,open:gpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string title = r.state["gpu_fused_form"]["title"], text = r.state["gpu_fused_form"]["text"];
  EXPECT_NE(text.find("flash_attention.comp"), std::string::npos) << text;
  EXPECT_NE(text.find("is Algorithm 4-F"), std::string::npos) << text;
  EXPECT_NE(text.find("B_r = 64 "), std::string::npos) << text;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex("this device's ([0-9]+) bytes"))) << text;
  const int shared = std::stoi(m[1]);
  int B_c = 32;
  while (B_c > 1 && B_c * 128 > shared) B_c /= 2;
  EXPECT_NE(text.find("B_c = " + std::to_string(B_c) + " "), std::string::npos) << text;
  EXPECT_EQ(title, "Fused shader: Algorithm 4-F (B_r = 64, B_c = " + std::to_string(B_c) + ")");
  // Its button (under the heading, unfolded by a click) puts Algorithm 4-F's listing in the stepper: on the
  // CPU, the model run with FlashAttention.
  std::string heading = title;  // a comma in an action's argument is written \,
  for (size_t k = heading.find(','); k != std::string::npos; k = heading.find(',', k + 2)) heading.replace(k, 1, "\\,");
  r = run_app("", "attention:gpu,open:gpu,click-item:" + heading +
                      ",click-item:Step through Algorithm 4-F (FlashAttention) on the CPU");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["attention_backend"], "cpu");
  EXPECT_EQ(r.state["config"]["attention"], "flash");
  EXPECT_EQ(r.state["event"]["alg"], 104);
  EXPECT_EQ(r.state["event"]["line"], 0);
}

// The model builder makes a model that runs Algorithm 4-F with the learner's block sizes, and refuses a
// block size under 1.
TEST(GuiFlash, ModelBuilderMakesAFlashAttentionModel) {
  AppRun r = run_app("", "builder:open,builder:set:attention=flash,builder:set:block_r=2,builder:set:block_c=5,"
                         "builder:create,goto:104:6:1:1,open:attention");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["config"]["attention"], "flash");
  EXPECT_EQ(r.state["config"]["block_r"], 2);
  EXPECT_EQ(r.state["config"]["block_c"], 5);
  EXPECT_EQ(r.state["flash_blocks"]["n_i"], 4);  // ⌈7/2⌉
  EXPECT_EQ(r.state["flash_blocks"]["n_j"], 2);  // ⌈7/5⌉
  r = run_app("", "builder:open,builder:set:block_r=0");
  EXPECT_NE(r.output.find("block_r must be a whole number ≥ 1"), std::string::npos) << r.output;
}

// Lesson 12 ends on line 16 with max |Ṽ_flash − Ṽ| as its focal value, every block of the head seen.
TEST(GuiFlash, LessonEndsOnTheComparison) {
  const AppRun r = run_app("", "lesson-open:12-attention-without-the-l-by-l-matrix,lesson-go:8");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.state["lesson"]["resolved"].get<bool>()) << r.state["lesson"]["error"];
  EXPECT_EQ(r.state["event"]["alg"], 104);
  EXPECT_EQ(r.state["event"]["line"], 16);
  EXPECT_EQ(r.state["lesson"]["focal_value"], "max |Ṽ_flash − Ṽ|");
  const json f = r.state["flash_blocks"];
  EXPECT_TRUE(f["drawn"].get<bool>());
  for (const json& b : f["blocks"]) EXPECT_NE(b["state"], "unseen");
  // The tab says the comparison the step bound (its value is checked against Algorithm 4 headless).
  const std::string c = f["comparison"];
  EXPECT_NE(c.find("max |Ṽ_flash − Ṽ| = "), std::string::npos) << c;
  EXPECT_NE(c.find("floats, Algorithm 4's S = 49"), std::string::npos) << c;  // ℓ_z·ℓ_x = 7·7
}

}  // namespace

}  // namespace test_gui_flash
