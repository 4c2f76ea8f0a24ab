// The Experiments tab's logic (app/logic/experiment_session) on a real Session, headless: the
// stepper shows the patched run on the same step, undo returns bit for bit to the model's own run,
// bad requests are refused with a message and change nothing.
#include <gtest/gtest.h>

#include "app/logic/experiment_session.hpp"
#include "app/session.hpp"

namespace test_session_experiments {

using namespace sf;

namespace {

// Every value of every event equal, bit for bit (−∞ = −∞).
void expect_same_trace(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a.events[k].values.size(), b.events[k].values.size());
    for (size_t i = 0; i < a.events[k].values.size(); ++i) {
      const Value &va = a.events[k].values[i], &vb = b.events[k].values[i];
      ASSERT_EQ(va.name, vb.name);
      ASSERT_TRUE(va.tokens == vb.tokens);
      ASSERT_EQ(changed_cells(va.m, vb.m), 0) << "event " << k << " " << va.name;
    }
  }
}

const Value* in_scope(const Session& s, const std::string& name) {
  for (const Value* v : s.trace().scope(s.cursor()))
    if (v->name == name) return v;
  return nullptr;
}

}  // namespace

TEST(SessionExperiments, AblateShowsThePatchedRunOnTheSameStepAndUndoReturnsBitForBit) {
  Session s;
  const Trace own = s.trace();
  ASSERT_TRUE(s.jump_to(4, 6, 2, 3));
  const size_t cursor = s.cursor();
  ExperimentSession exp;
  std::string error;
  ASSERT_TRUE(exp.ablate(s, s.cursor(), 2, 3, error)) << error;
  EXPECT_EQ(s.trace_label(), ExperimentSession::kLabel);
  EXPECT_EQ(s.cursor(), cursor);
  EXPECT_TRUE(in_scope(s, "Ṽ")->m.isZero(0));  // the stepper shows the ablated head
  EXPECT_GT(exp.changes().max_abs_dP, 0.0f);
  EXPECT_FALSE(exp.changes().diffs.empty());
  EXPECT_FALSE(exp.sync(s));
  ASSERT_TRUE(exp.undo(s, error)) << error;
  EXPECT_FALSE(exp.active());
  EXPECT_EQ(s.run_kind(), RunKind::Forward);
  EXPECT_EQ(s.cursor(), cursor);
  expect_same_trace(own, s.trace());
}

TEST(SessionExperiments, EditsStackAndUndoPopsTheLast) {
  Session s;
  ASSERT_TRUE(s.jump_to(4, 1, 1, 1));
  ExperimentSession exp;
  std::string error;
  ASSERT_TRUE(exp.edit(s, s.cursor(), "Q", 1, 2, 5.0f, error)) << error;
  EXPECT_EQ(in_scope(s, "Q")->m(0, 1), 5.0f);
  ASSERT_TRUE(exp.edit_weight(s, s.cursor(), "W_q", 1, 1, 0.5f, error)) << error;  // layer 1, head 1's W_q
  ASSERT_EQ(exp.list().size(), 2u);
  EXPECT_NE(exp.list()[1].label.find("layer1.attn.W_q"), std::string::npos) << exp.list()[1].label;
  const float dP2 = exp.changes().max_abs_dP;
  ASSERT_TRUE(exp.toggle_mask(s, s.cursor(), 1, 1, 3, 2, error)) << error;
  EXPECT_EQ(exp.list().size(), 3u);
  ASSERT_TRUE(exp.undo(s, error));
  EXPECT_EQ(exp.changes().max_abs_dP, dP2);  // back to the first two
  EXPECT_EQ(in_scope(s, "Q")->m(0, 1), 5.0f);
  const Trace before = exp.original();
  exp.reset(s);
  EXPECT_FALSE(exp.active());
  expect_same_trace(before, s.trace());
}

TEST(SessionExperiments, BadRequestsAreRefusedAndChangeNothing) {
  Session s;
  ASSERT_TRUE(s.jump_to(4, 1, 1, 1));
  ExperimentSession exp;
  std::string error;
  EXPECT_FALSE(exp.edit(s, s.cursor(), "Q", 99, 1, 1.0f, error));
  EXPECT_NE(error.find("does not fit Q"), std::string::npos) << error;
  EXPECT_FALSE(exp.edit(s, s.cursor(), "nothing", 1, 1, 1.0f, error));
  EXPECT_NE(error.find("no value named nothing"), std::string::npos) << error;
  EXPECT_FALSE(exp.ablate(s, s.cursor(), 9, 1, error));
  EXPECT_NE(error.find("no head 1 in layer 9"), std::string::npos) << error;
  EXPECT_FALSE(exp.edit_weight(s, s.cursor(), "W_nothing", 1, 1, 1.0f, error));
  EXPECT_NE(error.find("no parameter W_nothing"), std::string::npos) << error;
  EXPECT_FALSE(exp.patch(s, s.cursor(), "hi", "X", 1, 0, error));  // another length, every position
  EXPECT_NE(error.find("same length"), std::string::npos) << error;
  EXPECT_FALSE(exp.patch(s, s.cursor(), "hello=", "Y", 1, 0, error));
  EXPECT_NE(error.find("patch what?"), std::string::npos) << error;
  EXPECT_FALSE(exp.active());
  EXPECT_TRUE(s.trace_label().empty());
}

TEST(SessionExperiments, PatchingLayer1sInputFromBGivesBsRunAndComparingAPromptWithItselfIsZero) {
  Session s;
  s.set_prompt("world=");
  const Trace b = s.trace();
  s.set_prompt("hello=");
  ExperimentSession exp;
  std::string error;
  ASSERT_TRUE(exp.patch(s, s.cursor(), "world=", "X", 1, 0, error)) << error;
  // Patched with B's own X, the run is B's: the same float operations on the same values in the same
  // order, so ΔP is 0 here and below; a patch that failed would leave hello='s P, a different prompt's.
  EXPECT_LT(compare_traces(b, s.trace()).max_abs_dP, 1e-6f);
  ASSERT_TRUE(exp.compare_prompt(s, "world=", error)) << error;
  EXPECT_LT(exp.compare()->comparison.max_abs_dP, 1e-6f);  // as above
  exp.reset(s);
  ASSERT_TRUE(exp.compare_prompt(s, "hello=", error)) << error;
  EXPECT_EQ(exp.compare()->comparison.max_abs, 0.0f);
  EXPECT_TRUE(exp.compare()->comparison.diffs.empty());
  EXPECT_EQ(exp.compare()->comparison.matched, s.trace().size());
  ASSERT_TRUE(exp.compare_prompt(s, "world=", error)) << error;
  EXPECT_GT(exp.compare()->comparison.max_abs_dP, 0.0f);
}

TEST(SessionExperiments, CheckpointsOfAnotherShapeAreRefused) {
  Session s;
  ExperimentSession exp;
  std::string error;
  EXPECT_FALSE(exp.compare_model(s, std::string(STEPFORMER_SOURCE_DIR) + "/assets/bert.safetensors", error));
  EXPECT_NE(error.find("checkpoints differ in shape"), std::string::npos) << error;
  ASSERT_TRUE(exp.compare_model(s, std::string(STEPFORMER_SOURCE_DIR) + "/assets/default.safetensors", error)) << error;
  EXPECT_EQ(exp.compare()->comparison.max_abs, 0.0f);
}

// A vision transformer (not in the paper) reads an image, not the prompt's tokens: an experiment re-runs it
// on the image (before session 19 every one failed: "an image must hold 64 pixel intensities … this one has
// 5"), a checkpoint is compared on the image too, and prompt B, which is text, is refused with what to do instead.
TEST(SessionExperiments, AVitsExperimentsRunOnItsImage) {
  Session s;
  std::string error;
  ASSERT_TRUE(s.load_model(assets_dir() + "/vit-digits.safetensors", error)) << error;
  ASSERT_TRUE(s.reads_image());
  const Trace own = s.trace();
  ExperimentSession exp;
  ASSERT_TRUE(exp.ablate(s, s.cursor(), 1, 1, error)) << error;
  EXPECT_EQ(s.trace_label(), ExperimentSession::kLabel);
  EXPECT_GT(exp.changes().max_abs_dP, 0.0f);  // P[:, 1] of the same image with head 1 of layer 1 ablated
  ASSERT_TRUE(exp.undo(s, error)) << error;
  expect_same_trace(own, s.trace());
  ASSERT_TRUE(exp.compare_model(s, assets_dir() + "/vit-digits.safetensors", error)) << error;
  EXPECT_EQ(exp.compare()->comparison.max_abs, 0.0f);  // itself, on the same image
  EXPECT_FALSE(exp.compare_prompt(s, "12", error));
  EXPECT_NE(error.find("reads an 8×8 image"), std::string::npos) << error;
  EXPECT_FALSE(exp.patch(s, s.cursor(), "12", "X", 1, 0, error));
  EXPECT_NE(error.find("no prompt B"), std::string::npos) << error;
  EXPECT_FALSE(exp.active());
}

TEST(SessionExperiments, ANewPromptDropsTheExperiment) {
  Session s;
  ExperimentSession exp;
  std::string error;
  ASSERT_TRUE(exp.ablate(s, 0, 1, 1, error)) << error;
  s.set_prompt("hi");
  EXPECT_TRUE(exp.sync(s));
  EXPECT_FALSE(exp.active());
}

// A comparison holds run B (and checkpoint B's model): it stays while model A is open, whatever the
// prompt (it is compared again with the shown run), and goes when another model is opened, since B
// was made against the old A (the soak found it kept after the monkey's settling, docs/soak.md).
TEST(SessionExperiments, OpeningAnotherModelDropsTheComparison) {
  Session s;
  ExperimentSession exp;
  std::string error;
  const std::string other = std::string(STEPFORMER_SOURCE_DIR) + "/assets/default.safetensors";
  ASSERT_TRUE(exp.compare_model(s, other, error)) << error;
  EXPECT_FALSE(exp.sync(s));
  s.set_prompt("hi");
  EXPECT_FALSE(exp.sync(s));
  ASSERT_NE(exp.compare(), nullptr);
  ASSERT_TRUE(s.load_model(other, error)) << error;  // the same file, opened again: a new model A
  EXPECT_TRUE(exp.sync(s));
  EXPECT_EQ(exp.compare(), nullptr);
  EXPECT_FALSE(exp.sync(s));
}

}  // namespace test_session_experiments
