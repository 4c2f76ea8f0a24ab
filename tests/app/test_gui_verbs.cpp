// The input verbs (app/script_runner.hpp): clicks, drags and click-item go through the GLFW
// backend's callbacks like a user's mouse, and each test checks what the click did to the app,
// not that the verb ran. Also --dump-state's "current_line", "clipped_text" and "widgets", and the
// dump-state: / screenshot: actions.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "app/session.hpp"
#include "tests/app/gui_harness.hpp"

namespace test_gui_verbs {

namespace fs = std::filesystem;
using json = nlohmann::json;
using gui::AppRun;
using gui::centre;
using gui::run_app;
using gui::widget;

namespace {

// The tensor view showing W_e (64 × 64 in the default model), zoomed by the wheel about its centre.
const std::string kTensorView = "select:W_e,open:tensor,wait";

std::string zoomed_at(const std::string& at) { return kTensorView + ",mouse:" + at + ",wait,wheel:4,wait"; }

bool has_window_named(const json& state, const std::string& name) { return state["windows"].contains(name); }

}  // namespace

TEST(GuiVerbs, ClickAndClickItemPressTheIntoButtonLikeTheSessionSteps) {
  const AppRun first = run_app("");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const json* into = widget(first.state, "Into ▶");
  ASSERT_NE(into, nullptr) << "the toolbar's Into button is not in \"widgets\"";
  const AppRun r = run_app("", "click:" + centre((*into)["rect"]) + ",click-item:Into ▶");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  sf::Session s;
  const size_t start = s.cursor();
  s.step_into();
  s.step_into();
  ASSERT_NE(s.cursor(), start);
  EXPECT_EQ(first.state["cursor"].get<size_t>(), start);
  EXPECT_EQ(r.state["cursor"].get<size_t>(), s.cursor()) << "two clicks on Into ▶ are two steps into";
}

TEST(GuiVerbs, ClickItemFollowsAMenuPathAndOpensTheItemsWindow) {
  const AppRun before = run_app("");
  ASSERT_EQ(before.exit_code, 0) << before.output;
  EXPECT_FALSE(has_window_named(before.state, "About Stepformer###about"));
  const AppRun r = run_app("", "click-item:Help/About Stepformer");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has_window_named(r.state, "About Stepformer###about")) << r.state["windows"];
  const AppRun p = run_app("", "click-item:View/Presentation,wait");
  ASSERT_EQ(p.exit_code, 0) << p.output;
  EXPECT_TRUE(p.state["presentation"]["on"].get<bool>());
}

TEST(GuiVerbs, ClickItemOnALabelNotDrawnFailsAndSaysWhich) {
  const AppRun r = run_app("", "click-item:File/No such item");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("no widget labelled \"No such item\""), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("no widget labelled \"File\""), std::string::npos) << "File is in the menu bar";
}

TEST(GuiVerbs, PointerVerbsSayWhatIsWrongWithTheirCoordinates) {
  const AppRun r = run_app("", "click:10,drag:1:2:3,right-click:5000:10,click-item:");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("click:10: click needs X:Y"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("drag:1:2:3: drag needs X1:Y1:X2:Y2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("5000:10 is outside the 1280x800 window"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("click-item needs a label"), std::string::npos) << r.output;
}

TEST(GuiVerbs, DragPansAZoomedHeatmapByWhatThePointerTravelled) {
  const AppRun view = run_app("", kTensorView);
  ASSERT_EQ(view.exit_code, 0) << view.output;
  const std::string at = centre(view.state["tensor_view"]["cells"]);
  const AppRun zoomed = run_app("", zoomed_at(at));
  ASSERT_EQ(zoomed.exit_code, 0) << zoomed.output;
  const json& z = zoomed.state["tensor_view"]["window"];  // r0, r1, c0, c1
  ASSERT_LT(z[1].get<int>() - z[0].get<int>(), 64) << "the wheel did not zoom: " << z;
  const json& cells = zoomed.state["tensor_view"]["cells"];
  const double cell_w = cells[2].get<double>() / (z[3].get<int>() - z[2].get<int>());
  const double cell_h = cells[3].get<double>() / (z[1].get<int>() - z[0].get<int>());
  // Right and down by (dx, dy): the content follows the pointer, so the window moves up and left.
  const int dx = static_cast<int>(3.5 * cell_w) + 40, dy = static_cast<int>(3.5 * cell_h) + 20;
  const int x = std::stoi(at.substr(0, at.find(':'))), y = std::stoi(at.substr(at.find(':') + 1));
  const AppRun dragged = run_app("", zoomed_at(at) + ",drag:" + at + ":" + std::to_string(x + dx) + ":" +
                                         std::to_string(y + dy) + ",wait");
  ASSERT_EQ(dragged.exit_code, 0) << dragged.output;
  const json& d = dragged.state["tensor_view"]["window"];
  const int rows_moved = z[0].get<int>() - d[0].get<int>(), cols_moved = z[2].get<int>() - d[2].get<int>();
  // The heatmap pans by whole cells at each of the drag's 4 pointer moves and keeps the rest of
  // the way for later, rounded down: between travel / cell − 4 and travel / cell cells in all.
  EXPECT_LE(cols_moved, dx / cell_w) << d;
  EXPECT_GE(cols_moved, std::floor(dx / cell_w) - 4) << d;
  EXPECT_LE(rows_moved, dy / cell_h) << d;
  EXPECT_GE(rows_moved, std::floor(dy / cell_h) - 4) << d;
  EXPECT_EQ(d[1].get<int>() - d[0].get<int>(), z[1].get<int>() - z[0].get<int>()) << "a pan keeps the zoom";
}

TEST(GuiVerbs, DragOnATitleBarMovesTheWindowFromWhereItWasGrabbed) {
  const AppRun before = run_app("");
  ASSERT_EQ(before.exit_code, 0) << before.output;
  const json& p = before.state["windows"]["Pseudocode"];
  const int x = static_cast<int>(p[0].get<float>() + p[2].get<float>() / 2), y = static_cast<int>(p[1].get<float>()) + 8;
  const AppRun r = run_app("", "drag:" + std::to_string(x) + ":" + std::to_string(y) + ":" + std::to_string(x + 100) +
                                   ":" + std::to_string(y + 50) + ",wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& q = r.state["windows"]["Pseudocode"];
  // The window keeps the grab point under the pointer: it moves by the drag's travel, to the
  // pixel (ImGui floors window positions, hence 1 px).
  EXPECT_NEAR(q[0].get<float>() - p[0].get<float>(), 100, 1) << q;
  EXPECT_NEAR(q[1].get<float>() - p[1].get<float>(), 50, 1) << q;
}

TEST(GuiVerbs, RightClickOnAHeatmapOpensItsMenuWhoseItemsClick) {
  const AppRun view = run_app("", kTensorView);
  ASSERT_EQ(view.exit_code, 0) << view.output;
  const std::string at = centre(view.state["tensor_view"]["cells"]);
  EXPECT_EQ(widget(view.state, "Copy caption"), nullptr);
  const AppRun menu = run_app("", kTensorView + ",right-click:" + at + ",wait");
  ASSERT_EQ(menu.exit_code, 0) << menu.output;
  const json* copy = widget(menu.state, "Copy caption");
  ASSERT_NE(copy, nullptr) << "no heatmap menu after the right-click";
  EXPECT_EQ((*copy)["window"].get<std::string>().rfind("##Popup", 0), 0u) << (*copy)["window"];
  const AppRun copied = run_app("", kTensorView + ",right-click:" + at + ",click-item:Copy caption");
  ASSERT_EQ(copied.exit_code, 0) << copied.output;
  EXPECT_EQ(copied.state["notice"].get<std::string>().rfind("Copied: ", 0), 0u) << copied.state["notice"];
}

TEST(GuiVerbs, DumpStateAndScreenshotActionsWriteMidRun) {
  const fs::path dir = fs::temp_directory_path() / ("stepformer-verbs-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string mid = (dir / "mid.json").string(), shot = (dir / "mid.png").string();
  const AppRun r = run_app("", "step-into,dump-state:" + mid + ",screenshot:" + shot + ",step-into,step-into");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(fs::exists(mid));
  std::ifstream f(mid);
  const json m = json::parse(f);
  sf::Session s;
  s.step_into();
  EXPECT_EQ(m["cursor"].get<size_t>(), s.cursor());
  s.step_into();
  s.step_into();
  EXPECT_EQ(r.state["cursor"].get<size_t>(), s.cursor());
  int w = 0, h = 0, comp = 0;
  ASSERT_TRUE(stbi_info(shot.c_str(), &w, &h, &comp)) << shot;
  EXPECT_EQ(w, 1280);
  EXPECT_EQ(h, 800);
  fs::remove_all(dir);
}

TEST(GuiVerbs, CurrentLineIsVisibleUntilAWindowCoversItAndNullWithoutItsPanel) {
  const AppRun r = run_app("");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& line = r.state["current_line"];
  EXPECT_TRUE(line["visible"].get<bool>());
  EXPECT_EQ(line["rect"], r.state["highlight"]);
  // The About window opens over the pseudocode's left half, where the current line is.
  const AppRun covered = run_app("", "open:about,wait");
  ASSERT_EQ(covered.exit_code, 0) << covered.output;
  ASSERT_TRUE(gui::inside(covered.state["current_line"]["rect"], covered.state["windows"]["Pseudocode"]));
  EXPECT_FALSE(covered.state["current_line"]["visible"].get<bool>());
  const AppRun closed = run_app("", "close:pseudocode,wait");
  ASSERT_EQ(closed.exit_code, 0) << closed.output;
  EXPECT_TRUE(closed.state["current_line"].is_null()) << "no pseudocode panel, no current line";
}

TEST(GuiVerbs, ClippedTextListsAPromptWiderThanItsFieldAndNotAShortOne) {
  const std::string long_prompt(200, 'a');
  auto prompt_clipped = [](const AppRun& r, const std::string& prompt) {
    for (const json& c : r.state["clipped_text"])
      if (c["text"] == prompt && c["window"] == "Toolbar") return true;
    return false;
  };
  const AppRun r = run_app("", "prompt:" + long_prompt);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(prompt_clipped(r, long_prompt)) << r.state["clipped_text"];
  const AppRun short_one = run_app("", "prompt:abc");
  ASSERT_EQ(short_one.exit_code, 0) << short_one.output;
  EXPECT_FALSE(prompt_clipped(short_one, "abc")) << short_one.state["clipped_text"];
}

}  // namespace test_gui_verbs
