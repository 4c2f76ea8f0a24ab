// The Sampling tab's speculative-decoding section (Algorithm 14-S, not in the paper), driven by its
// --actions verbs: the trace is Algorithm 14-S, its greedy tokens are Algorithm 14's, the counter
// and the rounds are in --dump-state, and a draft with another vocabulary is refused, saying why.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "app/session.hpp"
#include "core/algorithms/algorithms.hpp"
#include "core/io/model_files.hpp"
#include "tests/app/gui_harness.hpp"

namespace test_gui_speculative {

using json = nlohmann::json;
using gui::AppRun;
using gui::run_app;

TEST(GuiSpeculative, GreedySpeculationTracesAlgorithm14SWithAlgorithm14sTokens) {
  const AppRun r = run_app("", "open:sampling,draft:draft.safetensors,spec-tau:0,spec-gen:10,speculate:4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 105);  // algs::speculative_decoding
  const json& sp = r.state["speculative"];
  ASSERT_TRUE(sp["traced"].get<bool>()) << sp;
  EXPECT_EQ(sp["draft"], "draft.safetensors (bundled)");
  // The same prompt and the default model through Algorithm 14 at τ = 0 (headless): the same tokens.
  sf::Session s;
  sf::InferenceOptions plain;
  plain.tau = 0;
  plain.l_gen = 10;
  plain.trim_context = false;
  const sf::InferenceResult expected = sf::dinference(s.tokens(), s.model(), plain);
  ASSERT_EQ(sp["tokens"].size(), expected.y.size());
  for (size_t k = 0; k < expected.y.size(); ++k) EXPECT_EQ(sp["tokens"][k], s.tokenizer().label(expected.y[k])) << k;
  // The counter: one target pass per round, fewer than Algorithm 14's one per token.
  EXPECT_EQ(sp["plain_passes"], 10);
  EXPECT_EQ(sp["target_passes"].get<size_t>(), sp["rounds"].size());
  EXPECT_LT(sp["target_passes"].get<int>(), 10);
  EXPECT_GT(sp["accepted"].get<int>(), 0);
  EXPECT_NE(sp["heading"].get<std::string>().find("proposals accepted"), std::string::npos) << sp["heading"];
  EXPECT_GT(gui::luminance_std(r), 20.0);
}

TEST(GuiSpeculative, StochasticRoundsBindTheDrawsAndTheResidual) {
  const AppRun r = run_app("", "open:sampling,draft:draft.safetensors,spec-tau:1.5,spec-seed:3,spec-gen:12,speculate:4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& sp = r.state["speculative"];
  ASSERT_TRUE(sp["traced"].get<bool>()) << sp;
  bool saw_rejection = false;
  for (const json& round : sp["rounds"]) {
    const int K = round["K"], accepted = round["accepted"];
    const size_t examined = round["r"].size();
    EXPECT_EQ(round["u"].size(), examined);  // τ > 0: one draw per proposal examined
    for (size_t i = 0; i < examined; ++i) {
      const double u = round["u"][i], ratio = round["r"][i];
      EXPECT_EQ(u < std::min(1.0, ratio), static_cast<int>(i) < accepted) << round;  // line 11's rule
    }
    if (accepted < K) {
      saw_rejection = true;
      double total = 0;
      for (const auto& [token, mass] : round["residual"].items()) total += mass.get<double>();
      EXPECT_NEAR(total, 1.0, 1e-5) << round["residual"];  // a distribution (float entries, ≤ 64 of them)
      EXPECT_TRUE(round["residual"].contains(round["y"].get<std::string>())) << round;  // y drawn from it
    }
  }
  EXPECT_TRUE(saw_rejection) << "seed 3 at τ = 1.5 rejects at least one proposal: the residual was not shown";
}

TEST(GuiSpeculative, ADraftWithAnotherVocabularyOrArchitectureIsRefused) {
  const AppRun r = run_app("", "draft:ed.safetensors");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("not decoder-only"), std::string::npos) << r.output;
}

}  // namespace test_gui_speculative
