// The Vision tab in the real app at 1280×720 (issue 26 item 5): a vision transformer opened, the tab
// is there (and only for a vit), drawn whole; the verbs pick a test digit, draw a pixel and choose the
// layer and head; --dump-state's "vision" object says what the tab shows (P[:, 1], the prediction,
// the class token's weights), and the pixel painted with the mouse lands where the pointer was.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

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

// The Head view names a vit's tokens "CLS", "P1" … (before session 19 its columns had no labels: the ids it
// labelled were the image's pixels).
TEST(GuiVision, TheHeadViewNamesTheClassTokenAndThePatches) {
  const AppRun r = run_720("load:" + kVit + ",open:headview");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& hv = r.state["head_view"];
  EXPECT_EQ(hv["keys"], json({"CLS", "P1", "P2", "P3", "P4"})) << hv;
  EXPECT_EQ(hv["queries"], hv["keys"]);
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
  // No tokenizer: --dump-state says what the input is instead, as the "Opened …" notice does; the
  // status line says it shorter (its keys already name patch=4 and ℓ_max=5) and fits at 1280×720.
  EXPECT_EQ(r.state["tokenizer"], "none: an 8×8 image in 4×4 patches (4 patch tokens + the class token), 10 classes (0 … 9)");
  const json& status = r.state["status_line"];
  EXPECT_NE(status["text"].get<std::string>().find("patch=4 H=4"), std::string::npos) << status;
  EXPECT_NE(status["text"].get<std::string>().find("ℓ_max=5 classes=10 image=8×8 ε="), std::string::npos) << status;
  EXPECT_TRUE(status["fits"].get<bool>()) << status;
  const AppRun text = run_720("wait");  // a text model keeps its tokenizer's description
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_EQ(text.state["tokenizer"].get<std::string>().rfind("none", 0), std::string::npos) << text.state["tokenizer"];
  EXPECT_NE(text.state["status_line"]["text"].get<std::string>().find("N_V="), std::string::npos);
}

// The heatmaps' patch labels, read back from the framebuffer (issue 26 item 5: "the patches' tokens
// label every heatmap axis as small images"). At Algorithm 4 line 6 the Attention tab draws S, Mask,
// S after masking and softmax(S/√d_attn), each with its t_z rows and t_x columns labelled: the class
// token as text ("CLS"), patch k (token k + 1) as its p×p pixels. Within each label's rectangle (from
// --dump-state's "col_label_images" / "row_label_images"), every image pixel is a square of whole screen
// pixels filled with one colour, grey round(255 v / 16) for the intensity v of that pixel of the session's
// current image (--dump-state's "vision"."image"). The tolerance is one 8-bit step: the grey is a vertex
// colour drawn opaque over nothing else, which the framebuffer and the lossless PNG keep, up to a
// driver's rounding of the unorm conversion.
constexpr double kGreyTol = 1.0;

// The mean of R, G and B over the screen pixels of image pixel (r, c) of a label drawn at rect
// [x, y, w, h] with p pixels a side; and the largest spread of a channel from that mean.
struct CellMean {
  double mean = 0, spread = 0;
};
CellMean cell_mean(const AppRun& run, const json& rect, int p, int r, int c) {
  const int x0 = static_cast<int>(rect[0].get<double>()), y0 = static_cast<int>(rect[1].get<double>());
  const int q = static_cast<int>(rect[2].get<double>()) / p;  // screen pixels per image pixel
  CellMean m;
  std::vector<int> seen;
  for (int y = y0 + r * q; y < y0 + (r + 1) * q; ++y)
    for (int x = x0 + c * q; x < x0 + (c + 1) * q; ++x)
      for (int ch : run.px(x, y)) seen.push_back(ch);
  for (int v : seen) m.mean += v;
  m.mean /= static_cast<double>(seen.size());
  for (int v : seen) m.spread = std::max(m.spread, std::abs(v - m.mean));
  return m;
}

void expect_label_is_patch(const AppRun& run, const json& rect, const json& image, int token, const std::string& where) {
  constexpr int p = 4, per_row = 8 / p;  // the committed model's patches
  ASSERT_TRUE(rect.is_array()) << where << ": token " << token << " has no label image";
  ASSERT_EQ(rect[2].get<int>(), rect[3].get<int>()) << where;
  ASSERT_EQ(rect[2].get<int>() % p, 0) << where << ": the image pixels are not whole screen pixels";
  const int k = token - 1;  // patch k
  for (int r = 0; r < p; ++r)
    for (int c = 0; c < p; ++c) {
      const int row = (k - 1) / per_row * p + r, col = (k - 1) % per_row * p + c;
      const int v = image[row * 8 + col].get<int>();
      const CellMean m = cell_mean(run, rect, p, r, c);
      EXPECT_NEAR(m.mean, std::lround(255.0 * v / 16), kGreyTol)
          << where << ", token " << token << ", pixel row " << row + 1 << " column " << col + 1 << " (v = " << v << ")";
      EXPECT_LE(m.spread, kGreyTol) << where << ": image pixel " << r << ", " << c << " of token " << token << " is not one grey";
    }
}

TEST(GuiVision, TheHeatmapsLabelThePatchTokensWithTheirPixels) {
  for (const auto& [w, h] : {std::pair{1366, 768}, std::pair{1280, 720}}) {
    const std::string size = std::to_string(w) + "x" + std::to_string(h);
    // The pointer parked on the menu bar, where it shows no tooltip over the heatmaps.
    const AppRun r = gui::run_app_sized(w, h, "--no-ini", "example:4,wait,goto:4:6,open:attention,mouse:0:0,wait");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_GT(r.w, 0) << "no screenshot";
    const json& image = r.state["vision"]["image"];
    ASSERT_EQ(image.size(), 64u);
    int labelled = 0;
    for (const json& hm : r.state["heatmaps"]) {
      if (hm.value("thumbnail", false) || !hm.contains("col_label_images")) continue;
      const std::string where = size + " " + hm["value"].get<std::string>();
      EXPECT_TRUE(hm["visible"].get<bool>()) << where;
      const json& cols = hm["col_label_images"];
      ASSERT_EQ(cols.size(), 5u) << where;  // ℓ_x = 1 + (8/4)², none thinned out
      EXPECT_TRUE(cols[0].is_null()) << where;  // the class token: text
      EXPECT_EQ(hm["col_labels"][0], "CLS") << where;
      for (int t = 2; t <= 5; ++t) expect_label_is_patch(r, cols[t - 1], image, t, where + " column");
      for (int t = 2; t <= 5; ++t) expect_label_is_patch(r, hm["row_label_images"][t - 1], image, t, where + " row");
      ++labelled;
    }
    EXPECT_EQ(labelled, 4) << size << ": S, Mask, S after masking, softmax(S/√d_attn)";
  }
}

// Another test digit gives other labels: where two digits' pixels differ, so do the labels' greys,
// by the image's difference.
TEST(GuiVision, AnotherDigitRedrawsThePatchLabels) {
  const std::string go = ",goto:4:6,open:attention,mouse:0:0,wait";
  const AppRun a = gui::run_app_sized(1366, 768, "--no-ini", "example:4,wait,vision-digit:1" + go);
  const AppRun b = gui::run_app_sized(1366, 768, "--no-ini", "example:4,wait,vision-digit:2" + go);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  ASSERT_EQ(b.exit_code, 0) << b.output;
  const json &ia = a.state["vision"]["image"], &ib = b.state["vision"]["image"];
  ASSERT_NE(ia, ib);
  // The column labels of the Attention tab's softmax(S/√d_attn) (a full heatmap, not a thumbnail).
  auto softmax_labels = [](const AppRun& run) {
    for (const json& hm : run.state["heatmaps"])
      if (hm["value"] == "softmax(S/√d_attn)" && hm.contains("col_label_images")) return hm["col_label_images"];
    return json();
  };
  const json ra = softmax_labels(a), rb = softmax_labels(b);
  ASSERT_EQ(ra.size(), 5u) << ra;
  ASSERT_EQ(ra, rb);  // the same layout: only the pixels differ
  int differing = 0;
  for (int t = 2; t <= 5; ++t)
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) {
        const int k = t - 1, row = (k - 1) / 2 * 4 + r, col = (k - 1) % 2 * 4 + c;
        const int va = ia[row * 8 + col], vb = ib[row * 8 + col];
        const double want = std::lround(255.0 * va / 16) - std::lround(255.0 * vb / 16);
        const double got = cell_mean(a, ra[t - 1], 4, r, c).mean - cell_mean(b, rb[t - 1], 4, r, c).mean;
        EXPECT_NEAR(got, want, 2 * kGreyTol) << "token " << t << ", pixel " << row + 1 << ", " << col + 1;
        differing += va != vb;
      }
  EXPECT_GT(differing, 0);
}

}  // namespace

}  // namespace test_gui_vision
