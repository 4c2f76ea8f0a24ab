// Stepping through backpropagation in the real app under Xvfb (issue 24, items 3, 4 and 7; the
// backward listings are Stepformer's, not the paper's): the Training tab traces one update of
// Algorithm 13; stepping into its line 6 enters the backward frames; a breakpoint on the adjoint of
// Algorithm 4's line 6 stops in the first head reached (layer 2, head 4 of the default model); there
// the Variables view shows each gradient beside its forward value, the Tensor view switches between
// value, gradient and value ⊙ gradient, and the Attention tab shows ∇S and ∇A (beside S and A when asked or roomy), with
// ∇S exactly 0 at every masked cell and equal to the softmax's adjoint of ∇A computed here from A.
// At 1280×720, 1366×768 and 1920×1080, checked through --dump-state.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gui_harness.hpp"

namespace test_gui_backprop {

using namespace gui;

namespace {

struct Size {
  int w, h;
};
constexpr Size kSizes[] = {{1280, 720}, {1366, 768}, {1920, 1080}};

// One update of Algorithm 13 traced by the Training tab (after one practical update, as lesson 7
// does), then the first Attention adjoint's line 6.
const std::string kToAttentionAdjoint = "open:training,train-step:1,train-trace,breakpoint-adjoint:4:6,continue";

const json* heatmap_named(const json& state, const std::string& name, bool thumbnail) {
  for (const json& h : state["heatmaps"])
    if (h["value"] == name && h.value("thumbnail", false) == thumbnail) return &h;
  return nullptr;
}

bool paired(const json& state, const std::string& grad, const std::string& value) {
  for (const json& p : state["gradient_pairs"])
    if (p["gradient"] == grad && p["value"] == value) return true;
  return false;
}

void expect_attention_adjoint(const json& state) {
  const json& e = state["event"];
  EXPECT_EQ(e["alg"], 4);
  EXPECT_EQ(e["line"], 6);
  EXPECT_EQ(e["pass"], "backward");
  EXPECT_EQ(e["l"], 2);
  EXPECT_EQ(e["h"], 4);
}

std::string size_name(const Size& s) { return std::to_string(s.w) + "×" + std::to_string(s.h); }

}  // namespace

TEST(GuiBackprop, StepIntoTheUpdateLineEntersTheBackwardFrames) {
  const AppRun r = run_app("", "open:training,train-step:1,train-trace,goto:13:5,step-into");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& e = r.state["event"];
  EXPECT_EQ(e["alg"], 10) << "Algorithm 10's backward frame, nested in Algorithm 13 line 6";
  EXPECT_EQ(e["line"], 0);
  EXPECT_EQ(e["pass"], "backward");
  EXPECT_EQ(e["depth"], 1);
}

TEST(GuiBackprop, VariablesShowEachGradientBesideItsValue) {
  for (const Size& s : kSizes) {
    SCOPED_TRACE(size_name(s));
    const AppRun r = run_app_sized(s.w, s.h, "--no-ini", kToAttentionAdjoint + ",open:variables,select:∇S,tensor-view:value");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    expect_attention_adjoint(r.state);
    EXPECT_TRUE(paired(r.state, "∇S", "S")) << r.state["gradient_pairs"].dump();
    EXPECT_TRUE(paired(r.state, "∇A", "softmax(S/√d_attn)")) << r.state["gradient_pairs"].dump();
    EXPECT_TRUE(paired(r.state, "∇V", "V")) << r.state["gradient_pairs"].dump();
    EXPECT_TRUE(paired(r.state, "∇Ṽ", "Ṽ")) << r.state["gradient_pairs"].dump();
    // Both thumbnails of a pair are drawn in the Variables view.
    EXPECT_NE(heatmap_named(r.state, "∇S", true), nullptr);
    EXPECT_NE(heatmap_named(r.state, "S", true), nullptr);
    // The Tensor view shows ∇S's forward value S, whole.
    EXPECT_EQ(r.state["tensor_view"]["pair_view"], "value");
    EXPECT_EQ(r.state["tensor_view"]["shown"], "S");
    const json* big = heatmap_named(r.state, "S", false);
    ASSERT_NE(big, nullptr);
    EXPECT_TRUE((*big)["visible"].get<bool>());
  }
}

TEST(GuiBackprop, TensorViewSwitchesToGradientAndProduct) {
  AppRun r = run_app("", kToAttentionAdjoint + ",select:∇S,tensor-view:gradient");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["tensor_view"]["shown"], "∇S");
  EXPECT_NE(heatmap_named(r.state, "∇S", false), nullptr);
  r = run_app("", kToAttentionAdjoint + ",select:∇S,tensor-view:product");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["tensor_view"]["pair_view"], "value ⊙ gradient");
  EXPECT_EQ(r.state["tensor_view"]["shown"], "S ⊙ ∇S");
  EXPECT_NE(heatmap_named(r.state, "S ⊙ ∇S", false), nullptr);
  r = run_app("", kToAttentionAdjoint + ",tensor-view:sum");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("tensor-view takes value, gradient or product"), std::string::npos) << r.output;
}

TEST(GuiBackprop, AttentionTabShowsGradScoresWithMaskedCellsZero) {
  for (const Size& s : kSizes) {
    SCOPED_TRACE(size_name(s));
    // All four views, as the learner picks them at any size (by default only where they fit: below).
    const AppRun r = run_app_sized(s.w, s.h, "--no-ini", kToAttentionAdjoint + ",open:attention,attention-views:both");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    expect_attention_adjoint(r.state);
    const json& a = r.state["attention_view"];
    ASSERT_TRUE(a["gradients"].get<bool>()) << a.dump();
    EXPECT_EQ(a["l"], 2);
    EXPECT_EQ(a["h"], 4);
    const int d_attn = r.state["config"]["d_attn"];
    const json &A = a["A"], &dA = a["grad_A"], &dS = a["grad_S"], &mask = a["mask"];
    const size_t n = A.size();
    ASSERT_EQ(dS.size(), n);
    int masked = 0;
    for (size_t j = 0; j < n; ++j) {
      // ∇S[:, j] = A[:, j] ⊙ (∇A[:, j] − Σ_u A[u, j] ∇A[u, j]) / √d_attn, in double from the dumped floats.
      double dot = 0, scale = 0;
      for (size_t u = 0; u < n; ++u) {
        dot += A[u][j].get<double>() * dA[u][j].get<double>();
        scale = std::max(scale, std::abs(A[u][j].get<double>() * dA[u][j].get<double>()));
      }
      // The app computed it in float: a sum of ℓ ≤ 8 terms no larger than max|A ⊙ ∇A|, then a few
      // products, so within about 16 float roundings of that size.
      const double tol = 16 * std::numeric_limits<float>::epsilon() * std::max(scale, 1e-30);
      for (size_t i = 0; i < n; ++i) {
        const double want = A[i][j].get<double>() * (dA[i][j].get<double>() - dot) / std::sqrt(double(d_attn));
        EXPECT_NEAR(dS[i][j].get<double>(), want, tol) << "∇S[" << i + 1 << ", " << j + 1 << "]";
        if (mask[i][j].get<double>() == 0) {
          ++masked;
          EXPECT_EQ(dS[i][j].get<double>(), 0.0) << "masked ∇S[" << i + 1 << ", " << j + 1 << "] is exactly 0";
        }
      }
    }
    EXPECT_GT(masked, 0);
    // The two gradient views are drawn whole, beside S and A.
    for (const char* name : {"∇S", "∇A", "S", "softmax(S/√d_attn)"}) {
      const json* h = heatmap_named(r.state, name, false);
      ASSERT_NE(h, nullptr) << name;
      EXPECT_TRUE((*h)["visible"].get<bool>()) << name;
    }
  }
}

namespace {

// How many of a heatmap's rows got their token label (the others were thinned out for lack of height).
size_t labelled_rows(const json& h) {
  size_t n = 0;
  for (const json& l : h["row_labels"]) n += !l.get<std::string>().empty();
  return n;
}

double height_of(const json& h) { return h["rect"][3].get<double>(); }

}  // namespace

// Issue 24 at a projector's size: four views of a 15-token sequence in a 720-pixel-high window were
// about 50 px of cells each, 3 of 15 rows labelled. By default the tab now shows all four only where
// each can label every row (1920×1080), else ∇S and ∇A alone, every row labelled; the switch shows a
// pair at any size, each view more than twice as tall as in the four (one row of views instead of two,
// and one caption fewer above each).
TEST(GuiBackprop, AttentionTabViewsAreReadableAtProjectorSizes) {
  for (const Size& s : kSizes) {
    SCOPED_TRACE(size_name(s));
    const AppRun r = run_app_sized(s.w, s.h, "--no-ini", kToAttentionAdjoint + ",open:attention");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const bool roomy = s.h >= 1080;
    EXPECT_EQ(r.state["attention_view"]["views"], roomy ? "both" : "gradient");
    const size_t n = r.state["attention_view"]["A"].size();
    ASSERT_EQ(n, 15u);
    std::vector<std::string> shown{"∇S", "∇A"};
    if (roomy) shown.insert(shown.end(), {"S", "softmax(S/√d_attn)"});
    for (const std::string& name : shown) {
      const json* h = heatmap_named(r.state, name, false);
      ASSERT_NE(h, nullptr) << name;
      EXPECT_TRUE((*h)["visible"].get<bool>()) << name;
      EXPECT_EQ(labelled_rows(*h), n) << name << ": every token row labelled";
    }
    if (!roomy) EXPECT_EQ(heatmap_named(r.state, "S", false), nullptr) << "S and A wait for the switch";
    // The pairs against the four, at the same size.
    const AppRun both = run_app_sized(s.w, s.h, "--no-ini", kToAttentionAdjoint + ",open:attention,attention-views:both");
    const AppRun forward = run_app_sized(s.w, s.h, "--no-ini", kToAttentionAdjoint + ",open:attention,attention-views:forward");
    ASSERT_EQ(forward.exit_code, 0) << forward.output;
    EXPECT_EQ(forward.state["attention_view"]["views"], "forward");
    EXPECT_EQ(heatmap_named(forward.state, "∇S", false), nullptr);
    const json* S = heatmap_named(forward.state, "S", false);  // with the key of its −∞ cells under it
    ASSERT_NE(S, nullptr);
    EXPECT_TRUE((*S)["visible"].get<bool>()) << "S after masking, whole";
    for (const auto& [pair, name] : {std::pair{&r, "∇S"}, std::pair{&forward, "softmax(S/√d_attn)"}}) {
      const json* big = heatmap_named(pair->state, name, false);
      const json* small = heatmap_named(both.state, name, false);
      ASSERT_NE(big, nullptr) << name;
      ASSERT_NE(small, nullptr) << name;
      EXPECT_TRUE((*big)["visible"].get<bool>()) << name;
      if (!roomy) EXPECT_GT(height_of(*big), 2 * height_of(*small)) << name << " alone in its pair, against the four";
    }
  }
  const AppRun bad = run_app("", kToAttentionAdjoint + ",attention-views:sideways");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("attention-views takes both (S, A, ∇S and ∇A), forward (S and A) or gradient (∇S and ∇A)"),
            std::string::npos)
      << bad.output;
}

// The Tensor view's header names the entry of θ a parameter is, and for a gradient ∇W the entry W
// is, from Value::param and Value::head (set by core where θ was bound, never guessed by name).
// The first Attention adjoint the backward reaches is layer L = 2's head H = 4.
TEST(GuiBackprop, TensorViewNamesTheParameterEntryOfAGradient) {
  const std::string to_line_1 = "open:training,train-step:1,train-trace,breakpoint-adjoint:4:1,continue";
  AppRun r = run_app("", to_line_1 + ",select:∇W_q,tensor-view:gradient");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["tensor_view"]["shown"], "∇W_q");
  EXPECT_EQ(r.state["tensor_view"]["parameter"], "the gradient of parameter layer2.attn.W_q, head 4");
  r = run_app("", to_line_1 + ",select:∇X");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["tensor_view"]["parameter"], "") << "∇X is the gradient of an activation, not of θ";
}

}  // namespace test_gui_backprop
