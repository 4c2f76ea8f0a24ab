// The model map (issue 26, item 1): the open model drawn as one diagram, as the LLM Visualization
// and Transformer Explainer do. Headless: the boxes and edges are computed here from the
// ModelConfig (its architecture, layers, heads and variants); app/panels/model_map_panel.cpp only
// draws them. Geometry is in units of the font size F (x and y), so that the panel scales it with
// the font; every label is measured with the app's font (figure_font.hpp) and fits its box.
//
// Layout: the residual stream is a vertical spine, from the embedding at the top to the
// unembedding at the bottom. Each layer is one band to the right of the spine, its sub-layers in
// the order they run (norms in pre- or post-LN position, MHAttention with one small numbered box per
// head, the MLP); the layer's own box sits left of the spine. Given the panel's width, the map fits
// it: the heads wrap into rows (GPT-2's 12 into 2 rows of 6, or 3 of 4), and where that is not enough
// (the encoder-decoder's decoder, three sub-layers and three norms) a band's sub-layers wrap too. The encoder-decoder stacks its encoder
// above its decoder, and the encoder's output Z feeds every decoder layer's cross-attention along
// a bus on the right.
//
// The trace is mapped onto the boxes by each step's call stack: the innermost line of the forward
// algorithm (10, 9 or 8) it runs inside, with the layer l and head h in force (map_places).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/model/config.hpp"
#include "core/trace/trace.hpp"

namespace sf {

enum class MapKind {
  Embedding,        // W_e plus positions (Algorithms 1, 2)
  Layer,            // layer l as a whole (the loop line), left of the spine
  Norm,             // layer_norm or RMSNorm inside a layer
  Attention,        // MHAttention (Algorithm 5), self- or cross-
  Head,             // one head h of an Attention box (Algorithm 4)
  Mlp,              // the MLP
  FinalNorm,        // the final norm of a stack
  FinalProjection,  // BERT's W_f, GELU (Algorithm 9 line 10)
  StackOutput,      // the encoder's output Z (encoder-decoder)
  Unembedding,      // W_u and the softmax (Algorithm 7's role: P)
};
const char* to_string(MapKind k);

enum class MapStack { Main, Encoder, Decoder };  // Main: the one stack of GPT and BERT

struct MapBox {
  std::string id;  // stable, for map-click:<id>: "emb", "l3.attn", "l3.attn.h2", "enc.l1.mlp", "dec.l2.cross.h1", "unemb"
  MapKind kind = MapKind::Embedding;
  MapStack stack = MapStack::Main;
  int layer = 0;    // 1-based; 0 outside the layers
  int head = 0;     // Head: 1-based h
  int kv_head = 0;  // Head: the key/value head it reads (H_kv < H), else h
  int parent = -1;  // Head: the index of its Attention box
  std::string label;  // drawn in the box (a head: its number h)
  std::string mark;   // a second line under the label ("RoPE", "SwiGLU", "γ, β"); "" none
  std::string tip;    // what it computes, in the paper's notation, with its algorithm and line
  std::vector<LineRef> lines;  // the forward algorithm's lines whose steps belong to it (any pass)
  float x = 0, y = 0, w = 0, h = 0;  // in units of F
  bool mark_variant = false;  // the mark names a variant (drawn in the variants' colour)
};

enum class EdgeKind { Stream, Sub, Cross };
struct MapEdge {
  int from = -1, to = -1;  // box indices; −1: the input (tokens) or the output (P)
  std::string shape;       // the tensor's shape on it: "d_e × ℓ_x", "N_V × ℓ_x"
  std::string name;        // the tensor: "X", "Z", "P", "x"
  EdgeKind kind = EdgeKind::Stream;
};

struct MapBadge {
  std::string text;  // "pre-LN", "RMSNorm", "tied W_u", "H_kv = 2 < H = 4"
  bool variant = false;  // not the paper's choice for this architecture
};

struct ModelMap {
  std::string title;  // "GPT: decoder-only transformer, L = 12, H = 12"
  std::vector<MapBox> boxes;
  std::vector<MapEdge> edges;
  std::vector<MapBadge> badges;
  float w = 0, h = 0;  // the extent, in units of F
  float spine_x = 0;   // the residual stream's x
  float bus_x = 0;     // encoder-decoder: the x of the bus carrying Z to the cross-attentions (0: none)
  int head_rows = 1;   // the rows an MHAttention box's heads are drawn in
  bool wrapped = false;  // a band's sub-layers wrap onto a second row (a Sub edge then turns down)
  int find(const std::string& id) const;  // −1 when none
};

// The map of a configuration (throws sf::Error for an unknown architecture), no wider than max_w
// (in units of F) where it can be: the first of these that fits, else the narrowest: the heads in
// 1, 2 or 3 rows, then the same with the bands' sub-layers wrapped. max_w ≤ 0: no limit (one row of heads, no wrap).
ModelMap model_map(const ModelConfig& c, float max_w = 0);

// Where a trace step is on the map: the forward algorithm's line it runs inside (its own line when
// it is one), the layer and head in force, and its pass. line.none(): outside the forward algorithm.
struct MapPlace {
  LineRef line;
  int layer = 0, head = 0;
  Pass pass = Pass::Forward;
};
// The place of every event of `t`, for the forward algorithm `forward_alg` (10, 9, 8); one pass.
std::vector<MapPlace> map_places(const Trace& t, int forward_alg);

// Whether box b holds a step at place p (an Attention box holds its heads' steps too).
bool box_holds(const ModelMap& m, int b, const MapPlace& p);
// The innermost box holding p (a Head before its Attention box); −1 when none.
int box_at(const ModelMap& m, const MapPlace& p);
// The first step held by box b; SIZE_MAX when no step of the trace is in it.
size_t first_step_in(const ModelMap& m, const std::vector<MapPlace>& places, int b);

}  // namespace sf
