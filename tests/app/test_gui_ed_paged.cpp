// The Translation tab's paged KV cache (PagedAttention for Algorithm 15, not in the paper;
// core/algorithms/paged_kv.hpp): kv-cache:on, kv-paged:on and kv-block:B page the decoder's
// self-attention cache; the tab draws the block table of the selected step, read back here from
// --dump-state's "sampling_cut"."translation_steps".
#include <gtest/gtest.h>

#include <string>

#include "gui_harness.hpp"

namespace test_gui_ed_paged {

using gui::AppRun;
using gui::json;
using gui::run_app;

namespace {

// Example 3 is the bundled encoder-decoder. Step i runs x̂ of i tokens ([bos_token] and the i − 1
// drawn before it): with B = 2 the table holds i tokens in ⌈i/2⌉ blocks, physical 1, 2, … in order.
TEST(GuiEdPaged, TheTranslationTabShowsTheDecodersBlockTable) {
  const std::string run = "example:3,translate-tau:0,kv-cache:on,";
  const AppRun paged = run_app("", run + "kv-paged:on,kv-block:2,translate-all,open:translation,wait");
  const AppRun plain = run_app("", run + "translate-all,open:translation,wait");
  ASSERT_EQ(paged.exit_code, 0) << paged.output;
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(paged.state["translated"], plain.state["translated"]);  // the same x̂
  const json& steps = paged.state["sampling_cut"]["translation_steps"];
  ASSERT_GE(steps.size(), 3u);
  EXPECT_EQ(steps[0]["block_table"], (json{{"block_size", 2}, {"tokens", 1}, {"blocks", {1}}}));
  EXPECT_EQ(steps[1]["block_table"], (json{{"block_size", 2}, {"tokens", 2}, {"blocks", {1}}}));
  EXPECT_EQ(steps[2]["block_table"], (json{{"block_size", 2}, {"tokens", 3}, {"blocks", {1, 2}}}));
  const int n = static_cast<int>(steps.size());
  EXPECT_EQ(steps[n - 1]["block_table"]["tokens"], n);
  EXPECT_EQ(steps[n - 1]["block_table"]["blocks"].size(), static_cast<size_t>((n + 1) / 2));
  EXPECT_FALSE(plain.state["sampling_cut"]["translation_steps"][0].contains("block_table"));
}

}  // namespace

}  // namespace test_gui_ed_paged
