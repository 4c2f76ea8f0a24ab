// The random-feature attention comparison view (issue 25 item 3; Algorithm 4-R, not in the paper):
// a model built with attention "random_features" runs Algorithm 4-R in its heads, and the Attention tab
// shows softmax's weights beside the implied weights Â, their error, and the error against D, with the
// numbers --dump-state reports (computed by core on the head's own Q, K, V).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/app/gui_harness.hpp"

namespace test_gui_random_features {

using json = nlohmann::json;
using gui::AppRun;
using gui::run_app;

TEST(GuiRandomFeatures, AttentionTabComparesImpliedWeightsWithSoftmaxAndTheErrorAgainstD) {
  const AppRun r = run_app("", "builder:open,builder:set:attention=random_features,builder:set:rf_features=32,"
                               "builder:create,open:attention,goto:106:12:1:2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["config"]["attention"], "random_features");
  EXPECT_EQ(r.state["event"]["alg"], 106);  // the cursor is on Algorithm 4-R's line 12
  const json& v = r.state["rfa_view"];
  ASSERT_TRUE(v.is_object()) << r.state.dump().substr(0, 2000);
  EXPECT_EQ(v["l"], 1);
  EXPECT_EQ(v["h"], 2);
  EXPECT_EQ(v["D"], 32);
  // Both weight matrices are ℓ_z × ℓ_x with columns summing to 1 (no guarded column here), and they differ.
  const json& A = v["A"];
  const json& A_rf = v["A_rf"];
  ASSERT_EQ(A.size(), A_rf.size());
  ASSERT_GT(A.size(), 1u);
  double differ = 0;
  for (size_t c = 0; c < A[0].size(); ++c) {
    double sum = 0, sum_rf = 0;
    for (size_t row = 0; row < A.size(); ++row) {
      sum += A[row][c].get<double>(), sum_rf += A_rf[row][c].get<double>();
      differ = std::max(differ, std::abs(A[row][c].get<double>() - A_rf[row][c].get<double>()));
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << c;  // float softmax: within a few ulps of 1 per entry
    if (v["guarded"] == 0) EXPECT_NEAR(sum_rf, 1.0, 1e-4) << c;
  }
  EXPECT_NEAR(v["max_weights"].get<double>(), differ, 1e-6);  // the trace's number is the view's
  // The chart: D = 8 … 256, the mean error over the seeds falling from the smallest D to the largest.
  const json& curve = v["curve"];
  ASSERT_EQ(curve.size(), 6u);
  EXPECT_EQ(curve[0]["D"], 8);
  EXPECT_EQ(curve[5]["D"], 256);
  EXPECT_GT(curve[0]["weights_mean"].get<double>(), curve[5]["weights_mean"].get<double>());
  EXPECT_GT(curve[0]["weights_sd"].get<double>(), 0);
}

// With the GPU attention on, a random-feature model's calls run Algorithm 4-R on the GPU (shaders/rf_*.comp):
// each call says so and lists 4-R's dispatches (never Algorithm 4's under 4-R's name).
TEST(GuiRandomFeatures, GpuAttentionRunsRandomFeatureCallsOnTheGpu) {
  const AppRun r = run_app("", "builder:open,builder:set:attention=random_features,builder:create,close:builder,"
                               "attention:gpu,open:gpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(r.state["attention_backend"], "gpu") << r.state["notice"];  // as Gui.GpuAttention…: Mesa's GL 4.3 here
  const json& calls = r.state["gpu_calls"];
  ASSERT_FALSE(calls.empty()) << r.state.dump().substr(0, 2000);
  for (const json& c : calls) {
    EXPECT_NE(c["kind"].get<std::string>().find("random features (Algorithm 4-R"), std::string::npos) << c["kind"];
    EXPECT_NE(c["kind"].get<std::string>().find("on the GPU"), std::string::npos) << c["kind"];
    bool lines_4_to_13 = false;
    for (const json& d : c["dispatches"]) lines_4_to_13 = lines_4_to_13 || d["lines"] == "Alg. 4-R L8–13";
    EXPECT_TRUE(lines_4_to_13) << c.dump();
    EXPECT_LT(c["max_diff"].get<double>(), 1e-3) << "the GPU's Ṽ against core's 4-R on the same inputs";
  }
}

}  // namespace test_gui_random_features
