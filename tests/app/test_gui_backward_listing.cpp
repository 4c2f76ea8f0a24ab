// Stepformer's backward listings in the real app under Xvfb (issue 24, item 2; not in the paper):
// with the cursor on a backward Attention event of a traced training update, the pseudocode panel
// shows Algorithm 4's backward listing, labelled so, with the adjoint of line 6 (or its sub-step)
// highlighted and whole on screen; the call stack names the frames "DTransformer adjoint line 6
// (…, l=2) › MHAttention adjoint line 2 (…, h=4) › Attention adjoint line 6 (…, h=4)"; a breakpoint on a
// backward line stops there and not on the forward line of the same number. At 1280×720 and
// 1366×768, checked through --dump-state.
#include <gtest/gtest.h>

#include <string>

#include "gui_harness.hpp"

namespace test_gui_backward_listing {

using namespace gui;

namespace {

struct Size {
  int w, h;
};
constexpr Size kSizes[] = {{1280, 720}, {1366, 768}};

// One update of Algorithm 13 traced by the Training tab, then the first Attention adjoint's line 6
// (the last layer's last head runs first: l = 2, h = 4 in the default model).
const std::string kToAttentionAdjoint = "open:training,train-step:1,train-trace,breakpoint-adjoint:4:6,continue";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The labels of the call stack's rows (its Selectables), in the order drawn: innermost first.
std::vector<std::string> call_stack_rows(const json& state) {
  std::vector<std::string> rows;
  for (const json& w : state["widgets"])
    if (contains(w["window"].get<std::string>(), "Call stack")) rows.push_back(w["label"].get<std::string>());
  return rows;
}

}  // namespace

TEST(GuiBackwardListing, TheAttentionAdjointShowsTheBackwardListing) {
  for (const Size& s : kSizes) {
    SCOPED_TRACE(std::to_string(s.w) + "×" + std::to_string(s.h));
    const AppRun r = run_app_sized(s.w, s.h, "--no-ini", kToAttentionAdjoint);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(r.state["event"]["alg"], 4) << r.state["event"].dump();
    const json& p = r.state["pseudocode"];
    ASSERT_TRUE(p.is_object()) << "the pseudocode panel drew no listing";
    EXPECT_EQ(p["alg"], 4);
    EXPECT_EQ(p["line"], 6);
    EXPECT_TRUE(p["backward"].get<bool>());
    EXPECT_EQ(p["label"], "not in the paper: Stepformer's backward listing");
    EXPECT_TRUE(contains(p["title"], "Attention adjoint(∇Ṽ")) << p["title"];
    EXPECT_TRUE(contains(p["line_text"], "∇V, ∇A, ∇S from ∇Ṽ")) << p["line_text"];
    EXPECT_EQ(p["step"], -1) << "a Line event highlights the whole line, no single sub-step";
    // The current line is drawn whole on screen.
    ASSERT_TRUE(r.state["current_line"].is_object());
    EXPECT_TRUE(r.state["current_line"]["visible"].get<bool>());
    // The call stack names the backward frames, outermost to innermost.
    const std::vector<std::string> rows = call_stack_rows(r.state);
    ASSERT_GE(rows.size(), 4u) << r.state["widgets"].dump();
    std::string joined;
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) joined += *it + " | ";
    // (n = 1, i = 1: Algorithm 13's sequence and epoch, in force around the update line.)
    const size_t d = joined.find("DTransformer adjoint line 6 (n=1, i=1, l=2)");
    const size_t m = joined.find("MHAttention adjoint line 2 (n=1, i=1, l=2, h=4)");
    const size_t a = joined.find("Attention adjoint line 6 (n=1, i=1, l=2, h=4)", m == std::string::npos ? 0 : m + 12);
    EXPECT_NE(d, std::string::npos) << joined;
    EXPECT_NE(m, std::string::npos) << joined;
    EXPECT_NE(a, std::string::npos) << joined;
    EXPECT_LT(d, m);
    EXPECT_LT(m, a);
  }
}

TEST(GuiBackwardListing, ASubStepOfTheSoftmaxJacobianIsHighlighted) {
  // One step back from the adjoint of line 6 is its last sub-step: ∇S from ∇A through softmax's Jacobian.
  const AppRun r = run_app_sized(1280, 720, "--no-ini", kToAttentionAdjoint + ",step-back");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& p = r.state["pseudocode"];
  ASSERT_TRUE(p.is_object());
  EXPECT_EQ(p["line"], 6);
  EXPECT_TRUE(p["backward"].get<bool>());
  EXPECT_EQ(p["step"], 2);
  EXPECT_TRUE(contains(p["step_text"], "∇S ← (A ⊙ (∇A − 1 (1ᵀ (A ⊙ ∇A)))) / √d_attn")) << p["step_text"];
}

TEST(GuiBackwardListing, ABreakpointOnABackwardLineStopsThereNotOnTheForwardLine) {
  // The adjoint of Algorithm 4's line 4 (∇Q ← K ∇S) comes after its line 6 in the backward pass; the
  // forward's line 4 of the same algorithm ran before the update line and is not a breakpoint.
  const AppRun r = run_app_sized(1280, 720, "--no-ini", "open:training,train-step:1,train-trace,breakpoint-adjoint:4:4,continue");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& p = r.state["pseudocode"];
  ASSERT_TRUE(p.is_object());
  EXPECT_EQ(p["alg"], 4);
  EXPECT_EQ(p["line"], 4);
  EXPECT_TRUE(p["backward"].get<bool>());
  EXPECT_TRUE(contains(p["line_text"], "∇Q ← K ∇S")) << p["line_text"];
}

}  // namespace test_gui_backward_listing
