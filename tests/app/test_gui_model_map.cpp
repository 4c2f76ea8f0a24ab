// The model map and the head view in the real app at 1280×720 (issue 26, items 1, 2, 6): the lit
// box follows the cursor and shows whole (the visibility check of the every-screen issue); a real
// click on a box (its rectangle from --dump-state) jumps to that box's first step, as map-click does;
// a 12-layer, 12-head model (builder:set:L=12) scrolls its last head into view; the head view's
// lines are one per unmasked pair, and hovering a token with the pointer keeps only its lines.
// At 1280×720, 1366×768 and 1920×1080: GPT-2's shape and the encoder-decoder fit the panel's width
// (every box, and the map's extent with its bus, inside the child's visible content across), GPT-2's
// 12 heads numbered; the head view's token rows span at least 80% of its panel's height.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>

#include "gui_harness.hpp"

namespace test_gui_model_map {

namespace {

using gui::AppRun;
using gui::json;

AppRun run_720(const std::string& actions) {
  return gui::run_app_sized(1280, 720, "--no-ini", actions);
}

struct Screen {
  int w, h;
};
constexpr Screen kScreens[] = {{1280, 720}, {1366, 768}, {1920, 1080}};

// Runs the app at each of kScreens with `actions` and hands `check` the run's `panel` state (named in
// failures by its screen), after checking that the app ended well and drew the panel.
void at_every_screen(const std::string& actions, const char* panel, const std::function<void(const AppRun&, const json&)>& check) {
  for (const Screen sc : kScreens) {
    SCOPED_TRACE(std::to_string(sc.w) + "x" + std::to_string(sc.h));
    const AppRun r = gui::run_app_sized(sc.w, sc.h, "--no-ini", actions);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json& p = r.state[panel];
    ASSERT_TRUE(p["drawn"].get<bool>()) << p;
    check(r, p);
  }
}

// A 12-layer, 12-head GPT: GPT-2's L and H (the geometry depends on nothing else), small d_e.
const std::string kGpt2Shape = "builder:open,builder:set:L=12,builder:set:H=12,builder:set:d_e=48,builder:set:d_attn=4,"
                               "builder:set:d_mid=4,builder:create,close:builder,";

// Every box and the map's extent lie inside the child's visible content across (ImGui places
// rectangles at whole pixels: half a pixel of slack).
void expect_fits_across(const json& m) {
  const double left = m["view"][0].get<double>() - 0.5, right = left + m["view"][2].get<double>() + 1.0;
  ASSERT_GT(right - left, 100) << m["view"];
  EXPECT_GE(m["extent"][0].get<double>(), left);
  EXPECT_LE(m["extent"][0].get<double>() + m["extent"][2].get<double>(), right) << m["extent"] << " in " << m["view"];
  for (const json& b : m["boxes"]) {
    EXPECT_GE(b["rect"][0].get<double>(), left) << b;
    EXPECT_LE(b["rect"][0].get<double>() + b["rect"][2].get<double>(), right) << b << " in " << m["view"];
  }
}

const json* map_box(const AppRun& r, const std::string& id) {
  for (const json& b : r.state["model_map"]["boxes"])
    if (b["id"] == id) return &b;
  return nullptr;
}

TEST(GuiModelMap, ACursorLightsItsBoxAndARealClickJumpsToABoxsFirstStep) {
  const AppRun r = run_720("open:modelmap,goto:4:6:2:2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& m = r.state["model_map"];
  EXPECT_TRUE(m["drawn"].get<bool>());
  EXPECT_EQ(m["lit"], "l2.attn.h2");
  const json* lit = map_box(r, "l2.attn.h2");
  ASSERT_TRUE(lit);
  EXPECT_TRUE((*lit)["visible"].get<bool>()) << *lit;
  const json* mlp = map_box(r, "l1.mlp");
  ASSERT_TRUE(mlp);
  ASSERT_TRUE((*mlp)["visible"].get<bool>()) << *mlp;
  // The pointer on l1.mlp's box, a press: the cursor moves to its first step, the same step map-click finds.
  const AppRun clicked = run_720("open:modelmap,goto:4:6:2:2,click:" + gui::centre((*mlp)["rect"]));
  ASSERT_EQ(clicked.exit_code, 0) << clicked.output;
  EXPECT_EQ(clicked.state["model_map"]["lit"], "l1.mlp");
  const AppRun verb = run_720("open:modelmap,map-click:l1.mlp");
  ASSERT_EQ(verb.exit_code, 0) << verb.output;
  EXPECT_EQ(clicked.state["cursor"], verb.state["cursor"]);
  EXPECT_EQ(verb.state["model_map"]["lit"], "l1.mlp");
  const AppRun bad = run_720("open:modelmap,map-click:nope");
  EXPECT_NE(bad.output.find("map-click needs a box id"), std::string::npos) << bad.output;
}

TEST(GuiModelMap, TwelveLayersScrollTheLitHeadIntoView) {
  const AppRun r = run_720("builder:open,builder:set:L=12,builder:set:H=12,builder:set:d_e=48,builder:set:d_attn=4,"
                           "builder:set:d_mid=4,builder:create,close:builder,open:modelmap,goto:4:6:12:12");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["model_map"]["lit"], "l12.attn.h12");
  int layers = 0;
  for (const json& b : r.state["model_map"]["boxes"]) layers += b["kind"] == "layer";
  EXPECT_EQ(layers, 12);
  const json* lit = map_box(r, "l12.attn.h12");
  ASSERT_TRUE(lit);
  EXPECT_TRUE((*lit)["visible"].get<bool>()) << *lit;
}

TEST(GuiModelMap, ABackwardStepLightsItsBoxInTheBackwardColour) {
  // A traced training step (Algorithm 13), the cursor on the adjoint of Algorithm 10 line 8 (the MLP) of layer 2.
  const AppRun r = run_720("train-trace,open:modelmap,goto-adjoint:10:8:2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["model_map"]["lit"], "l2.mlp");
  EXPECT_EQ(r.state["model_map"]["lit_pass"], "backward");
}

TEST(GuiHeadView, HoveringATokenWithThePointerKeepsOnlyItsLines) {
  const AppRun r = run_720("open:headview,goto:4:6:1:1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& v = r.state["head_view"];
  ASSERT_TRUE(v["drawn"].get<bool>()) << v;
  const size_t n = v["queries"].size();
  const size_t H = v["heads"].size();
  EXPECT_EQ(v["lines_shown"].size(), H * n * (n + 1) / 2);  // causal: the pairs t_z ≤ t_x of each head
  const json* query = nullptr;
  for (const json& t : v["tokens"])
    if (t["side"] == "query" && t["t"] == 3) query = &t;
  ASSERT_TRUE(query);
  const std::string file = (std::filesystem::temp_directory_path() / "sf-gui-head-view.svg").string();
  const AppRun hovered = run_720("open:headview,goto:4:6:1:1,mouse:" + gui::centre((*query)["rect"]) + ",wait,head-view-export:svg:" + file);
  ASSERT_EQ(hovered.exit_code, 0) << hovered.output;
  const json& hv = hovered.state["head_view"];
  EXPECT_EQ(hv["hover"]["side"], "query");
  EXPECT_EQ(hv["lines_shown"].size(), H * 3);  // query 3 sees keys 1 … 3 in each head
  for (const json& l : hv["lines_shown"]) EXPECT_EQ(l[2], 3);
  EXPECT_TRUE(std::filesystem::exists(file));
  std::filesystem::remove(file);
}

TEST(GuiModelMap, Gpt2ShapeFitsThePanelAtEveryScreenSizeWithItsHeadsNumbered) {
  at_every_screen(kGpt2Shape + "open:modelmap,goto:4:6:12:12", "model_map", [](const AppRun& r, const json& m) {
    expect_fits_across(m);
    for (int h = 1; h <= 12; ++h) {
      const json* b = map_box(r, "l1.attn.h" + std::to_string(h));
      ASSERT_TRUE(b) << h;
      EXPECT_EQ((*b)["label"], std::to_string(h));
    }
    const json* lit = map_box(r, "l12.attn.h12");
    ASSERT_TRUE(lit);
    EXPECT_TRUE((*lit)["visible"].get<bool>()) << *lit;
  });
}

TEST(GuiModelMap, EncoderDecoderFitsThePanelAtEveryScreenSize) {
  at_every_screen("example:3,open:modelmap,wait", "model_map", [](const AppRun& r, const json& m) {
    EXPECT_TRUE(map_box(r, "dec.l1.cross"));
    expect_fits_across(m);
  });
}

TEST(GuiHeadView, TokenRowsFillThePanelsHeightAtEveryScreenSize) {
  at_every_screen("open:headview,goto:4:6:1:1", "head_view", [](const AppRun&, const json& v) {
    const double top = v["view"][1].get<double>(), height = v["view"][3].get<double>();
    double first = 1e9, last = -1e9;
    for (const json& t : v["tokens"]) {
      const double y = t["rect"][1].get<double>(), h = t["rect"][3].get<double>();
      first = std::min(first, y), last = std::max(last, y + h);
      EXPECT_GE(y, top - 0.5) << t;  // every token shows: the default prompt fits without scrolling
      EXPECT_LE(y + h, top + height + 0.5) << t;
    }
    EXPECT_GE(last - first, 0.8 * height) << "tokens from " << first << " to " << last << " in " << v["view"];
  });
}

}  // namespace

}  // namespace test_gui_model_map
