#include "app/logic/head_view.hpp"

namespace sf {

namespace {

std::vector<std::string> labels_of(const Tokens* t, const std::function<std::string(int)>& label) {
  std::vector<std::string> out;
  if (t)
    for (int id : *t) out.push_back(label(id));
  return out;
}

}  // namespace

HeadView head_view(const Trace& t, const std::vector<HeadCall>& calls, const AttentionGroup& group, int layer,
                   const std::vector<int>& heads, int H, int step, const std::function<std::string(int)>& label) {
  HeadView v;
  v.alg = group.alg, v.line = group.line, v.layer = layer;
  v.cross = group.alg == lines::ed_transformer::cross_attention.alg && group.line == lines::ed_transformer::cross_attention.line;
  v.title = group.title + ", layer " + std::to_string(layer);
  std::vector<int> wanted = heads;
  if (wanted.empty())
    for (int h = 1; h <= H; ++h) wanted.push_back(h);
  for (int h : wanted) {
    const HeadCall* call = find_head_call(calls, group.alg, group.line, layer, h, step);
    if (!call || !call->A) continue;
    if (v.heads.empty()) {  // the columns: every head of one call reads the same x and z
      v.keys = labels_of(t.axis_tokens(call->line6, Axis::TokenZ), label);
      v.queries = labels_of(t.axis_tokens(call->line6, Axis::TokenX), label);
    }
    v.heads.push_back(h);
    const TraceMat& A = call->A->m;  // ℓ_z × ℓ_x: column t_x is query t_x's distribution over the keys
    for (Eigen::Index tx = 0; tx < A.cols(); ++tx)
      for (Eigen::Index tz = 0; tz < A.rows(); ++tz)
        if (A(tz, tx) > 0) v.lines.push_back({h, static_cast<int>(tz) + 1, static_cast<int>(tx) + 1, A(tz, tx)});
  }
  if (v.heads.empty())
    v.missing = "No weights softmax(S/√d_attn) were traced for " + v.title +
                " (FlashAttention and random-feature attention never form them; step into the forward pass first).";
  return v;
}

std::vector<HeadViewLine> visible_lines(const HeadView& v, HeadViewHover hover) {
  if (hover.side == HeadViewSide::None) return v.lines;
  std::vector<HeadViewLine> out;
  for (const HeadViewLine& l : v.lines)
    if ((hover.side == HeadViewSide::Key ? l.t_z : l.t_x) == hover.t) out.push_back(l);
  return out;
}

Rgb8 head_color(int h) {
  static const Rgb8 tab10[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},   {148, 103, 189},
                               {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
  return tab10[(h - 1 + 100) % 10];
}

}  // namespace sf
