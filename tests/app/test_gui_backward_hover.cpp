// Dependencies on hover for gradient cells beyond Algorithm 4 (issue 24, item 4; Stepformer's
// backward listings, not in the paper), in the real app under Xvfb at 1280×720: in one traced
// update of Algorithm 13, the pointer on a cell of the Tensor view's ∇e at Algorithm 6's adjoint
// of line 3, and of ∇Y at Algorithm 5's adjoint of line 4, frames exactly the cells the rule
// names (--dump-state's hover_sources, 0-based blocks [row0, col0, rows, cols]).
#include <gtest/gtest.h>

#include <string>

#include "gui_harness.hpp"

namespace test_gui_backward_hover {

using namespace gui;

namespace {

const std::string kTraced = "open:training,train-step:1,train-trace,";

// The pointer at the centre of cell (row, col) (0-based) of the Tensor view's heatmap, whose cells
// span tensor_view.cells = [x, y, w, h] for a window of rows × cols cells.
std::string cell_centre(const json& tv, int row, int col) {
  const json& c = tv["cells"];
  const json& w = tv["window"];  // r0, r1, c0, c1
  const double cw = c[2].get<double>() / (w[3].get<int>() - w[2].get<int>());
  const double ch = c[3].get<double>() / (w[1].get<int>() - w[0].get<int>());
  return std::to_string(static_cast<int>(c[0].get<double>() + (col + 0.5) * cw)) + ":" +
         std::to_string(static_cast<int>(c[1].get<double>() + (row + 0.5) * ch));
}

// Runs `to` (which leaves `value` in the Tensor view), then the same with the pointer on (row, col).
AppRun hover(const std::string& to, const std::string& value, int row, int col) {
  const AppRun before = run_app_sized(1280, 720, "--no-ini", to);
  EXPECT_EQ(before.exit_code, 0) << before.output;
  EXPECT_EQ(before.state["tensor_view"]["shown"], value);
  return run_app_sized(1280, 720, "--no-ini", to + ",mouse:" + cell_centre(before.state["tensor_view"], row, col) + ",wait");
}

}  // namespace

TEST(GuiBackwardHover, LayerNormAdjointCellFramesItsColumnSources) {
  // The first Algorithm 6 adjoint reached: the final norm's, column t = 1. ∇e[10] (line 3's direct
  // path) = ∇ê[10] γ[10] / √(v + ε), v reading all of e.
  const AppRun r = hover(kTraced + "breakpoint-adjoint:6:3,continue,select:∇e,open:tensor", "∇e", 9, 0);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 6);
  EXPECT_EQ(r.state["event"]["line"], 3);
  EXPECT_EQ(r.state["event"]["pass"], "backward");
  const int d_e = r.state["config"]["d_e"];
  const json& s = r.state["hover_sources"];
  EXPECT_EQ(s["∇ê"], json::parse("[[9, 0, 1, 1]]")) << s;
  EXPECT_EQ(s["γ"], json::parse("[[9, 0, 1, 1]]")) << s;
  EXPECT_EQ(s["e"], json::array({json::array({0, 0, d_e, 1})})) << s;
  EXPECT_EQ(s.size(), 3u) << s;
}

TEST(GuiBackwardHover, MultiHeadAdjointCellFramesAColumnOfW_oAndOfTheIncomingGradient) {
  // Algorithm 5's adjoint of line 4 in layer 2: ∇Y[5, 3] = W_o[:, 5] · ∇Ṽ[:, 3].
  const AppRun r = hover(kTraced + "breakpoint-adjoint:5:4,continue,select:∇Y,open:tensor", "∇Y", 4, 2);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 5);
  EXPECT_EQ(r.state["event"]["line"], 4);
  const int d_e = r.state["config"]["d_e"];
  const json& s = r.state["hover_sources"];
  EXPECT_EQ(s["W_o"], json::array({json::array({0, 4, d_e, 1})})) << s;
  EXPECT_EQ(s["∇Ṽ"], json::array({json::array({0, 2, d_e, 1})})) << s;
  EXPECT_EQ(s.size(), 2u) << s;
}

}  // namespace test_gui_backward_hover
