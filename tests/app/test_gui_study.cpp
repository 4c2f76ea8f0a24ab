// Predict, then reveal in the real app (Xvfb): study:on holds a forward step onto a line with a
// question (the cursor does NOT move); guess:N moves it, scores the guess (right exactly when N is
// the answer the app then reveals) and shows the value; study:off removes the gate.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/app/gui_harness.hpp"

namespace test_gui_study {

using gui::AppRun;
using gui::run_app;

namespace {

// From Algorithm 10 line 1: step into Algorithm 1 (Enter, no question), then onto its line 1
// (e ← W_e[:, v], a matrix: a question); the further steps are held behind it.
const std::string kHeld = "study:on,step-into,step-into,step-into,step-into";

}  // namespace

TEST(GuiStudy, AStepWithAQuestionIsHeldUntilAGuess) {
  const AppRun start = run_app("");
  ASSERT_EQ(start.exit_code, 0) << start.output;
  const int c0 = start.state["cursor"].get<int>();

  const AppRun held = run_app("", kHeld);
  ASSERT_EQ(held.exit_code, 0) << held.output;
  const auto& q = held.state["study"];
  ASSERT_TRUE(q["on"].get<bool>());
  ASSERT_TRUE(q["pending"].get<bool>()) << held.state.dump(2);
  EXPECT_EQ(held.state["cursor"].get<int>(), c0 + 1);  // the Enter event, then held: the cursor did NOT move on
  EXPECT_EQ(q["event"].get<int>(), c0 + 2);             // the step it holds
  EXPECT_EQ(q["asked"].get<int>(), 0);
  const int n = static_cast<int>(q["choices"].size());
  ASSERT_GE(n, 2);
  EXPECT_FALSE(q["question"].get<std::string>().empty());

  const AppRun first = run_app("", kHeld + ",guess:1");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto& s = first.state["study"];
  EXPECT_EQ(first.state["cursor"].get<int>(), c0 + 2);  // the guess moved it onto the held step
  EXPECT_FALSE(s["pending"].get<bool>());
  EXPECT_EQ(s["asked"].get<int>(), 1);
  const int answer = s["last"]["answer"].get<int>();
  ASSERT_GE(answer, 1);
  ASSERT_LE(answer, n);
  EXPECT_EQ(s["right"].get<int>(), answer == 1 ? 1 : 0);
  EXPECT_FALSE(s["last"]["reveal"].get<std::string>().empty());

  // The same question (seeded) answered with the revealed answer, then with another choice.
  const AppRun right = run_app("", kHeld + ",guess:" + std::to_string(answer));
  EXPECT_EQ(right.state["study"]["right"].get<int>(), 1);
  EXPECT_EQ(right.state["study"]["asked"].get<int>(), 1);
  const AppRun wrong = run_app("", kHeld + ",guess:" + std::to_string(answer % n + 1));
  EXPECT_EQ(wrong.state["study"]["right"].get<int>(), 0);
  EXPECT_EQ(wrong.state["study"]["asked"].get<int>(), 1);

  // Skipping moves on without scoring.
  const AppRun skipped = run_app("", kHeld + ",guess-skip");
  EXPECT_EQ(skipped.state["cursor"].get<int>(), c0 + 2);
  EXPECT_EQ(skipped.state["study"]["asked"].get<int>(), 0);
  EXPECT_EQ(skipped.state["study"]["skipped"].get<int>(), 1);
}

TEST(GuiStudy, StudyOffRemovesTheGate) {
  const AppRun start = run_app("");
  const int c0 = start.state["cursor"].get<int>();
  const AppRun r = run_app("", kHeld + ",study:off,step-into,step-into");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(r.state["study"]["on"].get<bool>());
  EXPECT_FALSE(r.state["study"]["pending"].get<bool>());
  EXPECT_EQ(r.state["cursor"].get<int>(), c0 + 3);  // held at c0 + 1, then two free steps
}

TEST(GuiStudy, AGuessWithoutAQuestionIsAClearError) {
  const AppRun r = run_app("", "guess:1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("no question is pending"), std::string::npos) << r.output;
  const AppRun bad = run_app("", kHeld + ",guess:99");
  EXPECT_NE(bad.output.find("guess takes a choice from 1 to"), std::string::npos) << bad.output;
  EXPECT_TRUE(bad.state["study"]["pending"].get<bool>());  // the question is still there: nothing lost
}

}  // namespace test_gui_study
