// Algorithm 14-S in the Session, headless: the draft candidates are the bundled and opened GPT
// models with the open model's vocabulary; a traced greedy run gives Algorithm 14's tokens and puts
// the cursor in Algorithm 14-S; a new model with another vocabulary drops the draft, saying why.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "app/logic/session_actions.hpp"
#include "app/session.hpp"
#include "core/trace/vocabulary.hpp"

namespace test_session_speculative {

using namespace sf;

TEST(SessionSpeculative, CandidatesAreTheGptModelsWithTheOpenModelsVocabulary) {
  Session s;
  const std::vector<DraftCandidate> c = s.speculation().candidates(s.model());
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c.front().name, "draft.safetensors (bundled)");
  const auto has = [&](const std::string& file) {
    return std::any_of(c.begin(), c.end(), [&](const DraftCandidate& d) {
      return std::filesystem::path(d.path).filename() == file;
    });
  };
  EXPECT_TRUE(has("default.safetensors"));  // the open model itself: every proposal accepted
  EXPECT_FALSE(has("bert.safetensors"));    // not decoder-only
  EXPECT_FALSE(has("ed.safetensors"));
}

TEST(SessionSpeculative, GreedyRunTracesAlgorithm14SWithAlgorithm14sTokens) {
  Session s;
  std::string error;
  ASSERT_EQ(apply_session_action(s, "draft", "draft.safetensors", error), ActionResult::Done) << error;
  s.speculation().settings = {.K = 3, .tau = 0, .l_gen = 9, .seed = 1};
  ASSERT_TRUE(s.trace_speculate());
  s.wait_for_trace();
  EXPECT_EQ(s.run_kind(), RunKind::Speculate);
  EXPECT_EQ(s.current().alg, algs::speculative_decoding);
  InferenceOptions plain;
  plain.tau = 0;
  plain.l_gen = 9;
  plain.trim_context = false;
  EXPECT_EQ(s.speculation().result().y, dinference(s.tokens(), s.model(), plain).y);
  EXPECT_EQ(s.speculation().result().plain_passes(), 9);
  EXPECT_LT(s.speculation().result().target_passes, 9);
}

TEST(SessionSpeculative, ANewModelWithAnotherVocabularyDropsTheDraft) {
  Session s;
  std::string error;
  ASSERT_EQ(apply_session_action(s, "draft", "draft.safetensors", error), ActionResult::Done) << error;
  ModelConfig other;
  other.vocab = {"x", "y"};
  s.set_model(Model::initialised(other, 1), "tiny");
  EXPECT_EQ(s.speculation().draft(), nullptr);
  EXPECT_NE(s.speculation().error().find("N_V differs: the target's is 5, the draft's 64"), std::string::npos)
      << s.speculation().error();
  EXPECT_FALSE(s.trace_speculate());
  EXPECT_EQ(apply_session_action(s, "speculate", "2", error), ActionResult::Failed);
  EXPECT_NE(error.find("no draft model with this model's vocabulary"), std::string::npos) << error;
}

}  // namespace test_session_speculative
