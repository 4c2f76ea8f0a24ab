// The Vision tab in the real app at 1280×720 (issue 26 item 5): a vision transformer opened, the tab
// is there (and only for a vit), drawn whole; the verbs pick a test digit, draw a pixel and choose the
// layer and head; --dump-state's "vision" object says what the tab shows (P[:, 1], the prediction,
// the class token's weights), and the pixel painted with the mouse lands where the pointer was.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gui_harness.hpp"

namespace test_gui_vision {

namespace {

using gui::AppRun;
using gui::json;

const std::string kVit = std::string(STEPFORMER_SOURCE_DIR) + "/assets/vit-digits.safetensors";

AppRun run_720(const std::string& actions) { return gui::run_app_sized(1280, 720, "--no-ini", actions); }

bool has_tab(const AppRun& r, const std::string& label) {
  for (const json& t : r.state["inspector_tabs"])
    if (t["label"].get<std::string>().find(label) != std::string::npos) return true;
  return false;
}

double sum(const json& a) {
  double s = 0;
  for (const json& x : a) s += x.get<double>();
  return s;
}

TEST(GuiVision, TheTabShowsTheTestDigitItsPAndTheClassTokensAttention) {
  const AppRun text = run_720("open:vision");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_FALSE(has_tab(text, "Vision"));  // the default model reads text
  EXPECT_FALSE(text.state.contains("vision"));

  const AppRun r = run_720("load:" + kVit + ",open:vision,vision-digit:3,vision-layer:2,vision-head:2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has_tab(r, "Vision"));
  EXPECT_FALSE(has_tab(r, "Fill-in"));  // a vit fills in nothing
  const json& v = r.state["vision"];
  EXPECT_TRUE(v["drawn"].get<bool>()) << v;
  EXPECT_TRUE(v["canvas_visible"].get<bool>()) << v;  // the image shows whole at 1280×720
  EXPECT_EQ(v["test_index"], 3);
  EXPECT_EQ(v["layer"], 2);
  EXPECT_EQ(v["head"], 2);
  ASSERT_EQ(v["image"].size(), 64u);
  ASSERT_EQ(v["P"].size(), 10u);
  EXPECT_NEAR(sum(v["P"]), 1.0, 1e-5);  // a softmax column in float32
  ASSERT_EQ(v["weights"].size(), 5u);  // ℓ_x = 1 + (8/4)²
  EXPECT_NEAR(sum(v["weights"]), 1.0, 1e-5);
  int argmax = 0;
  for (int c = 1; c < 10; ++c)
    if (v["P"][c].get<double>() > v["P"][argmax].get<double>()) argmax = c;
  EXPECT_EQ(v["predicted"], argmax);
  EXPECT_GE(v["true_class"].get<int>(), 0);

  // Another head and the mean change the weights, not P; a drawn pixel changes the image and P.
  const AppRun mean = run_720("load:" + kVit + ",open:vision,vision-digit:3,vision-layer:2,vision-head:mean");
  ASSERT_EQ(mean.exit_code, 0) << mean.output;
  EXPECT_EQ(mean.state["vision"]["head"], "mean");
  EXPECT_EQ(mean.state["vision"]["P"], v["P"]);
  EXPECT_NE(mean.state["vision"]["weights"], v["weights"]);
  const AppRun drawn = run_720("load:" + kVit + ",open:vision,vision-digit:3,vision-clear,vision-pixel:4:5:16");
  ASSERT_EQ(drawn.exit_code, 0) << drawn.output;
  const json& d = drawn.state["vision"];
  EXPECT_EQ(d["test_index"], 0);
  EXPECT_EQ(d["true_class"], -1);
  int lit = 0;
  for (const json& p : d["image"]) lit += p.get<int>() != 0;
  EXPECT_EQ(lit, 1);
  EXPECT_EQ(d["image"][3 * 8 + 4], 16);
  EXPECT_NE(d["P"], v["P"]);

  // Bad arguments are refused with a message, and the app goes on to the end of the script.
  const AppRun bad = run_720("load:" + kVit + ",open:vision,vision-digit:361,vision-head:9,vision-pixel:9:1:1");
  ASSERT_EQ(bad.exit_code, 3) << bad.output;  // 3: a script action was refused (the app ran on)
  EXPECT_NE(bad.output.find("1 … 360"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("vision-head needs H"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("row and column are 1 … 8"), std::string::npos) << bad.output;
}

TEST(GuiVision, ALeftClickOnTheImagePaintsThePixelUnderThePointer) {
  const AppRun first = run_720("load:" + kVit + ",open:vision,vision-clear");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const json& c = first.state["vision"]["canvas"];  // x0, y0, x1, y1
  const double x0 = c[0], y0 = c[1], cell = (c[2].get<double>() - x0) / 8;
  // The centre of row 2, column 7.
  const std::string at = std::to_string(static_cast<int>(std::lround(x0 + 6.5 * cell))) + ":" +
                         std::to_string(static_cast<int>(std::lround(y0 + 1.5 * cell)));
  const AppRun r = run_720("load:" + kVit + ",open:vision,vision-clear,click:" + at);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["vision"]["image"][1 * 8 + 6], 16) << r.state["vision"]["image"];
}

}  // namespace

namespace {

// File › Examples' fourth entry is the vit: it opens on test digit 1 with the Vision tab drawn (no
// open:vision: the tab comes to the front by itself for a newly opened vit), after the default model.
TEST(GuiVision, TheFourthExampleOpensTheVitOnItsVisionTab) {
  const AppRun r = run_720("example:4,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["model"], "vit-digits.safetensors");
  EXPECT_TRUE(has_tab(r, "Vision"));
  const json& v = r.state["vision"];
  EXPECT_TRUE(v["drawn"].get<bool>()) << v;
  EXPECT_EQ(v["test_index"], 1);
  EXPECT_NE(r.state["notice"].get<std::string>().find("Vision transformer"), std::string::npos) << r.state["notice"];
}

}  // namespace

}  // namespace test_gui_vision
