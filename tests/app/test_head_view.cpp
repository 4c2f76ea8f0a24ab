// The head view (app/logic/head_view.hpp, head_view_figure.hpp): its lines' opacities are the
// trace's softmax(S/√d_attn) exactly and agree with a softmax recomputed here in double from the
// traced Q and K; masked pairs draw no line; hovering keeps one token's lines; cross-attention puts
// z on the left; the exported SVG carries every line at its weight and the PNG decodes.
#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "app/logic/head_view.hpp"
#include "app/logic/head_view_figure.hpp"
#include "app/session.hpp"
#include "tests/core/tiny_config.hpp"

namespace sf {
namespace test_head_view {

std::string id_label(int id) { return "#" + std::to_string(id); }

struct Traced {
  Session s;
  std::vector<HeadCall> calls;
  std::vector<AttentionGroup> groups;
  void retrace() {
    s.wait_for_trace();
    calls = head_calls(s.trace());
    groups = attention_groups(calls, s.model().config);
  }
};

Traced& tiny_gpt() {  // L = 2, H = 2, causal, prompt "hello"
  static Traced t;
  static bool ready = false;
  if (!ready) {
    t.s.set_model(Model::initialised(test::tiny_gpt_config(16), 5), "tiny gpt (seed 5)");
    t.s.set_prompt("hello");
    t.retrace();
    ready = true;
  }
  return t;
}

// The value bound by `line` within call c's frame (between its Enter and its line 6).
const Value* bound(const Trace& t, const HeadCall& c, LineRef line, const char* name) {
  for (size_t k = c.enter; k <= c.line6; ++k)
    if (t.events[k].ref() == line)
      if (const Value* v = event_value(t.events[k], name)) return v;
  return nullptr;
}

TEST(HeadView, LinesAreTheTracedWeightsAndMaskedPairsHaveNone) {
  Traced& t = tiny_gpt();
  const HeadView v = head_view(t.s.trace(), t.calls, t.groups.at(0), 2, {}, 2, 0, id_label);
  ASSERT_EQ(v.heads, (std::vector<int>{1, 2}));
  const int n = static_cast<int>(t.s.tokens().size());
  ASSERT_EQ(static_cast<int>(v.queries.size()), n);
  ASSERT_EQ(v.keys, v.queries);  // self-attention: both columns are x
  EXPECT_FALSE(v.cross);
  // Causal: every pair t_z ≤ t_x has a line (its weight > 0), no pair t_z > t_x has one.
  EXPECT_EQ(static_cast<int>(v.lines.size()), 2 * n * (n + 1) / 2);
  for (const HeadViewLine& l : v.lines) {
    EXPECT_LE(l.t_z, l.t_x);
    const HeadCall* c = find_head_call(t.calls, 10, 6, 2, l.head, 0);
    ASSERT_TRUE(c && c->A);
    EXPECT_EQ(l.weight, c->A->m(l.t_z - 1, l.t_x - 1));  // exactly the trace's float
  }
}

TEST(HeadView, WeightsAgreeWithASoftmaxRecomputedFromQAndK) {
  Traced& t = tiny_gpt();
  const HeadView v = head_view(t.s.trace(), t.calls, t.groups.at(0), 1, {2}, 2, 0, id_label);
  const HeadCall* c = find_head_call(t.calls, 10, 6, 1, 2, 0);
  ASSERT_TRUE(c);
  const Value* Q = bound(t.s.trace(), *c, lines::attention::Q, "Q");
  const Value* K = bound(t.s.trace(), *c, lines::attention::K, "K");
  ASSERT_TRUE(Q && K);
  const Eigen::MatrixXd S = K->m.cast<double>().transpose() * Q->m.cast<double>() / std::sqrt(double(Q->m.rows()));
  // The trace's weights are float: S's entries are sums of d_attn = 4 float products and the
  // softmax a sum of ℓ ≤ 7 float exponentials, each within 2⁻²⁴ relative: about 1e-6 in all;
  // 1e-5 leaves a margin of ten.
  for (const HeadViewLine& l : v.lines) {
    const int tx = l.t_x - 1;
    double z = 0;
    for (int j = 0; j <= tx; ++j) z += std::exp(S(j, tx));  // causal: keys 1 … t_x
    EXPECT_NEAR(l.weight, std::exp(S(l.t_z - 1, tx)) / z, 1e-5);
  }
}

TEST(HeadView, HoveringATokenKeepsOnlyItsLines) {
  Traced& t = tiny_gpt();
  const HeadView v = head_view(t.s.trace(), t.calls, t.groups.at(0), 1, {}, 2, 0, id_label);
  const std::vector<HeadViewLine> key = visible_lines(v, {HeadViewSide::Key, 2});
  const int n = static_cast<int>(v.queries.size());
  EXPECT_EQ(static_cast<int>(key.size()), 2 * (n - 1));  // key 2 is seen by queries 2 … n, in each head
  for (const HeadViewLine& l : key) EXPECT_EQ(l.t_z, 2);
  const std::vector<HeadViewLine> query = visible_lines(v, {HeadViewSide::Query, 3});
  EXPECT_EQ(static_cast<int>(query.size()), 2 * 3);  // query 3 sees keys 1 … 3
  for (const HeadViewLine& l : query) EXPECT_EQ(l.t_x, 3);
  EXPECT_EQ(visible_lines(v, {}).size(), v.lines.size());
}

TEST(HeadView, CrossAttentionPutsTheContextOnTheLeft) {
  static Traced t;
  ModelConfig c;
  c.arch = "ed";
  c.L_enc = c.L_dec = 1;
  c.H = 2;
  c.l_max = 16;
  t.s.set_model(Model::initialised(c, 3), "ed (seed 3)");
  t.s.set_context("abc");
  t.s.set_prompt("abcdef");
  t.retrace();
  const AttentionGroup* cross = nullptr;
  for (const AttentionGroup& g : t.groups)
    if (g.alg == 8 && g.line == 16) cross = &g;
  ASSERT_TRUE(cross);
  const HeadView v = head_view(t.s.trace(), t.calls, *cross, 1, {}, 2, 0, id_label);
  EXPECT_TRUE(v.cross);
  const Tokens& z = t.s.tokens_z();
  const Tokens& x = t.s.tokens();
  ASSERT_EQ(v.keys.size(), z.size());
  ASSERT_EQ(v.queries.size(), x.size());
  for (size_t i = 0; i < z.size(); ++i) EXPECT_EQ(v.keys[i], id_label(z[i]));
  // Mask ≡ 1: every (t_z, t_x) of both heads has a line.
  EXPECT_EQ(v.lines.size(), 2 * z.size() * x.size());
}

TEST(HeadView, ExportedSvgHasEveryLineAtItsWeightAndThePngDecodes) {
  Traced& t = tiny_gpt();
  const HeadView v = head_view(t.s.trace(), t.calls, t.groups.at(0), 2, {1, 2}, 2, 0, id_label);
  const auto dir = std::filesystem::temp_directory_path() / ("sf-head-view-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string svg = (dir / "h.svg").string(), png = (dir / "h.png").string();
  export_head_view("svg", svg, v, "softmax(S/√d_attn), layer 2");
  export_head_view("png", png, v, "softmax(S/√d_attn), layer 2");
  std::stringstream text;
  text << std::ifstream(svg).rdbuf();
  const std::string s = text.str();
  const std::regex line_re(
      "<line class=\"attn\"[^>]*stroke-opacity=\"([^\"]+)\" data-head=\"(\\d+)\" data-tz=\"(\\d+)\" data-tx=\"(\\d+)\" "
      "data-weight=\"([^\"]+)\"/>");
  size_t n = 0;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), line_re); it != std::sregex_iterator(); ++it, ++n) {
    const std::smatch& m = *it;
    ASSERT_LT(n, v.lines.size());
    const HeadViewLine& l = v.lines[n];
    EXPECT_EQ(std::stoi(m[2]), l.head);
    EXPECT_EQ(std::stoi(m[3]), l.t_z);
    EXPECT_EQ(std::stoi(m[4]), l.t_x);
    EXPECT_EQ(static_cast<float>(std::stod(m[1])), static_cast<float>(l.weight));  // %.9g: a float's round trip
    EXPECT_EQ(m[1], m[5]);  // drawn at opacity = weight
  }
  EXPECT_EQ(n, v.lines.size());
  EXPECT_NE(s.find("keys: x"), std::string::npos);
  int w = 0, h = 0, comp = 0;
  unsigned char* px = stbi_load(png.c_str(), &w, &h, &comp, 4);
  ASSERT_TRUE(px);
  const HeadViewFigure f = layout_head_view(v, "softmax(S/√d_attn), layer 2");
  EXPECT_EQ(w, f.w);
  EXPECT_EQ(h, f.h);
  // The strongest line's midpoint is tinted (not white): the lines are drawn.
  const HeadViewFigure::Line* best = &f.lines[0];
  for (const auto& l : f.lines) best = l.of.weight > best->of.weight ? &l : best;
  const int mx = static_cast<int>((best->x1 + best->x2) / 2), my = static_cast<int>((best->y1 + best->y2) / 2);
  const unsigned char* p = px + (static_cast<size_t>(my) * w + mx) * 4;
  EXPECT_LT(std::min({p[0], p[1], p[2]}), 250);
  stbi_image_free(px);
  std::filesystem::remove_all(dir);
  EXPECT_THROW(export_head_view("csv", svg, v, ""), std::exception);
}

}  // namespace test_head_view
}  // namespace sf
