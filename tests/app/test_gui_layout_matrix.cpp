// The layout matrix (issue 21, item 8): the classroom scenes at the screen sizes of projectors,
// laptops and a HiDPI screen, each checked the way a user looks at it, through --dump-state:
//   - the current pseudocode line shows whole ("current_line"),
//   - a lesson stop's focal value shows whole (the lesson's "focal_value" among "heatmaps"),
//   - no number is clipped and no label is shortened with "…" or cut ("clipped_text", "widgets"),
//   - no window lies off the screen ("windows"),
//   - the status bar's model line fits its line outside presentation mode ("status_line": a vit's was
//     cut at 1366×768).
// Per size, one app run is a first launch and one plays every other scene, writing a state dump
// per scene (dump-state:FILE): the matrix costs ten app starts. Failures are gathered per check, so that one run tells which
// scenes break at which size.
//
// STEPFORMER_LAYOUT_SHOTS=DIR also saves a screenshot of each scene in DIR, to look at.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/app/gui_harness.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using gui::AppRun;

namespace {

struct ScreenSize {
  int w, h;
  int scale = 1;  // the content scale (--scale S): a HiDPI screen's, text and spacing S times
};

const std::string kSource = STEPFORMER_SOURCE_DIR;

struct Scene {
  std::string name;     // e.g. "lesson 02 stop 3"
  std::string actions;  // what brings it up, from the previous scene
  bool lesson_stop = false;
};

std::vector<fs::path> shipped_lessons() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kSource + "/assets/lessons"))
    if (e.path().extension() == ".stepformer") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

size_t stop_count(const fs::path& lesson) {
  std::ifstream f(lesson);
  return json::parse(f)["stops"].size();
}

// A first launch: no settings file yet, whatever greets a newcomer is up.
const Scene kFirstLaunch{"first launch", "mouse:0:0,wait"};

// The other scenes, in the order one run (with --no-ini: not a first launch) plays them. Every
// action has a frame after it, so the dump comes two frames after the scene's last action: one for
// the layout to follow what it changed (a caption measured), one to draw. A scene that changes the
// font (presentation mode) or loads a model ends with a "wait", two more frames for the font atlas
// to be rebuilt and the trace shown. The pointer is parked on the menu bar, where it shows no
// tooltip over the panels.
std::vector<Scene> scenes() {
  std::vector<Scene> s;
  s.push_back({"Algorithm 4 line 6, Attention tab", "mouse:0:0,goto:4:6,open:attention,wait"});
  for (const fs::path& lesson : shipped_lessons()) {
    const std::string id = lesson.stem().string().substr(0, 2);
    const std::string open = "lesson-open:" + lesson.string() + ",presentation:on,";
    for (size_t n = 1; n <= stop_count(lesson); ++n)
      s.push_back({"lesson " + id + " stop " + std::to_string(n),
                   n == 1 ? open + "lesson-go:1,wait" : "lesson-go:" + std::to_string(n), true});
  }
  s.push_back({"BERT fill-in (WordPiece)",
               "presentation:off,lesson-stop,load:" + kSource +
                   "/tests/data/ecosystem/hf-bert,prompt:the cat sat,mask:3,fill-trace,open:fillin,wait"});
  // File › Examples' encoder-decoder: a 15-token context; Algorithm 8 line 16 is the decoder's
  // cross-attention.
  s.push_back({"encoder-decoder cross-attention", "example:3,goto:8:16,open:attention,wait"});
  // File › Examples' vision transformer: the patches label the heatmaps' token axes as images.
  s.push_back({"vit Algorithm 4 line 6, Attention tab", "example:4,wait,goto:4:6,open:attention,wait"});
  s.push_back({"Training tab after 500 updates", "example:1,train-step:500,open:training,wait"});
  return s;
}

// A text that is a number as the legends and the tensor views print them: 0.0124, −3.2e-05, 33.5.
bool is_number(const std::string& text) {
  static const std::regex number(R"(\s*(−|-|\+)?(\d+\.?\d*|\.\d+)(e(−|-|\+)?\d+)?%?\s*)");
  return std::regex_match(text, number);
}

// What failed, by check: "scene @ WxH: detail".
using Failures = std::map<std::string, std::vector<std::string>>;

void check_scene(const Scene& scene, const json& s, const ScreenSize& size, Failures& out) {
  const std::string where = scene.name + " @ " + std::to_string(size.w) + "x" + std::to_string(size.h);
  // Entering an algorithm (event kind 0, EventKind::Enter) the cursor is on its signature, and no
  // numbered line is highlighted: "current_line" is null then, and only then.
  const bool entering = s["event"]["kind"] == 0;
  // A newcomer's welcome (a first launch) is in front of everything by design, the current line too.
  const bool welcome = s.contains("welcome") && s["welcome"].value("open", false);
  if (!s.contains("current_line")) {
    out["current line visible"].push_back(where + ": no \"current_line\" in the dump");
  } else if (s["current_line"].is_null()) {
    if (!entering) out["current line visible"].push_back(where + ": no line highlighted");
  } else if (!s["current_line"]["visible"].get<bool>() && !welcome) {
    out["current line visible"].push_back(where + ": " + s["current_line"]["rect"].dump());
  }
  if (scene.lesson_stop) {
    const json& lesson = s["lesson"];
    if (!lesson.contains("focal_value")) {
      out["focal value visible"].push_back(where + ": no lesson \"focal_value\" in the dump");
    } else {
      const std::string focal = lesson["focal_value"].get<std::string>();
      // A matrix is checked through its heatmaps; a value drawn otherwise (a scalar, the tokens)
      // through the lesson's focal view.
      bool drawn = false, shown = false;
      std::string heatmaps;  // "value (visible|cut)" of each heatmap drawn, for the message
      for (const json& h : s.value("heatmaps", json::array())) {
        if (h["value"] == focal) drawn = true, shown = shown || h["visible"].get<bool>();
        heatmaps += " " + h["value"].get<std::string>() + (h["visible"].get<bool>() ? " (visible)" : " (cut)");
      }
      if (!drawn && lesson.contains("focal_view")) shown = lesson["focal_view"].value("whole", false);
      if (focal.empty())
        out["focal value visible"].push_back(where + ": no focal value in scope");
      else if (!shown)
        out["focal value visible"].push_back(where + ": \"" + focal + "\" is not shown whole; heatmaps:" + heatmaps +
                                             "; focal view " + lesson.value("focal_view", json()).dump());
    }
  }
  // A label is shown whole or not at all: neither shortened with "…" (ImGui's tabs and table
  // headers) nor cut at an edge (a button, a tab drawn as a button, a menu).
  std::set<std::string> labels;
  for (const json& w : s.value("widgets", json::array())) labels.insert(w["label"].get<std::string>());
  for (const json& c : s.value("clipped_text", json::array())) {
    const std::string text = c["text"].get<std::string>(), window = c["window"].get<std::string>();
    if (c["ellipsis"].get<bool>() || labels.count(text))
      out["no label cut"].push_back(where + ": \"" + text + "\" in " + window);
    else if (is_number(text))
      out["no number clipped"].push_back(where + ": " + text + " in " + window);
  }
  // The status bar's model line fits a line of the bar (a notice may push it on, never the model line
  // itself). Not in presentation mode (the lesson stops): at the classroom's font it is cut for every
  // model, a detail a presentation lets go.
  const bool presenting = s.contains("presentation") && s["presentation"].value("on", false);
  if (!presenting && !s.contains("status_line"))
    out["model line whole"].push_back(where + ": no \"status_line\" in the dump");
  else if (!presenting && !s["status_line"]["fits"].get<bool>())
    out["model line whole"].push_back(where + ": \"" + s["status_line"]["text"].get<std::string>() + "\" is " +
                                      s["status_line"]["width"].dump() + " px, the line " + s["status_line"]["room"].dump());
  const json screen = {0, 0, size.w, size.h};
  for (const auto& [name, rect] : s["windows"].items())
    if (name.find('/') == std::string::npos && !gui::inside(rect, screen))  // a child window is its parent's
      out["no window off-screen"].push_back(where + ": " + name + " " + rect.dump());
}

void PrintTo(const ScreenSize& s, std::ostream* os) { *os << s.w << "x" << s.h << " at scale " << s.scale; }

class GuiLayoutMatrix : public ::testing::TestWithParam<ScreenSize> {};

// Plays `scenes` in one app run with `args`, a state dump after each (and a screenshot in
// STEPFORMER_LAYOUT_SHOTS, when set), and checks each dump.
void play(const ScreenSize& size, const std::string& args, const std::vector<Scene>& scenes, const fs::path& dir,
          Failures& failures) {
  const std::string tag = std::to_string(size.w) + "x" + std::to_string(size.h);
  const char* shots = std::getenv("STEPFORMER_LAYOUT_SHOTS");
  std::string actions;
  std::vector<fs::path> dumps;
  for (const Scene& scene : scenes) {
    std::string file = scene.name;
    std::replace_if(file.begin(), file.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '-');
    dumps.push_back(dir / (file + ".json"));
    actions += (actions.empty() ? "" : ",") + scene.actions + ",dump-state:" + dumps.back().string();
    if (shots) actions += ",screenshot:" + (fs::path(shots) / (tag + "-" + file + ".png")).string();
  }
  const std::string scale = size.scale == 1 ? "" : " --scale " + std::to_string(size.scale);
  const AppRun r = gui::run_app_sized(size.w, size.h, args + scale, actions);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (size_t i = 0; i < scenes.size(); ++i) {
    ASSERT_TRUE(fs::exists(dumps[i])) << scenes[i].name << ": no state dump";
    std::ifstream f(dumps[i]);
    check_scene(scenes[i], json::parse(f), size, failures);
  }
}

TEST_P(GuiLayoutMatrix, EverySceneShowsItsLineAndValueWholeOnScreen) {
  const ScreenSize size = GetParam();
  const fs::path dir =
      fs::temp_directory_path() / ("stepformer-matrix-" + std::to_string(::getpid()) + "-" + std::to_string(size.w));
  fs::create_directories(dir);
  Failures failures;
  play(size, "", {kFirstLaunch}, dir, failures);
  play(size, "--no-ini", scenes(), dir, failures);
  fs::remove_all(dir);
  for (const char* check : {"current line visible", "focal value visible", "no number clipped",
                            "no label cut", "no window off-screen", "model line whole"}) {
    const std::vector<std::string>& f = failures[check];
    std::string list;
    for (const std::string& line : f) list += "\n  " + line;
    EXPECT_TRUE(f.empty()) << check << ": " << f.size() << " failures" << list;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, GuiLayoutMatrix,
                         ::testing::Values(ScreenSize{1280, 720}, ScreenSize{1366, 768}, ScreenSize{1600, 1000},
                                           ScreenSize{1920, 1080}, ScreenSize{2560, 1440, 2}),
                         [](const ::testing::TestParamInfo<ScreenSize>& p) {
                           return std::to_string(p.param.w) + "x" + std::to_string(p.param.h);
                         });

}  // namespace
