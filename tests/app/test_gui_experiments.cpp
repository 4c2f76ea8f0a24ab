// The Experiments tab in the real app under Xvfb: exp-* actions ablate a head and undo it; the
// --dump-state report says what is in force and how much P moved.
#include <gtest/gtest.h>

#include "tests/app/gui_harness.hpp"

namespace test_gui_experiments {

using gui::AppRun;
using gui::luminance_std;
using gui::run_app;

TEST(GuiExperiments, AblateThenUndoViaActions) {
  const AppRun on = run_app("", "goto:4:6:1:2,exp-ablate:1:2");
  ASSERT_EQ(on.exit_code, 0) << on.output;
  const auto& e = on.state["experiments"];
  EXPECT_EQ(e["count"], 1);
  EXPECT_NE(e["list"][0].get<std::string>().find("ablate head 2 of layer 1"), std::string::npos) << e.dump();
  EXPECT_GT(e["max_abs_dP"].get<double>(), 0.0);
  EXPECT_GT(e["changed_values"].get<int>(), 0);
  EXPECT_EQ(e["label"], "EXPERIMENT: values differ from the model's own run");
  EXPECT_GT(luminance_std(on), 5.0);

  const AppRun off = run_app("", "goto:4:6:1:2,exp-ablate:1:2,exp-undo");
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_EQ(off.state["experiments"]["count"], 0);
  EXPECT_EQ(off.state["experiments"]["max_abs_dP"].get<double>(), 0.0);
  EXPECT_EQ(off.state["experiments"]["label"], "");
}

TEST(GuiExperiments, EditMaskAndCompareActions) {
  const AppRun r = run_app("", "goto:4:1:1:1,exp-edit:Q:1:2:5,exp-mask:1:1:3:2,exp-weight:W_q:1:1:0.5,exp-compare-prompt:world=");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto& e = r.state["experiments"];
  EXPECT_EQ(e["count"], 3);
  EXPECT_GT(e["compare"]["max_abs_dP"].get<double>(), 0.0);
  EXPECT_EQ(e["compare"]["with"], "prompt 'world='");
}

TEST(GuiExperiments, ABadExperimentActionFailsWithItsReason) {
  const AppRun r = run_app("", "exp-ablate:9:1");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.output.find("no head 1 in layer 9"), std::string::npos) << r.output;
  EXPECT_EQ(r.state["experiments"]["count"], 0);
}

}  // namespace test_gui_experiments
