// The panel registry (app/panel_registry.cpp): every Inspector tab's name (open:NAME, session
// files, lesson stops) selects the tab with its title and draws it, the tab buttons come in the
// table's order, and the View menu's items toggle the panels the table names.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/app/gui_harness.hpp"

namespace test_gui_panels {

namespace fs = std::filesystem;
using json = nlohmann::json;
using gui::AppRun;
using gui::run_app;

namespace {

// The Inspector's tabs of the default model (a continuation model: Sampling, not Fill-in or
// Translation), (name, title) in the order they are drawn. The names are frozen: lessons and
// session files use them.
const std::vector<std::pair<std::string, std::string>>& continuation_tabs() {
  static const std::vector<std::pair<std::string, std::string>> t{
      {"tensor", "Tensor"},       {"attention", "Attention"}, {"layernorm", "LayerNorm"}, {"sampling", "Sampling"},
      {"tokenizer", "Tokenizer"}, {"notation", "Notations"},  {"training", "Training"},   {"gpu", "GPU"},
      {"experiments", "Experiments"}, {"study", "Study"}, {"gradflow", "Gradient flow"},
      {"modelmap", "Model map"}, {"headview", "Head view"}, {"lens", "Logit lens"}};
  return t;
}

json read_json(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f);
}

}  // namespace

TEST(GuiPanelRegistry, EveryInspectorNameSelectsAndDrawsItsTab) {
  const fs::path dir = fs::temp_directory_path() / ("stepformer-panels-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string actions;
  for (const auto& [name, title] : continuation_tabs())
    actions += "open:" + name + ",wait,dump-state:" + (dir / (name + ".json")).string() + ",";
  const AppRun r = run_app("", actions + "wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const auto& [name, title] : continuation_tabs()) {
    const json s = read_json(dir / (name + ".json"));
    EXPECT_EQ(s["inspector_tab"], title) << "open:" << name;
    // The tab's body was drawn in the frame dumped (its draw function ran).
    const json& shown = s["tabs_shown"];
    EXPECT_NE(std::find(shown.begin(), shown.end(), title), shown.end()) << "open:" << name << ": " << shown;
  }
  // At 1280×800 every tab is a button, in the table's order.
  ASSERT_EQ(r.state["inspector_tabs_as"], "buttons");
  std::vector<std::string> labels, titles;
  for (const json& t : r.state["inspector_tabs"]) labels.push_back(t["label"]);
  for (const auto& nt : continuation_tabs()) titles.push_back(nt.second);
  EXPECT_EQ(labels, titles);
  fs::remove_all(dir);
}

TEST(GuiPanelRegistry, ViewMenuTogglesTheTablesPanels) {
  // A tile: View › Callstack closes the call stack (open by default).
  const AppRun closed = run_app("", "click-item:View/Callstack,wait");
  ASSERT_EQ(closed.exit_code, 0) << closed.output;
  EXPECT_FALSE(closed.state["windows"].contains("Call stack")) << closed.state["windows"];
  // An Inspector tab: View › Notation selects the Notations tab.
  const AppRun tab = run_app("", "click-item:View/Notation,wait");
  ASSERT_EQ(tab.exit_code, 0) << tab.output;
  EXPECT_EQ(tab.state["inspector_tab"], "Notations");
}

}  // namespace test_gui_panels
