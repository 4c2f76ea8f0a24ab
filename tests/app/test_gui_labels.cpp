// Issue 21 items 4 and 5 inside the panels: in the Inspector's tabs and the Variables table no
// label is cut at a window's edge and no number is clipped, on a projector (1280×720) and on a
// HiDPI screen (2560×1440 at content scale 2, where every text is twice as wide). Seen the way a
// user sees it: the real app under Xvfb, checked through --dump-state's "clipped_text" (every
// text ImGui drew that lost pixels to its clip rectangle, app/ui_probe.hpp).
#include <gtest/gtest.h>

#include <string>

#include "gui_harness.hpp"

namespace test_gui_labels {

using gui::AppRun;
using gui::json;

namespace {

const std::string kSource = STEPFORMER_SOURCE_DIR;

struct Scene {
  const char* name;
  std::string args, actions;
  const char* button;  // a button the scene's tab draws: the tab is really shown
};

// The texts cut in the Inspector or the Variables panel (their child windows included), one per
// line as "text in window".
std::string cut_in_panels(const json& state) {
  std::string out;
  for (const json& c : state.value("clipped_text", json::array())) {
    const std::string window = c["window"].get<std::string>();
    if (window.rfind("Inspector", 0) == 0 || window.rfind("Variables", 0) == 0)
      out += "\n  \"" + c["text"].get<std::string>() + "\" in " + window;
  }
  return out;
}

void expect_nothing_cut(const Scene& s) {
  struct Size {
    int w, h;
    const char* scale;
  };
  for (const Size& size : {Size{1280, 720, ""}, Size{2560, 1440, " --scale 2"}}) {
    const AppRun r = gui::run_app_sized(size.w, size.h, "--no-ini " + s.args + size.scale, s.actions + ",wait");
    const std::string where = std::string(s.name) + " @ " + std::to_string(size.w) + "x" + std::to_string(size.h);
    ASSERT_EQ(r.exit_code, 0) << where << "\n" << r.output;
    EXPECT_NE(gui::widget(r.state, s.button), nullptr) << where << ": no \"" << s.button << "\" button drawn";
    EXPECT_EQ(cut_in_panels(r.state), "") << where;
  }
}

}  // namespace

// "τ (temperature)" beside a slider wider than the tab, "Trim context to ℓ_max" on a checkbox.
TEST(GuiLabels, SamplingTabCutsNoLabel) {
  expect_nothing_cut({"Sampling", "", "open:sampling", "Generate next token"});
}

// "reuse the encoder output (not in the paper: …)" and "KV cache (…)" checkboxes, "Translate
// until eos_token" past the edge, the table header "q ∝ p^(1/τ) (line 6)" shortened with "…", the
// cross-attention's caption.
TEST(GuiLabels, TranslationTabCutsNoLabel) {
  expect_nothing_cut({"Translation", "", "example:3,translate-all,open:translation", "Translate next token"});
}

// "Load text" and "80/10/10 (BERT's rule, not the paper's)" after SameLine, "seed"'s "-" button.
TEST(GuiLabels, TrainingTabOfBertCutsNoLabel) {
  expect_nothing_cut({"Training (BERT)", "--model " + kSource + "/assets/bert.safetensors", "open:training",
                      "One update"});
}

// The prompt's token buttons, τ, seed and top k in a row past the edge; "93", the last column
// index of P[:, 3] over N_V = 93 ids, centred past the heatmap's grid.
TEST(GuiLabels, FillInTabCutsNoLabelOrNumber) {
  expect_nothing_cut({"Fill-in", "--model " + kSource + "/tests/data/ecosystem/hf-bert",
                      "prompt:the cat sat,mask:3,fill-trace,open:fillin", "Trace the fill"});
}

// The Variables table's "shape" and "value" headers and ℓ_z's "15" (a fixed 96-px value column
// at content scale 2); the cross-attention's radio button and the last column index "15" of a
// 15-token context in the Attention tab.
TEST(GuiLabels, VariablesAndAttentionOfEncoderDecoderCutNoLabelOrNumber) {
  expect_nothing_cut({"Variables, Attention", "", "example:3,goto:8:16,open:attention", "Go to this call"});
}

}  // namespace test_gui_labels
