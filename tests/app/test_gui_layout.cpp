// The layout at the screens Stepformer is used on (docs/layout.md): projectors at 1280×720 and
// 1920×1080, the common laptop at 1366×768, 1600×1000, and a HiDPI 2560×1440 at content scale 2.
// At each: the current pseudocode line is inside the Pseudocode window and the screen after
// stepping, F6 and a font change; no window is off-screen; every Inspector tab label is whole;
// closed panels give their space to the others. In presentation mode at 1280×720 (28-px fonts),
// every stop of every shipped lesson shows its focal value whole beside the current line, and the
// caption takes at most a third of the screen and gives its space back when collapsed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/app/gui_harness.hpp"

namespace test_gui_layout {

namespace {

namespace fs = std::filesystem;
using gui::AppRun;
using gui::run_app;
using json = nlohmann::json;

struct Screen {
  int w, h;
  float scale;  // the content scale (--scale)
  std::string args() const {
    return "--size " + std::to_string(w) + "x" + std::to_string(h) + " --scale " + std::to_string(static_cast<int>(scale));
  }
  std::string name() const { return std::to_string(w) + "x" + std::to_string(h) + "@" + std::to_string(static_cast<int>(scale)); }
};

const std::vector<Screen>& screens() {
  static const std::vector<Screen> s{{1280, 720, 1}, {1366, 768, 1}, {1600, 1000, 1}, {1920, 1080, 1}, {2560, 1440, 2}};
  return s;
}

json viewport(const Screen& s) { return json::array({0, 0, s.w, s.h}); }

// The run's windows (named as ImGui names them) that are not inside the screen.
std::vector<std::string> off_screen(const AppRun& r, const Screen& s) {
  std::vector<std::string> out;
  for (const auto& [name, rect] : r.state["windows"].items())
    if (!gui::inside(rect, viewport(s))) out.push_back(name + " " + rect.dump());
  return out;
}

// The highlighted pseudocode line lies inside the Pseudocode window, below its title bar (one
// line of text high plus its padding: the highlight must not be under it), and inside the screen.
void expect_current_line_visible(const AppRun& r, const Screen& s, const std::string& when) {
  ASSERT_TRUE(r.state["windows"].contains("Pseudocode")) << when;
  const json& hl = r.state["highlight"];
  if (r.state["event"]["line"] == 0) {  // entering an algorithm: no line is current yet
    EXPECT_EQ(hl[3].get<float>(), 0.0f) << when;
    return;
  }
  const json& win = r.state["windows"]["Pseudocode"];
  const float title_h = r.state["font_px_on_screen"].get<float>();
  const json body = json::array({win[0], win[1].get<float>() + title_h, win[2], win[3].get<float>() - title_h});
  EXPECT_GT(hl[3].get<float>(), 0) << when;
  EXPECT_TRUE(gui::inside(hl, body)) << when << ": the line " << hl << " is not inside the window " << win;
  EXPECT_TRUE(gui::inside(hl, viewport(s))) << when << ": the line " << hl << " is off the screen";
}

// Every Inspector tab label drawn is whole and on the screen: all of them as buttons, or (where
// they would take a third of the Inspector's height) the selected one on a menu button.
void expect_tabs_whole(const AppRun& r, const Screen& s, size_t at_least, const std::string& when) {
  const json& tabs = r.state["inspector_tabs"];
  EXPECT_GE(tabs.size(), r.state["inspector_tabs_as"] == "menu" ? 1 : at_least) << when << ": " << tabs;
  for (const json& t : tabs) {
    EXPECT_TRUE(t["whole"].get<bool>()) << when << ": the tab " << t["label"] << " is cut";
    EXPECT_TRUE(gui::inside(t["rect"], viewport(s))) << when << ": the tab " << t["label"] << " is off the screen";
  }
}

TEST(GuiLayout, CurrentLineVisibleAfterSteppingAndFontChangeAtEverySize) {
  for (const Screen& s : screens()) {
    // Algorithm 10 line 11 is the listing's last line; three Ctrl+= push it further down.
    const AppRun r = run_app(s.args(), "goto:10:11,key:C-=,key:C-=,key:C-=");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.state["content_scale"].get<float>(), s.scale);
    EXPECT_EQ(r.state["font_px_on_screen"].get<float>(), (17.0f + 6.0f) * s.scale) << s.name();
    expect_current_line_visible(r, s, s.name() + " after Ctrl+= ×3");
    expect_tabs_whole(r, s, 10, s.name() + " after Ctrl+= ×3");
    EXPECT_EQ(off_screen(r, s), std::vector<std::string>{}) << s.name();
  }
}

TEST(GuiLayout, CurrentLineVisibleAfterF6AtEverySize) {
  for (const Screen& s : screens()) {
    const AppRun r = run_app(s.args(), "goto:10:8,key:F6");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_TRUE(r.state["presentation"]["on"].get<bool>());
    expect_current_line_visible(r, s, s.name() + " after F6");
    EXPECT_EQ(off_screen(r, s), std::vector<std::string>{}) << s.name();
  }
}

TEST(GuiLayout, CurrentLineVisibleAfterALessonStopAndStepping) {
  // Lesson 5 stop 6 is Algorithm 10 line 8, then two steps over go to line 10.
  for (const Screen& s : {screens().front(), screens().back()}) {
    const AppRun r = run_app(s.args(), "lesson-open:05-mlp-residual,presentation:on,lesson-go:6,step-over,step-over");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    expect_current_line_visible(r, s, s.name() + " lesson 5 stop 6 and two steps");
  }
}

TEST(GuiLayout, FirstLaunchFillsTheScreenAndClosedPanelsGiveTheirSpace) {
  const Screen s = screens().front();
  AppRun r = run_app(s.args());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& w = r.state["windows"];
  // Three columns side by side across the whole width, the call stack under the pseudocode down
  // to the same bottom as the others: no gap (1 px: positions are whole pixels).
  const float right = w["Inspector"][0].get<float>() + w["Inspector"][2].get<float>();
  EXPECT_NEAR(right, s.w, 1.0f);
  EXPECT_NEAR(w["Variables"][0].get<float>(), w["Pseudocode"][2].get<float>(), 1.0f);
  const float left_bottom = w["Call stack"][1].get<float>() + w["Call stack"][3].get<float>();
  EXPECT_NEAR(left_bottom, w["Inspector"][1].get<float>() + w["Inspector"][3].get<float>(), 1.0f);

  // Without the variables and the call stack, the pseudocode and the Inspector share the width,
  // and the pseudocode takes the whole height.
  r = run_app(s.args(), "close:variables,close:callstack");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& v = r.state["windows"];
  EXPECT_FALSE(v.contains("Variables"));
  EXPECT_NEAR(v["Inspector"][0].get<float>(), v["Pseudocode"][2].get<float>(), 1.0f);
  EXPECT_NEAR(v["Inspector"][0].get<float>() + v["Inspector"][2].get<float>(), s.w, 1.0f);
  EXPECT_NEAR(v["Pseudocode"][3].get<float>(), v["Inspector"][3].get<float>(), 1.0f);
}

TEST(GuiLayout, FloatingWindowsOpenOnScreen) {
  // The largest text on the smallest screen: every floating window is kept inside it.
  const Screen s = screens().front();
  const AppRun r = run_app(s.args(), "font:40,open:about,open:files,builder:open,open:errata,wait,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"About Stepformer###about", "Open a checkpoint or a model folder###files",
                           "New model###builder", "Errata of the seeds###errata"})
    EXPECT_TRUE(r.state["windows"].contains(name)) << name << " is not open: " << r.state["windows"];
  EXPECT_EQ(off_screen(r, s), std::vector<std::string>{});
}

TEST(GuiLayout, TabLabelsWholeAtTheLargestText) {
  for (const Screen& s : screens()) {
    const AppRun r = run_app(s.args(), "font:48,open:attention");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    expect_tabs_whole(r, s, 10, s.name() + " at 48 px");
    EXPECT_EQ(r.state["inspector_tab"], "Attention");
    const json& shown = r.state["tabs_shown"];
    EXPECT_NE(std::find(shown.begin(), shown.end(), "Attention"), shown.end()) << shown;
  }
  // At the default text there is room for every tab as a button.
  const AppRun r = run_app(screens().front().args());
  EXPECT_EQ(r.state["inspector_tabs_as"], "buttons");
  expect_tabs_whole(r, screens().front(), 10, "1280x720 at 17 px");
}

TEST(GuiLayout, CaptionAtMostAThirdOfTheScreenAndCollapsible) {
  const Screen s = screens().front();
  const std::string stop = "lesson-open:02-one-attention-head,presentation:on,lesson-go:7";
  AppRun open = run_app(s.args(), stop);
  ASSERT_EQ(open.exit_code, 0) << open.output;
  const json& cap = open.state["windows"]["##lesson-caption"];
  EXPECT_LE(cap[3].get<float>(), s.h / 3.0f);
  EXPECT_FALSE(open.state["lesson"]["caption_collapsed"].get<bool>());
  AppRun closed = run_app(s.args(), stop + ",caption:collapse");
  ASSERT_EQ(closed.exit_code, 0) << closed.output;
  EXPECT_TRUE(closed.state["lesson"]["caption_collapsed"].get<bool>());
  const float saved = cap[3].get<float>() - closed.state["windows"]["##lesson-caption"][3].get<float>();
  EXPECT_GT(saved, s.h / 10.0f);  // the note is several lines long: collapsing it frees them
  // The space goes to the panels: the pseudocode and the focal value's view grow by it (1 px: rounding).
  for (const char* win : {"Pseudocode", "Focus"})
    EXPECT_NEAR(closed.state["windows"][win][3].get<float>() - open.state["windows"][win][3].get<float>(), saved, 1.0f)
        << win;
  // F7 toggles it too.
  closed = run_app(s.args(), stop + ",key:F7");
  EXPECT_TRUE(closed.state["lesson"]["caption_collapsed"].get<bool>());
}

// In presentation mode (28-px fonts) the step buttons, the timeline and the location do not fit
// on one row at 1280×720: the timeline's "step k of N" is still shown whole, and the token chips
// (ℓ = 7) stop at the last one that fits whole, then "+N more": no text of the toolbar is cut.
TEST(GuiLayout, ToolbarTextWholeInPresentationMode) {
  for (const Screen& s : {screens()[0], screens()[4]}) {
    const AppRun r = run_app(s.args(), "lesson-open:02-one-attention-head,presentation:on,lesson-go:7,wait");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    bool timeline = false;
    for (const json& w : r.state["widgets"])
      if (w["window"] == "Toolbar" && w["label"].get<std::string>().rfind("step ", 0) == 0) timeline = true;
    EXPECT_TRUE(timeline) << s.name() << ": no timeline drawn";
    for (const json& c : r.state["clipped_text"])
      EXPECT_NE(c["window"], "Toolbar") << s.name() << ": \"" << c["text"].get<std::string>() << "\" cut";
    // The toolbar's rows end above the tiles.
    const json& bar = r.state["windows"]["Toolbar"];
    EXPECT_LE(bar[1].get<float>() + bar[3].get<float>(), r.state["windows"]["Pseudocode"][1].get<float>()) << s.name();
  }
}

// A notice too long for the status bar's line wraps above the model line: the lesson caption and
// the tiles end above the taller bar, so that none of them is drawn over the other (the caption
// used to assume a one-line bar and covered the notice).
TEST(GuiLayout, CaptionAndTilesEndAboveALongNotice) {
  const Screen s = screens().front();
  // A file that is not a model: its message is longer than the screen's width (GuiBugs).
  const AppRun r = run_app(s.args(), "lesson-open:02-one-attention-head,presentation:on,lesson-go:7,wait,load:" +
                                         std::string(STEPFORMER_SOURCE_DIR) + "/README.md");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_FALSE(r.state["notice"].get<std::string>().empty());
  const json& w = r.state["windows"];
  const float bar_top = w["##status"][1].get<float>();
  const float one_line = r.state["font_px_on_screen"].get<float>() * 1.9f;  // the bar's line (App::status_bar_height)
  EXPECT_GT(s.h - bar_top, one_line + 1) << "the notice did not wrap: the test does not test what it says";
  // ImGui floors a window's position to a whole pixel: 1 px of slack.
  const float cap_top = w["##lesson-caption"][1].get<float>();
  EXPECT_LE(cap_top + w["##lesson-caption"][3].get<float>(), bar_top + 1) << "caption over the status bar";
  for (const char* tile : {"Pseudocode", "Focus"})
    EXPECT_LE(w[tile][1].get<float>() + w[tile][3].get<float>(), cap_top + 1) << tile << " under the caption";
}

// Every stop of every shipped lesson in presentation mode at 1280×720 (28-px fonts): its focal
// value is found, its view is drawn whole inside the screen, and the current line is visible.
TEST(GuiLayout, EveryShippedStopShowsItsFocalValueWholeAt1280x720) {
  const Screen s = screens().front();
  std::vector<fs::path> lessons;
  for (const auto& e : fs::directory_iterator(fs::path(STEPFORMER_SOURCE_DIR) / "assets" / "lessons"))
    if (e.path().extension() == ".stepformer") lessons.push_back(e.path());
  std::sort(lessons.begin(), lessons.end());
  ASSERT_EQ(lessons.size(), 13u);
  for (const fs::path& p : lessons) {
    std::ifstream f(p);
    const json lesson = json::parse(f);
    for (size_t n = 1; n <= lesson["stops"].size(); ++n) {
      const json& stop = lesson["stops"][n - 1];
      const std::string where = p.stem().string() + " stop " + std::to_string(n);
      ASSERT_TRUE(stop.contains("focus")) << where << " names no focal value";
      const AppRun r = run_app(s.args(), "lesson-open:" + p.stem().string() + ",presentation:on,lesson-go:" +
                                             std::to_string(n));
      ASSERT_EQ(r.exit_code, 0) << where << ": " << r.output;
      EXPECT_EQ(r.state["presentation"]["font_px"].get<float>(), 28.0f);
      const json& l = r.state["lesson"];
      EXPECT_EQ(l["focal_value"], stop["focus"]) << where;
      EXPECT_TRUE(l["focal_view"]["drawn"].get<bool>()) << where;
      EXPECT_TRUE(l["focal_view"]["whole"].get<bool>()) << where << ": " << l["focal_view"];
      EXPECT_TRUE(gui::inside(l["focal_view"]["rect"], r.state["windows"]["Focus"])) << where;
      EXPECT_TRUE(gui::inside(r.state["windows"]["Focus"], viewport(s))) << where;
      expect_current_line_visible(r, s, where);
      EXPECT_EQ(off_screen(r, s), std::vector<std::string>{}) << where;
    }
  }
}

TEST(GuiLayout, ABadScaleSaysWhatIsWrong) {
  for (const char* bad : {"--scale 9", "--scale 0.5", "--scale two"}) {
    const AppRun r = run_app(bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.output.find("--scale needs a content scale from 1 to 4"), std::string::npos) << r.output;
  }
}

}  // namespace

}  // namespace test_gui_layout
