// Top-k / top-p in the Sampling and Translation tabs and the paged KV cache's block view (not in the
// paper; core/algorithms/sampling.hpp, paged_kv.hpp), driven by --actions and read back from
// --dump-state's "sampling_cut".
#include <gtest/gtest.h>

#include <string>

#include "gui_harness.hpp"

namespace test_gui_top_k {

using gui::AppRun;
using gui::json;
using gui::run_app;

namespace {

std::string str(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

// The bundled default model on "hello=", four tokens at τ = 1.5 (flat enough that the cut matters).
const std::string kGen = "open:sampling,stop-at-eos:off,tau:1.5,gen:4,seed:3,";

TEST(GuiTopK, TheSamplingTabDrawsTheKeptSetAndItsCutLine) {
  const AppRun r = run_app("", kGen + "top-k:3,top-p:0.9,generate-all");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& c = r.state["sampling_cut"];
  EXPECT_EQ(c["top_k"], 3);
  EXPECT_DOUBLE_EQ(c["top_p"].get<double>(), 0.9);
  const json& steps = c["generation_steps"];
  ASSERT_EQ(steps.size(), 4u);
  for (const json& s : steps) {
    ASSERT_GE(s["kept"].get<int>(), 1) << s;
    ASSERT_LE(s["kept"].get<int>(), 3) << s;
    ASSERT_TRUE(s.contains("kept_tokens")) << s;
    EXPECT_EQ(s["kept_tokens"].size(), s["kept"].get<size_t>());
    bool y_kept = false;
    for (const json& t : s["kept_tokens"]) y_kept |= t == s["y"];
    EXPECT_TRUE(y_kept) << "y was drawn from outside the kept set: " << s;
    EXPECT_NEAR(s["q_sum"].get<double>(), 1.0, 1e-6);  // renormalised (float sum of ≤ 3 terms)
  }
  // The bars' cut line for the last step, as the tab labels it from the trace's cut sub-step.
  const std::string want = "cut by top-k = 3, top-p = 0.90: n = " + std::to_string(steps[3]["kept"].get<int>()) + " of ";
  EXPECT_EQ(str(c["sampling_cut_label"]).rfind(want, 0), 0u) << c["sampling_cut_label"];
}

TEST(GuiTopK, TopK1IsArgmaxAndNoCutIsPlainSampling) {
  const AppRun greedy = run_app("", "open:sampling,stop-at-eos:off,tau:0,gen:6,generate-all");
  const AppRun top1 = run_app("", kGen + "gen:6,top-k:1,generate-all");
  ASSERT_EQ(greedy.exit_code, 0) << greedy.output;
  ASSERT_EQ(top1.exit_code, 0) << top1.output;
  EXPECT_EQ(top1.state["generated_labels"], greedy.state["generated_labels"]);
  const AppRun plain = run_app("", kGen + "generate-all");
  const AppRun off = run_app("", kGen + "top-k:0,top-p:1,generate-all");
  EXPECT_EQ(off.state["generated_labels"], plain.state["generated_labels"]);
  EXPECT_EQ(off.state["sampling_cut"]["sampling_cut_label"], "");
  EXPECT_FALSE(off.state["sampling_cut"]["generation_steps"][0].contains("kept_tokens"));
}

TEST(GuiTopK, BadTopKOrTopPIsRefused) {
  const AppRun r = run_app("", "top-k:x");
  EXPECT_NE(r.output.find("top-k needs a whole number ≥ 1 (0 turns the cut off)"), std::string::npos) << r.output;
  const AppRun p = run_app("", "top-p:0");
  EXPECT_NE(p.output.find("top-p needs a number in (0, 1]"), std::string::npos) << p.output;
  const AppRun b = run_app("", "kv-block:0");
  EXPECT_NE(b.output.find("kv-block needs a whole number of tokens from 1 to 64"), std::string::npos) << b.output;
}

TEST(GuiTopK, TranslationTabTakesTopK) {
  const AppRun greedy = run_app("", "example:3,translate-tau:0,translate-all,open:translation,wait");
  const AppRun top1 = run_app("", "example:3,translate-tau:1.5,translate-top-k:1,translate-all,open:translation,wait");
  ASSERT_EQ(greedy.exit_code, 0) << greedy.output;
  ASSERT_EQ(top1.exit_code, 0) << top1.output;
  EXPECT_EQ(top1.state["translated"], greedy.state["translated"]);
  EXPECT_EQ(top1.state["sampling_cut"]["translate_top_k"], 1);
  EXPECT_EQ(str(top1.state["sampling_cut"]["translation_cut_label"]).rfind("cut by top-k = 1: n = 1 of ", 0), 0u)
      << top1.state["sampling_cut"]["translation_cut_label"];
}

// <bos>hello= is 7 tokens: with B = 4 step 1 caches 7 tokens in blocks 1, 2 (the second holds 3),
// step 2 fills block 2, step 3 takes block 3 for its 9th token. The tokens are those of the unpaged cache.
TEST(GuiTopK, ThePagedCacheShowsItsBlockTable) {
  const std::string gen = "open:sampling,stop-at-eos:off,gen:3,kv-cache:on,";
  const AppRun paged = run_app("", gen + "kv-paged:on,kv-block:4,generate-all");
  const AppRun plain = run_app("", gen + "generate-all");
  ASSERT_EQ(paged.exit_code, 0) << paged.output;
  EXPECT_EQ(paged.state["generated_labels"], plain.state["generated_labels"]);
  const json& steps = paged.state["sampling_cut"]["generation_steps"];
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0]["block_table"], (json{{"block_size", 4}, {"tokens", 7}, {"blocks", {1, 2}}}));
  EXPECT_EQ(steps[1]["block_table"], (json{{"block_size", 4}, {"tokens", 8}, {"blocks", {1, 2}}}));
  EXPECT_EQ(steps[2]["block_table"], (json{{"block_size", 4}, {"tokens", 9}, {"blocks", {1, 2, 3}}}));
  EXPECT_FALSE(plain.state["sampling_cut"]["generation_steps"][0].contains("block_table"));
}

}  // namespace

}  // namespace test_gui_top_k
