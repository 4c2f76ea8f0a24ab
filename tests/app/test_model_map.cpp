// The model map's geometry against the configuration (app/logic/model_map.hpp): the boxes of each
// architecture, GPT-2's 12 layers and 144 heads, the encoder-decoder's cross edges, the shapes on
// the edges, the variants' badges; and against a real trace: the lit box for given cursor
// positions and the step a click jumps to, found here independently by scanning the trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "app/logic/figure_font.hpp"
#include "app/logic/model_map.hpp"
#include "app/session.hpp"
#include "tests/core/tiny_config.hpp"

namespace sf {
namespace test_model_map {

std::map<MapKind, int> kinds(const ModelMap& m) {
  std::map<MapKind, int> n;
  for (const MapBox& b : m.boxes) ++n[b.kind];
  return n;
}

const MapBox& box(const ModelMap& m, const std::string& id) {
  const int b = m.find(id);
  EXPECT_GE(b, 0) << id;
  return m.boxes.at(std::max(b, 0));
}

bool has_badge(const ModelMap& m, const std::string& text) {
  return std::any_of(m.badges.begin(), m.badges.end(), [&](const MapBadge& b) { return b.text == text; });
}

// Every label fits its box in the app's font (measured at 100 px: widths scale linearly), no two
// boxes overlap (a head lies inside its MHAttention box, apart from the other heads), every box lies
// within [0, max_w] across, and so does the map (the encoder-decoder's bus included): the text stays
// readable at any font size and nothing runs past the panel's right edge.
void expect_legible(const ModelMap& m, float max_w) {
  const FigureFont& font = FigureFont::sans();
  EXPECT_LE(m.w, max_w);
  EXPECT_LT(m.bus_x, m.w);
  for (const MapBox& b : m.boxes) {
    EXPECT_LE(font.width(b.label, 100) / 100, b.w) << b.id;
    EXPECT_LE(font.width(b.mark, 100) / 100, b.w) << b.id;
    EXPECT_GE(b.x, 0) << b.id;
    EXPECT_LE(b.x + b.w, m.w) << b.id;
    if (b.kind == MapKind::Head) {
      const MapBox& a = m.boxes.at(b.parent);
      EXPECT_TRUE(a.x <= b.x && b.x + b.w <= a.x + a.w && a.y <= b.y && b.y + b.h <= a.y + a.h) << b.id << " outside " << a.id;
    }
  }
  for (const MapBox& a : m.boxes)
    for (const MapBox& b : m.boxes) {
      if (&a == &b || (a.kind == MapKind::Head) != (b.kind == MapKind::Head)) continue;  // a head is inside its box
      const bool apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
      EXPECT_TRUE(apart) << a.id << " overlaps " << b.id;
    }
}

ModelConfig gpt2_config() {  // GPT-2 124M's shape: only the geometry is computed, no weights
  ModelConfig c;
  c.L = 12, c.H = 12, c.d_e = 768, c.d_attn = c.d_mid = 64, c.d_mlp = 3072, c.l_max = 1024;
  c.tied_unembedding = true;
  c.activation = Activation::GELUTanh;
  return c;
}

TEST(ModelMap, TinyGptHasEveryLayerSubLayerAndHead) {
  const ModelMap m = model_map(test::tiny_gpt_config(16));  // L = 2, H = 2, pre-LN (the paper's GPT)
  const auto n = kinds(m);
  EXPECT_EQ(n.at(MapKind::Embedding), 1);
  EXPECT_EQ(n.at(MapKind::Layer), 2);
  EXPECT_EQ(n.at(MapKind::Norm), 4);
  EXPECT_EQ(n.at(MapKind::Attention), 2);
  EXPECT_EQ(n.at(MapKind::Head), 4);
  EXPECT_EQ(n.at(MapKind::Mlp), 2);
  EXPECT_EQ(n.at(MapKind::FinalNorm), 1);
  EXPECT_EQ(n.at(MapKind::Unembedding), 1);
  EXPECT_TRUE(has_badge(m, "pre-LN"));
  // Pre-LN: each norm sits left of (before) the sub-layer it feeds.
  EXPECT_LT(box(m, "l1.norm1").x, box(m, "l1.attn").x);
  EXPECT_LT(box(m, "l1.attn").x, box(m, "l1.norm2").x);
  EXPECT_LT(box(m, "l1.norm2").x, box(m, "l1.mlp").x);
  // The stream flows down: embedding, layer 1, layer 2, final norm, unembedding.
  EXPECT_LT(box(m, "emb").y, box(m, "l1").y);
  EXPECT_LT(box(m, "l1").y, box(m, "l2").y);
  EXPECT_LT(box(m, "l2").y, box(m, "final_norm").y);
  EXPECT_LT(box(m, "final_norm").y, box(m, "unemb").y);
}

TEST(ModelMap, EdgesCarryTheTensorShapes) {
  const ModelMap m = model_map(test::tiny_gpt_config(16));
  int stream = 0, sub = 0;
  for (const MapEdge& e : m.edges) {
    const char* want = e.from < 0 ? "ℓ_x tokens" : e.to < 0 ? "N_V × ℓ_x" : "d_e × ℓ_x";
    EXPECT_EQ(e.shape, want);
    stream += e.kind == EdgeKind::Stream;
    sub += e.kind == EdgeKind::Sub;
  }
  EXPECT_EQ(stream, 6);  // x → emb → l1 → l2 → final norm → unemb → P
  EXPECT_EQ(sub, 2 * 3);  // 4 sub-layers per layer, 3 arrows between them
}

TEST(ModelMap, Gpt2SizeDrawsTwelveLayersLegibly) {
  const ModelMap m = model_map(gpt2_config());
  const auto n = kinds(m);
  EXPECT_EQ(n.at(MapKind::Layer), 12);
  EXPECT_EQ(n.at(MapKind::Head), 144);
  EXPECT_TRUE(has_badge(m, "tied W_u"));
  EXPECT_TRUE(has_badge(m, "GELU_tanh"));
  EXPECT_EQ(box(m, "unemb").mark, "tied W_u");
  EXPECT_EQ(m.head_rows, 1);  // no width to fit: one row of heads
  expect_legible(m, m.w);
}

// A range of panel widths in units of F (estimates of the Inspector's map at 1280×720 … 1920×1080,
// not measured yet: test_gui_model_map.cpp checks the real panel), and a narrower one. Each is met,
// the 12 heads numbered 1 … 12 row by row.
TEST(ModelMap, Gpt2FitsThePanelsWidthWithItsHeadsNumbered) {
  for (const float max_w : {28.0f, 33.0f, 36.0f, 49.0f}) {
    SCOPED_TRACE(max_w);
    const ModelMap m = model_map(gpt2_config(), max_w);
    expect_legible(m, max_w);
    for (int h = 1; h <= 12; ++h) {
      const MapBox& b = box(m, "l12.attn.h" + std::to_string(h));
      EXPECT_EQ(b.label, std::to_string(h));
      if (h > 1) {  // the next head is right of it in its row, or starts the next row
        const MapBox& p = box(m, "l12.attn.h" + std::to_string(h - 1));
        EXPECT_TRUE((b.y == p.y && b.x > p.x) || b.y > p.y) << h;
      }
    }
  }
  EXPECT_GT(model_map(gpt2_config(), 28).head_rows, 1);  // one row of 12 numbered heads is wider than 28 F
}

// The decoder's band (self- and cross-attention, the MLP, three norms) and the bus are wider than
// the panel at 1280×720: the band wraps onto a second row, the bus stays inside.
TEST(ModelMap, EncoderDecoderWrapsItsDecoderBandsToFitThePanel) {
  ModelConfig c;
  c.arch = "ed";
  c.L_enc = 2, c.L_dec = 2;
  EXPECT_GT(model_map(c).w, 36);  // unfitted, it is wider than the panel
  const ModelMap m = model_map(c, 36);
  expect_legible(m, 36);
  EXPECT_TRUE(m.wrapped);
  EXPECT_GT(box(m, "dec.l1.mlp").y, box(m, "dec.l1.self").y);  // a later row of the same band
  EXPECT_LT(box(m, "dec.l1.mlp").y, box(m, "dec.l2").y);
  EXPECT_GE(box(m, "dec.l1").y + box(m, "dec.l1").h, box(m, "dec.l1.mlp").y + box(m, "dec.l1.mlp").h);  // the layer box spans its rows
  EXPECT_GT(m.bus_x, box(m, "dec.l1.cross").x + box(m, "dec.l1.cross").w);
}

TEST(ModelMap, BertIsPostLnWithItsFinalProjection) {
  ModelConfig c = test::tiny_gpt_config(16);
  c.arch = "bert";
  const ModelMap m = model_map(c);
  EXPECT_TRUE(has_badge(m, "post-LN"));
  EXPECT_LT(box(m, "l1.attn").x, box(m, "l1.norm1").x);  // post-LN: the norm after its sub-layer
  EXPECT_EQ(box(m, "wf").kind, MapKind::FinalProjection);
  EXPECT_LT(box(m, "wf").y, box(m, "final_norm").y);
  for (const MapEdge& e : m.edges) {
    if (e.from == m.find("wf")) {
      EXPECT_EQ(e.shape, "d_f × ℓ_x");
    }
  }
}

TEST(ModelMap, EncoderDecoderHasTwoStacksAndCrossEdgesIntoEveryDecoderLayer) {
  ModelConfig c;
  c.arch = "ed";
  c.L_enc = 2, c.L_dec = 3;
  const ModelMap m = model_map(c);
  const auto n = kinds(m);
  EXPECT_EQ(n.at(MapKind::Layer), 5);
  EXPECT_EQ(n.at(MapKind::Attention), 2 + 3 * 2);  // encoder self; decoder self and cross
  EXPECT_EQ(n.at(MapKind::Norm), 2 * 2 + 3 * 3);
  EXPECT_LT(box(m, "enc.l2").y, box(m, "enc.Z").y);
  EXPECT_LT(box(m, "enc.Z").y, box(m, "dec.l1").y);
  int cross = 0;
  for (const MapEdge& e : m.edges)
    if (e.kind == EdgeKind::Cross) {
      ++cross;
      EXPECT_EQ(e.from, m.find("enc.Z"));
      EXPECT_EQ(m.boxes[e.to].id, "dec.l" + std::to_string(cross) + ".cross");
      EXPECT_EQ(e.shape, "d_e × ℓ_z");
    }
  EXPECT_EQ(cross, 3);
  EXPECT_GT(m.bus_x, box(m, "dec.l1.mlp").x);  // the bus runs right of every band
}

TEST(ModelMap, VariantsAreBadgesAndMarks) {
  ModelConfig c = test::tiny_gpt_config(16);
  c.H = 4, c.H_kv = 2;
  c.position = Position::Rope;
  c.norm = Norm::RmsNorm;
  c.activation = Activation::SwiGLU;
  c.norm_position = NormPosition::Post;
  const ModelMap m = model_map(c);
  for (const char* b : {"post-LN", "RMSNorm", "RoPE", "SwiGLU", "H_kv = 2 < H = 4"}) EXPECT_TRUE(has_badge(m, b)) << b;
  EXPECT_EQ(box(m, "l1.norm1").label, "RMS¹");
  EXPECT_EQ(box(m, "l1.mlp").mark, "SwiGLU");
  EXPECT_EQ(box(m, "l1.attn").mark, "RoPE · H_kv = 2");
  EXPECT_EQ(box(m, "l1.attn.h3").kv_head, 2);  // ⌊(3−1)·2/4⌋ + 1
  EXPECT_EQ(m.find("final_norm"), -1);  // post-LN GPT has no final norm
}

// A session on the tiny GPT (L = 2, H = 2) with prompt "hello".
Session& tiny_session() {
  static Session s;
  static bool ready = false;
  if (!ready) {
    s.set_model(Model::initialised(test::tiny_gpt_config(16), 7), "tiny gpt (seed 7)");
    s.set_prompt("hello");
    s.wait_for_trace();
    ready = true;
  }
  return s;
}

std::string lit_at(Session& s, const ModelMap& m, LineRef line, int l, int h) {
  EXPECT_TRUE(s.jump_to(line, l, h));
  const std::vector<MapPlace> p = map_places(s.trace(), 10);
  const int b = box_at(m, p[s.cursor()]);
  return b < 0 ? "" : m.boxes[b].id;
}

TEST(ModelMap, TheCursorsStepLightsItsBox) {
  Session& s = tiny_session();
  const ModelMap m = model_map(s.model().config);
  EXPECT_EQ(lit_at(s, m, lines::attention::S, 2, 1), "l2.attn.h1");  // inside Algorithm 4 of head 1, layer 2
  EXPECT_EQ(lit_at(s, m, lines::mh_attention::V_tilde, 1, 0), "l1.attn");  // Algorithm 5's W_o line: the whole box
  EXPECT_EQ(lit_at(s, m, lines::d_transformer::mlp, 1, 0), "l1.mlp");
  EXPECT_EQ(lit_at(s, m, lines::layer_norm::v, 2, 0), "l2.norm1");  // the first layer_norm of layer 2 (line 5's calls)
  EXPECT_EQ(lit_at(s, m, lines::d_transformer::final_norm, 0, 0), "final_norm");
  EXPECT_EQ(lit_at(s, m, lines::d_transformer::P, 0, 0), "unemb");
  EXPECT_EQ(lit_at(s, m, lines::token_embedding::e, 0, 0), "emb");
}

// The first step whose call stack runs inside transformer line `line` at layer l and head h
// (h = 0: any), found with Trace::call_stack, independently of map_places' scan.
size_t first_step_of(const Trace& t, LineRef line, int l, int h) {
  for (size_t k = 0; k < t.size(); ++k) {
    if (t.events[k].idx.l != l || (h > 0 && t.events[k].idx.h != h)) continue;
    for (size_t j : t.call_stack(k))
      if (t.events[j].alg == line.alg && t.events[j].line == line.line) return k;
  }
  return SIZE_MAX;
}

TEST(ModelMap, ClickingABoxFindsItsFirstStep) {
  Session& s = tiny_session();
  const ModelMap m = model_map(s.model().config);
  const std::vector<MapPlace> p = map_places(s.trace(), 10);
  ASSERT_EQ(p.size(), s.trace().size());
  const struct {
    const char* id;
    LineRef line;
    int l, h;
  } cases[] = {{"l2.attn.h2", lines::d_transformer::attention, 2, 2}, {"l1.attn", lines::d_transformer::attention, 1, 0},
               {"l1.mlp", lines::d_transformer::mlp, 1, 0}, {"l2.norm2", lines::d_transformer::norm2, 2, 0},
               {"unemb", lines::d_transformer::P, 0, 0}};
  for (const auto& c : cases) {
    const size_t want = first_step_of(s.trace(), c.line, c.l, c.h);
    ASSERT_NE(want, SIZE_MAX) << c.id;
    EXPECT_EQ(first_step_in(m, p, m.find(c.id)), want) << c.id;
  }
  // MHAttention's Enter (no head in force yet) comes before head 1's first step.
  EXPECT_LT(first_step_in(m, p, m.find("l1.attn")), first_step_in(m, p, m.find("l1.attn.h1")));
}

}  // namespace test_model_map
}  // namespace sf
