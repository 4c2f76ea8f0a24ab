// Lessons and presentation mode in the real app under Xvfb: PageDown / PageUp play a lesson (the
// cursor, the panels and the caption follow each stop), a lesson recorded with actions is saved
// and played back, every shipped lesson opens (its panel names are known), the training stops
// of lessons 3 and 7 trace Algorithm 13, and presentation mode enlarges the fonts, turns on the
// high contrast and shows only the stop's panels, then restores everything.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>
#include <vector>

#include "tests/app/gui_harness.hpp"

namespace test_gui_lessons {

namespace {

namespace fs = std::filesystem;
using gui::AppRun;
using gui::run_app;
using json = nlohmann::json;

bool has_window(const AppRun& r, const char* name) { return r.state["windows"].contains(name); }

// The value in the Tensor view (its name, without the "#rows x cols" the dump adds).
std::string tensor_value(const AppRun& r) {
  const std::string v = r.state["tensor_view"]["value"];
  return v.substr(0, v.find('#'));
}

bool tab_shown(const AppRun& r, const std::string& tab) {
  for (const auto& t : r.state["tabs_shown"])
    if (t == tab) return true;
  return false;
}

TEST(GuiLessons, PageDownPlaysLessonTwoStopByStop) {
  const std::string open = "lesson-open:02-one-attention-head";
  AppRun r = run_app("", open + ",key:PageDown,key:PageDown,key:PageDown,key:PageDown");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& l = r.state["lesson"];
  EXPECT_EQ(l["title"], "One attention head, line by line");
  EXPECT_EQ(l["stop"], 5);
  EXPECT_EQ(l["stops"], 8);
  EXPECT_TRUE(l["resolved"].get<bool>()) << l["error"];
  EXPECT_EQ(l["stop_title"], "Line 4: the scores S = KᵀQ");
  EXPECT_EQ(l["stop_panels"], json::array({"pseudocode", "attention"}));
  EXPECT_NE(l["note"].get<std::string>().find("Rows are keys"), std::string::npos);
  EXPECT_EQ(r.state["event"]["alg"], 4);
  EXPECT_EQ(r.state["event"]["line"], 4);
  EXPECT_EQ(r.state["event"]["l"], 1);
  EXPECT_EQ(r.state["event"]["h"], 1);
  // Exactly the stop's panels: the pseudocode and the Attention tab, no call stack or variables.
  EXPECT_TRUE(has_window(r, "Pseudocode"));
  EXPECT_FALSE(has_window(r, "Call stack"));
  EXPECT_FALSE(has_window(r, "Variables"));
  EXPECT_TRUE(tab_shown(r, "Attention"));
  // The caption box, at the bottom of the window.
  ASSERT_TRUE(has_window(r, "##lesson-caption"));
  const json& cap = r.state["windows"]["##lesson-caption"];
  EXPECT_GT(cap[1].get<float>() + cap[3].get<float>(), 700.0f);
  EXPECT_GT(cap[2].get<float>(), 1000.0f);

  // PageUp goes back a stop (from line 5's mask to line 4), and lesson-go jumps anywhere.
  r = run_app("", open + ",lesson-go:6,key:PageUp");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["lesson"]["stop"], 5);
  EXPECT_EQ(r.state["event"]["line"], 4);
  r = run_app("", open + ",lesson-go:2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["line"], 1);
  EXPECT_TRUE(has_window(r, "Variables"));
  EXPECT_TRUE(tab_shown(r, "Tensor"));
  EXPECT_EQ(tensor_value(r), "Q");
}

TEST(GuiLessons, BadLessonActionsSayWhatIsWrong) {
  AppRun r = run_app("", "lesson-open:no-such-lesson");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("no lesson \"no-such-lesson\""), std::string::npos) << r.output;
  r = run_app("", "lesson-open:01-tokens-embeddings-positions,lesson-go:12");
  EXPECT_NE(r.output.find("numbered 1 to 7"), std::string::npos) << r.output;
  r = run_app("", "lesson-next");
  EXPECT_NE(r.output.find("no lesson is playing"), std::string::npos) << r.output;
}

TEST(GuiLessons, EveryShippedLessonOpensWithKnownPanels) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(STEPFORMER_SOURCE_DIR) / "assets/lessons"))
    if (e.path().extension() == ".stepformer") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 13u);
  std::string actions;
  for (const auto& n : names) actions += (actions.empty() ? "" : ",") + ("lesson-open:" + n);
  const AppRun r = run_app("", actions);
  ASSERT_EQ(r.exit_code, 0) << r.output;  // an unknown panel name would fail its lesson-open
  EXPECT_EQ(r.state["lesson"]["title"], "Images are tokens too");
  EXPECT_TRUE(r.state["lesson"]["resolved"].get<bool>()) << r.state["lesson"]["error"];
  EXPECT_EQ(r.state["event"]["alg"], 9);  // its first stop: Algorithm 9's Enter, on an image (after a text model)
}

TEST(GuiLessons, RecordSaveAndPlayBack) {
  const fs::path path = fs::temp_directory_path() / ("stepformer-lesson-" + std::to_string(::getpid()) + ".stepformer");
  AppRun r = run_app("", "goto:4:4:1:2,open:attention,lesson-add-stop:the **scores** of head 2,goto:10:3,select:X,"
                         "lesson-add-stop:tokens are *columns*,lesson-save:" + path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["lesson"]["stops"], 2);
  ASSERT_TRUE(fs::exists(path));
  // Played back in a fresh app: two stops with their notes, cursors and panels.
  r = run_app("", "lesson-open:" + path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["lesson"]["stops"], 2);
  EXPECT_EQ(r.state["lesson"]["note"], "the **scores** of head 2");
  EXPECT_EQ(r.state["event"]["alg"], 4);
  EXPECT_EQ(r.state["event"]["line"], 4);
  EXPECT_EQ(r.state["event"]["h"], 2);
  EXPECT_TRUE(tab_shown(r, "Attention"));
  r = run_app("", "lesson-open:" + path.string() + ",key:PageDown");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["lesson"]["note"], "tokens are *columns*");
  EXPECT_EQ(r.state["event"]["alg"], 10);
  EXPECT_EQ(r.state["event"]["line"], 3);
  EXPECT_EQ(tensor_value(r), "X");
  // Reordered and one deleted, saved again.
  r = run_app("", "lesson-open:" + path.string() + ",lesson-move:2:1,lesson-delete:2,lesson-save:" + path.string() +
                      ",lesson-open:" + path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["lesson"]["stops"], 1);
  EXPECT_EQ(r.state["lesson"]["note"], "tokens are *columns*");
  fs::remove(path);
}

TEST(GuiLessons, TrainingStopsTraceAlgorithm13) {
  AppRun r = run_app("", "lesson-open:07-one-training-step,lesson-go:6");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.state["lesson"]["resolved"].get<bool>()) << r.state["lesson"]["error"];
  EXPECT_EQ(r.state["event"]["alg"], 13);
  EXPECT_EQ(r.state["event"]["line"], 6);
  EXPECT_EQ(tensor_value(r), "∇W_e");
  // Lesson 3: the cross-attention stop on the encoder-decoder, then the padding stop.
  r = run_app("", "lesson-open:03-masks,lesson-go:3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["cursor"], 572);  // the saved event: the first head of line 16's cross-attention
  EXPECT_EQ(r.state["event"]["alg"], 4);
  EXPECT_EQ(r.state["event"]["line"], 5);
  EXPECT_EQ(r.state["tokens_z"], 15);
  r = run_app("", "lesson-open:03-masks,lesson-go:5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.state["lesson"]["resolved"].get<bool>()) << r.state["lesson"]["error"];
  EXPECT_EQ(r.state["event"]["alg"], 13);
  EXPECT_EQ(r.state["event"]["line"], 5);
  EXPECT_GT(r.state["train_batch"]["B"].get<int>(), 1);  // the padding view has a minibatch
  EXPECT_TRUE(tab_shown(r, "Training"));
}

TEST(GuiLessons, PresentationModeShowsOnlyTheStopLarge) {
  const AppRun normal = run_app("", "lesson-open:02-one-attention-head,lesson-go:5");
  ASSERT_EQ(normal.exit_code, 0) << normal.output;
  const float font = normal.state["font_px"].get<float>();
  AppRun r = run_app("", "lesson-open:02-one-attention-head,lesson-go:5,presentation:on");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& p = r.state["presentation"];
  EXPECT_TRUE(p["on"].get<bool>());
  EXPECT_GE(p["font_px"].get<float>(), std::max(28.0f, std::round(font * 1.65f)));
  EXPECT_TRUE(p["high_contrast"].get<bool>());
  EXPECT_TRUE(p["colorblind"].get<bool>());
  EXPECT_EQ(p["panels_shown"], json::array({"pseudocode", "attention"}));
  EXPECT_TRUE(has_window(r, "Pseudocode"));
  EXPECT_FALSE(has_window(r, "Call stack"));
  EXPECT_FALSE(has_window(r, "Variables"));
  // The stop's focal value (S, line 4) in the Focus view, in place of the Attention tab.
  EXPECT_EQ(r.state["lesson"]["focal_value"], "S");
  EXPECT_TRUE(has_window(r, "Focus"));
  EXPECT_FALSE(has_window(r, "Inspector"));
  // The pseudocode on the left (42%), above the caption box; the focal value beside it.
  const json& pc = r.state["windows"]["Pseudocode"];
  const json& cap = r.state["windows"]["##lesson-caption"];
  EXPECT_NEAR(pc[2].get<float>(), 1280.0f * 0.42f, 2.0f);
  EXPECT_NEAR(r.state["windows"]["Focus"][0].get<float>(), pc[2].get<float>(), 2.0f);
  EXPECT_LE(pc[1].get<float>() + pc[3].get<float>(), cap[1].get<float>() + 1.0f);
  // No lesson: the pseudocode and the tensor view. F6 toggles, Esc leaves.
  r = run_app("", "key:F6");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.state["presentation"]["on"].get<bool>());
  EXPECT_EQ(r.state["presentation"]["panels_shown"], json::array({"pseudocode", "tensor"}));
  EXPECT_TRUE(tab_shown(r, "Tensor"));
  EXPECT_FALSE(has_window(r, "Call stack"));
  r = run_app("", "presentation:on,key:Escape");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(r.state["presentation"]["on"].get<bool>());
  EXPECT_EQ(r.state["font_px"].get<float>(), font);
  EXPECT_FALSE(r.state["presentation"]["high_contrast"].get<bool>());
  r = run_app("", "lesson-open:02-one-attention-head,presentation:on,presentation:off");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(r.state["presentation"]["on"].get<bool>());
  EXPECT_EQ(r.state["presentation"]["font_px"].get<float>(), font);
  EXPECT_FALSE(r.state["presentation"]["colorblind"].get<bool>());
  EXPECT_TRUE(has_window(r, "Call stack"));  // stop 1 names it
}

}  // namespace

}  // namespace test_gui_lessons
