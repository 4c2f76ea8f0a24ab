// The head view (issue 26, item 2), as BertViz draws it: for one layer of one attention line and
// the heads chosen, the keys' tokens in a column on the left (z: the context for cross-attention,
// x itself for self-attention), the queries' tokens x on the right, joined by one line per pair
// (t_z, t_x) whose opacity is the weight softmax(S/√d_attn)[t_z, t_x] that Algorithm 4 line 6
// bound in the trace. Each head has its own colour. A masked pair has weight exactly 0
// (exp(−∞)) and draws no line. Headless: app/panels/head_view_panel.cpp draws it,
// head_view_figure.hpp exports it as SVG and PNG.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "app/attention_calls.hpp"
#include "app/logic/figure_layout.hpp"

namespace sf {

struct HeadViewLine {
  int head = 0;       // h, 1-based
  int t_z = 0;        // the key's position (left column), 1-based
  int t_x = 0;        // the query's position (right column), 1-based
  double weight = 0;  // softmax(S/√d_attn)[t_z, t_x] > 0, as the trace holds it
};

struct HeadView {
  std::string title;    // "Decoder cross-attention (Algorithm 8 line 16), layer 2"
  int alg = 0, line = 0, layer = 0;
  bool cross = false;   // the keys are z, not x
  std::vector<std::string> keys, queries;  // the token labels of the left and right columns
  std::vector<int> heads;                  // the heads drawn (those with a traced weight matrix)
  std::vector<HeadViewLine> lines;         // every pair with weight > 0, head by head
  std::string missing;  // why nothing is drawn ("" when lines exist or all weights are 0)
};

// The head view of group (alg, line), layer l, the heads `heads` (empty: all H) at generation step
// i, from the traced calls of `t`. `label` names a token id for the columns.
HeadView head_view(const Trace& t, const std::vector<HeadCall>& calls, const AttentionGroup& group, int layer,
                   const std::vector<int>& heads, int H, int step, const std::function<std::string(int)>& label);

// Which token the pointer is on: none, a key (left column) or a query (right column), 1-based.
enum class HeadViewSide { None, Key, Query };
struct HeadViewHover {
  HeadViewSide side = HeadViewSide::None;
  int t = 0;
};
// The lines shown: all of them, or only the hovered token's.
std::vector<HeadViewLine> visible_lines(const HeadView& v, HeadViewHover hover);

// Each head's colour (a qualitative palette, Tableau 10, distinct for up to 10 heads, then repeated).
Rgb8 head_color(int h);

}  // namespace sf
