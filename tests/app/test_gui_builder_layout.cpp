// The model builder (File › New model…) on a projector (1280×720) and the common laptop (1366×768):
// with every control that a variant opens shown at once (window, T5's relative buckets, 4-R's D,
// seed and orthogonal features; FlashAttention's blocks; the sinusoid's base), each control is drawn
// inside the builder, no text is cut at its edge ("clipped_text", app/ui_probe.hpp), and the last
// control is reached by scrolling the choices.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gui_harness.hpp"

namespace test_gui_builder_layout {

using gui::AppRun;
using gui::json;

namespace {

const char* const kBuilder = "New model###builder";

struct Scene {
  const char* name;
  std::string actions;
  // Labels of widgets the scene's variants show, as --dump-state's "widgets" records them: a
  // checkbox's, a radio button's, a combo's or a text field's label (an InputInt's label is drawn
  // beside its − and + buttons, which are recorded instead, and checked with every other widget).
  std::vector<std::string> controls;
};

const std::vector<Scene>& scenes() {
  static const std::vector<Scene> s{
      {"4-R, relative bias, window, prefix mask, grouped-query",
       "builder:open,builder:set:attention=random_features,builder:set:position=relative,builder:set:window=2,"
       "builder:set:mask=prefix,builder:set:H_kv=2,builder:set:tied_unembedding=true",
       {"position", "mask", "prefix_separator", "attention", "rf_orthogonal: Performer's orthogonal features",
        "tied_unembedding: W_u = W_eᵀ"}},
      {"4-F, the sinusoid's fixed base, bert",
       "builder:open,builder:set:arch=bert,builder:set:attention=flash,builder:set:position=sinusoidal,"
       "builder:set:position_base=10000",
       {"position", "base ℓ_max (the paper, §5)", "a fixed base — Vaswani et al.: 10000 (seeds 003, 004)", "attention"}},
  };
  return s;
}

bool in_builder(const std::string& window) { return window.rfind(kBuilder, 0) == 0; }

// The texts the builder (its child windows included) drew cut at a clip edge, one per line.
std::string cut_in_builder(const json& state) {
  std::string out;
  for (const json& c : state.value("clipped_text", json::array()))
    if (in_builder(c["window"].get<std::string>())) out += "\n  \"" + c["text"].get<std::string>() + "\" in " + c["window"].get<std::string>();
  return out;
}

// The widget with this label drawn in the builder, or null.
const json* builder_widget(const json& state, const std::string& label) {
  for (const json& w : state["widgets"])
    if (w["label"] == label && in_builder(w["window"].get<std::string>())) return &w;
  return nullptr;
}

}  // namespace

// Each scene twice: as it opens, and with the choices scrolled to their end (the mouse over the
// builder's left column, the wheel turned down). A control below the fold is not drawn in the first
// (ImGui clips it) and must be drawn, wholly inside the builder, in the second.
TEST(GuiBuilderLayout, EveryVariantControlIsReachableInsideTheBuilderAndNothingIsCut) {
  for (const auto& [w, h] : {std::pair{1280, 720}, std::pair{1366, 768}})
    for (const Scene& sc : scenes()) {
      const std::string where = std::string(sc.name) + " @ " + std::to_string(w) + "x" + std::to_string(h);
      const AppRun top = gui::run_app_sized(w, h, "--no-ini", sc.actions + ",wait");
      ASSERT_EQ(top.exit_code, 0) << where << "\n" << top.output;
      ASSERT_TRUE(top.state["windows"].contains(kBuilder)) << where;
      const json win = top.state["windows"][kBuilder];
      EXPECT_TRUE(gui::inside(win, json::array({0, 0, w, h}))) << where << ": the builder is off the screen " << win;
      const std::string choices = std::to_string(static_cast<int>(win[0].get<float>() + win[2].get<float>() * 0.25f)) + ":" +
                                  std::to_string(static_cast<int>(win[1].get<float>() + win[3].get<float>() * 0.5f));
      const AppRun end = gui::run_app_sized(w, h, "--no-ini", sc.actions + ",wait,mouse:" + choices + ",wheel:-40,wait,wait");
      ASSERT_EQ(end.exit_code, 0) << where << "\n" << end.output;
      EXPECT_EQ(cut_in_builder(top.state), "") << where << " (as it opens)";
      EXPECT_EQ(cut_in_builder(end.state), "") << where << " (scrolled to the end)";
      for (const std::string& label : sc.controls) {
        const json* c = builder_widget(top.state, label);
        if (!c) c = builder_widget(end.state, label);
        ASSERT_NE(c, nullptr) << where << ": \"" << label << "\" is drawn neither as the builder opens nor scrolled to its end";
        EXPECT_TRUE(gui::inside((*c)["rect"], win)) << where << ": \"" << label << "\" " << (*c)["rect"]
                                                    << " is not inside the builder " << win;
      }
      // Every widget the builder drew (the InputInts' − and + buttons too), as it opens and scrolled, is
      // wholly inside it; scrolled, the last one drawn is the window w's + (the variants' last control)
      for (const AppRun* r : {&top, &end})
        for (const json& x : r->state["widgets"])
          if (in_builder(x["window"].get<std::string>()))
            EXPECT_TRUE(gui::inside(x["rect"], win)) << where << ": \"" << x["label"] << "\" " << x["rect"] << " outside " << win;
      const json* last = nullptr;
      for (const json& x : end.state["widgets"])
        if (x["window"].get<std::string>().rfind(std::string(kBuilder) + "/choices", 0) == 0) last = &x;
      ASSERT_NE(last, nullptr) << where;
      EXPECT_EQ((*last)["label"], "+") << where << ": the choices scrolled to their end do not end on window w's +";
    }
}

}  // namespace test_gui_builder_layout
