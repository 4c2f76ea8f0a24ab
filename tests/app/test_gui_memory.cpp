// Memory a long day would keep (issue 27, item 1; docs/soak.md, session 21): Dear ImGui keeps a window's
// draw buffers at the largest frame it ever drew, unless the app lets them go (trim_draw_lists in
// app/gui_support.cpp, after each rendered frame). Read through --dump-state's "draw_lists".
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "gui_harness.hpp"

namespace test_gui_memory {

using gui::AppRun;
using gui::json;

// The app's rule (app/gui_support.hpp): a window's buffers are let go when they hold over 64 KiB and over
// four times what its last frame used.
constexpr size_t kSlackBytes = 64 * 1024, kSlack = 4;

TEST(GuiMemory, AWindowThatDrewABigFrameLetsItsBuffersGoWhenItDrawsASmallOne) {
  // W_e in the Inspector at 10 px on 1920×1080: thousands of numbers, half a megabyte of vertices.
  const std::string big = "font:10,continue,select:W_e,wait,wait";
  const AppRun r1 = gui::run_app_sized(1920, 1080, "--no-ini", big);
  ASSERT_EQ(r1.exit_code, 0) << r1.output;
  const json& d1 = r1.state["draw_lists"]["largest"];
  ASSERT_EQ(d1["window"], "Inspector") << r1.state["draw_lists"];
  const size_t inspector_big = d1["capacity_bytes"];
  ASSERT_GT(inspector_big, 4 * kSlackBytes) << "the scenario no longer draws a big frame";

  // Then γ (d_e numbers) in the same window, and a few idle frames.
  const AppRun r2 = gui::run_app_sized(1920, 1080, "--no-ini", big + ",select:γ,wait,wait,wait");
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  const json& d2 = r2.state["draw_lists"]["largest"];
  const size_t cap = d2["capacity_bytes"], used = d2["used_bytes"];
  // No window holds more than the rule allows (the frames are idle, so the last frame used what the one
  // before it did), and the Inspector's half megabyte is gone: without the trim it would still be the largest.
  EXPECT_LE(cap, std::max(kSlackBytes, kSlack * used)) << r2.state["draw_lists"];
  EXPECT_LT(cap, inspector_big / 2) << r2.state["draw_lists"];
  const size_t total = r2.state["draw_lists"]["capacity_bytes"];
  EXPECT_LT(total, static_cast<size_t>(r1.state["draw_lists"]["capacity_bytes"])) << r2.state["draw_lists"];
}

}  // namespace test_gui_memory
