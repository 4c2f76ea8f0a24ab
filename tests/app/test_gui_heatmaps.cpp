// The heatmaps as a user sees them (issue 21, item 5), through --dump-state's "heatmaps": every
// heatmap drawn in the last frame with its rectangle, whether it is fully visible, its colour
// scale, its legend's ends and where they were written, and the token labels it drew.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "app/widgets/heatmap_labels.hpp"
#include "gui_harness.hpp"

namespace test_gui_heatmaps {

namespace {

using gui::AppRun;
using gui::json;
using gui::run_app;

const std::string kSoftmax = "softmax(S/√d_attn)";

std::vector<json> heatmaps(const AppRun& r, bool thumbnails) {
  std::vector<json> out;
  for (const json& h : r.state["heatmaps"])
    if (h.value("thumbnail", false) == thumbnails) out.push_back(h);
  return out;
}

const json* heatmap_named(const AppRun& r, const std::string& value, bool thumbnail) {
  for (const json& h : r.state["heatmaps"])
    if (h["value"] == value && h.value("thumbnail", false) == thumbnail) return &h;
  return nullptr;
}

// Whether rectangle `inner` (x, y, w, h) lies inside `outer`.
bool inside(const json& inner, const json& outer) {
  const float x = inner[0], y = inner[1], w = inner[2], h = inner[3];
  const float X = outer[0], Y = outer[1], W = outer[2], H = outer[3];
  return x >= X && y >= Y && x + w <= X + W && y + h <= Y + H;
}

bool has_label(const json& h, const char* axis, const std::string& label) {
  if (!h.contains(axis)) return false;
  for (const json& l : h[axis])
    if (l == label) return true;
  return false;
}

TEST(GuiHeatmaps, EachHeatmapDrawnIsListedWithItsRectangle) {
  const AppRun r = run_app("", "goto:4:6,open:attention");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(r.state["heatmaps"].is_array());
  // The Attention tab's four views, in order, all on screen at 1280×800.
  const std::vector<json> full = heatmaps(r, false);
  ASSERT_EQ(full.size(), 4u) << r.state["heatmaps"];
  const std::vector<std::string> names = {"S", "Mask", "S", kSoftmax};
  for (size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(full[i]["value"], names[i]);
    EXPECT_TRUE(full[i]["visible"]) << full[i];
  }
  // Thumbnails: the Variables panel's (one per matrix in scope) and the grid of heads.
  EXPECT_NE(heatmap_named(r, "W_q", true), nullptr);
  EXPECT_NE(heatmap_named(r, kSoftmax, true), nullptr);
  const json screen = json::array({0, 0, r.w, r.h});
  for (const json& h : r.state["heatmaps"]) {
    EXPECT_GT(h["rect"][2].get<float>(), 0) << h;
    EXPECT_GT(h["rect"][3].get<float>(), 0) << h;
    if (h["visible"]) EXPECT_TRUE(inside(h["rect"], screen)) << h;
  }
}

TEST(GuiHeatmaps, ScrolledOutOfViewIsNotVisible) {
  const AppRun before = run_app("", "goto:4:6,open:attention");
  ASSERT_EQ(before.exit_code, 0) << before.output;
  const json* x = heatmap_named(before, "X", true);  // the first variable in scope
  ASSERT_NE(x, nullptr);
  EXPECT_TRUE((*x)["visible"]);
  // The wheel over the Variables panel scrolls X out of its table.
  const json& v = before.state["windows"]["Variables"];
  const int mx = static_cast<int>(v[0].get<float>() + v[2].get<float>() / 2);
  const int my = static_cast<int>(v[1].get<float>() + v[3].get<float>() / 2);
  const AppRun after = run_app("", "goto:4:6,open:attention,mouse:" + std::to_string(mx) + ":" + std::to_string(my) +
                                       ",wheel:-10");
  ASSERT_EQ(after.exit_code, 0) << after.output;
  const json* x2 = heatmap_named(after, "X", true);
  ASSERT_NE(x2, nullptr);
  EXPECT_FALSE((*x2)["visible"]) << *x2;
  EXPECT_LT((*x2)["rect"][1].get<float>(), (*x)["rect"][1].get<float>()) << "the panel did not scroll";
  // The last variable in scope came into view.
  const json* vt = heatmap_named(after, "Ṽ", true);
  ASSERT_NE(vt, nullptr);
  EXPECT_TRUE((*vt)["visible"]) << *vt;
}

TEST(GuiHeatmaps, CoveredByAnotherWindowIsNotVisible) {
  // The export dialog opens in the middle of the screen, over the Attention tab's left views.
  const AppRun r = run_app("", "goto:4:6,open:attention,export-dialog:png");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& dialog = r.state["windows"]["Export##export-dialog"];
  ASSERT_TRUE(dialog.is_array()) << r.state["windows"];
  const float dx0 = dialog[0], dy0 = dialog[1], dx1 = dx0 + dialog[2].get<float>(), dy1 = dy0 + dialog[3].get<float>();
  int covered = 0, clear = 0;
  for (const json& h : heatmaps(r, false)) {
    const float x0 = h["rect"][0], y0 = h["rect"][1];
    const float x1 = x0 + h["rect"][2].get<float>(), y1 = y0 + h["rect"][3].get<float>();
    const bool under = x0 < dx1 && dx0 < x1 && y0 < dy1 && dy0 < y1;
    EXPECT_EQ(h["visible"].get<bool>(), !under) << h << " dialog " << dialog;
    (under ? covered : clear) += 1;
  }
  EXPECT_GT(covered, 0) << "the dialog covers no view: the test shows nothing";
  EXPECT_GT(clear, 0);
}

// The legend's numbers are legend_ends' (whole, with the digits that tell the ends apart), and
// written inside their heatmap, of which the first `visible` are fully visible: no number is cut.
void expect_whole_legends(const AppRun& r, size_t visible) {
  const std::vector<json> full = heatmaps(r, false);
  ASSERT_GE(full.size(), visible);
  for (size_t i = 0; i < full.size(); ++i) {
    const json& h = full[i];
    const float lo = h["scale"]["lo"], hi = h["scale"]["hi"];
    const sf::LegendEnds e = sf::legend_ends(lo, hi);
    EXPECT_EQ(h["legend"]["lo"], e.lo) << h;
    EXPECT_EQ(h["legend"]["hi"], e.hi) << h;
    // 3 significant digits are within half a unit of the third: 0.5% of the end.
    EXPECT_NEAR(std::stof(e.hi), hi, std::abs(hi) * 0.005f) << h;
    if (i < visible) EXPECT_TRUE(h["visible"]) << h;
    EXPECT_TRUE(inside(h["legend"]["lo_rect"], h["rect"])) << h;
    EXPECT_TRUE(inside(h["legend"]["hi_rect"], h["rect"])) << h;
  }
}

TEST(GuiHeatmaps, LegendNumbersAreNeverCut) {
  const AppRun r = run_app("", "goto:4:6,open:attention");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_whole_legends(r, 4);
  // S's scale, ±max|S| ≈ 33.46: the "33.!".
  const json* S = heatmap_named(r, "S", false);
  ASSERT_NE(S, nullptr);
  EXPECT_EQ((*S)["legend"]["hi"], "33.5");
  EXPECT_EQ((*S)["legend"]["lo"], "-33.5");
  // A narrower screen with larger type leaves the four views less room: the legends of the two
  // views on top still fit across their half of the tab (those below are scrolled out of view).
  const AppRun narrow = run_app("--size 1024x768", "font:20,goto:4:6,open:attention");
  ASSERT_EQ(narrow.exit_code, 0) << narrow.output;
  expect_whole_legends(narrow, 2);
}

TEST(GuiHeatmaps, SpecialTokensAreLabelled) {
  // GPT: the prompt starts with <bos>; its row and its column are labelled.
  const AppRun g = run_app("", "goto:4:6,open:attention");
  ASSERT_EQ(g.exit_code, 0) << g.output;
  const json* S = heatmap_named(g, "S", false);
  ASSERT_NE(S, nullptr);
  EXPECT_EQ((*S)["col_labels"][0], "<bos>") << *S;
  EXPECT_EQ((*S)["row_labels"][0], "<bos>") << *S;
  // Every column of a 7-token prompt fits: all are labelled.
  for (const json& l : (*S)["col_labels"]) EXPECT_NE(l, "") << *S;
  // BERT: a masked position's row and column read <mask>, and the ends <bos> and <eos>. At 1600×1000:
  // at 1280×800 the Inspector's 13 tabs take three rows of buttons and the 6-row heatmaps thin their row
  // labels to every third, which hides row 3 (what is labelled is the subject here, not the density).
  const AppRun b = gui::run_app_sized(1600, 1000, "--no-ini --model " + std::string(STEPFORMER_SOURCE_DIR) +
                                 "/assets/bert.safetensors", "prompt:abcd,mask:3,goto:4:6,open:attention");
  ASSERT_EQ(b.exit_code, 0) << b.output;
  const json* Sb = heatmap_named(b, "S", false);
  ASSERT_NE(Sb, nullptr);
  for (const char* axis : {"col_labels", "row_labels"}) {
    EXPECT_TRUE(has_label(*Sb, axis, "<mask>")) << *Sb;
    EXPECT_TRUE(has_label(*Sb, axis, "<bos>")) << *Sb;
    EXPECT_TRUE(has_label(*Sb, axis, "<eos>")) << *Sb;
  }
}

void expect_same_scale(const json& a, const json& b) {
  EXPECT_EQ(a["scale"], b["scale"]) << a["value"] << (a.value("thumbnail", false) ? " (thumbnail)" : "") << " vs "
                                    << b["value"] << (b.value("thumbnail", false) ? " (thumbnail)" : "");
}

TEST(GuiHeatmaps, ThumbnailAndInspectorShareOneColourScale) {
  // BERT attends everywhere (Mask ≡ 1), so no softmax(S/√d_attn) weight reaches 1: a scale taken
  // from the data would end below 1 and differ between views. It is [0, 1] in the Variables
  // thumbnail, the Attention tab's view and its grid of heads; S (after masking, line 5) is on
  // S's ±max|S| everywhere.
  const std::string bert = "--model " + std::string(STEPFORMER_SOURCE_DIR) + "/assets/bert.safetensors";
  const AppRun r = run_app(bert, "goto:4:6,open:attention");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json* thumb = heatmap_named(r, kSoftmax, true);
  const json* view = heatmap_named(r, kSoftmax, false);
  const json* S = heatmap_named(r, "S", false);
  ASSERT_TRUE(thumb && view && S);
  EXPECT_EQ((*view)["scale"]["lo"], 0.0);
  EXPECT_EQ((*view)["scale"]["hi"], 1.0);
  for (const json& h : r.state["heatmaps"]) {
    if (h["value"] == kSoftmax) expect_same_scale(h, *view);
    if (h["value"] == "S") expect_same_scale(h, *S);
  }
  // GPT's causal mask puts −∞ where S's largest |score| may be: S after masking (the Variables
  // thumbnail at line 6) keeps line 4's ±max|S| all the same.
  const AppRun g = run_app("", "goto:4:6,open:attention");
  ASSERT_EQ(g.exit_code, 0) << g.output;
  const json* gS = heatmap_named(g, "S", false);
  ASSERT_NE(gS, nullptr);
  int thumbnails_of_S = 0;
  for (const json& h : g.state["heatmaps"])
    if (h["value"] == "S") {
      expect_same_scale(h, *gS);
      thumbnails_of_S += h.value("thumbnail", false);
    }
  EXPECT_EQ(thumbnails_of_S, 1);
  // The Tensor view of the same value.
  const AppRun t = run_app(bert, "goto:4:6,select:" + kSoftmax + ",open:tensor");
  ASSERT_EQ(t.exit_code, 0) << t.output;
  const json* tv = heatmap_named(t, kSoftmax, false);
  const json* tt = heatmap_named(t, kSoftmax, true);
  ASSERT_TRUE(tv && tt);
  expect_same_scale(*tt, *tv);
  EXPECT_EQ((*tv)["scale"]["hi"], 1.0);
}

}  // namespace

}  // namespace test_gui_heatmaps
