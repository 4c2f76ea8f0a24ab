#include "app/logic/model_map.hpp"

#include <algorithm>

#include "app/logic/figure_font.hpp"
#include "core/arch/architecture.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

namespace L10 = lines::d_transformer;
namespace L9 = lines::e_transformer;
namespace L8 = lines::ed_transformer;

// Geometry, in units of F. A box's label line is about 1.2 F high; the gaps between bands hold the
// stream's shape label, one text line.
constexpr float kPad = 1.0f;         // a box's width beyond its widest text
constexpr float kBoxGap = 1.4f;      // between the boxes of a band: room for an arrow
constexpr float kBandH = 3.2f;       // a layer's band: the label row, the heads row
constexpr float kStreamH = 2.4f;     // a box on the spine: label and mark
constexpr float kGapH = 1.6f;        // between bands: the stream's shape label
constexpr float kHeadH = 1.2f;       // a head box
constexpr float kHeadGap = 0.2f;
constexpr float kRowGap = 1.2f;      // between the rows of a wrapped band: room for the Sub edge's turn
constexpr float kBusMargin = 2.5f;   // the encoder-decoder's bus, right of every band
constexpr int kMaxHeadRows = 3;      // taller bands than this show fewer layers than wrapping them does

// Width of `s` in units of F, in the app's font (DejaVu Sans). Measured at 100 px, where
// stb_truetype's rounding is under 1% of a glyph.
float text_w(const std::string& s) { return FigureFont::sans().width(s, 100.0f) / 100.0f; }

const char* sup(int i) {
  static const char* d[] = {"⁰", "¹", "²", "³", "⁴", "⁵"};
  return i >= 0 && i <= 5 ? d[i] : "";
}

// One sub-layer of a layer, as the recipe lists it.
struct Sub {
  MapKind kind;
  LineRef line;
  const char* id;  // "attn", "self", "cross", "norm1", "mlp"
  int norm = 0;    // Norm: its γ's superscript
};

// A layer's sub-layers in the order they run, per architecture and norm position.
std::vector<Sub> layer_recipe(int alg, MapStack stack, bool pre) {
  auto order = [pre](std::vector<std::pair<Sub, Sub>> pairs) {  // each (sub-layer, its norm)
    std::vector<Sub> out;
    for (const auto& p : pairs) {
      if (pre) out.push_back(p.second);
      out.push_back(p.first);
      if (!pre) out.push_back(p.second);
    }
    return out;
  };
  const MapKind A = MapKind::Attention, N = MapKind::Norm, M = MapKind::Mlp;
  if (alg == 10)
    return order({{{A, L10::attention, "attn"}, {N, L10::norm1, "norm1", 1}}, {{M, L10::mlp, "mlp"}, {N, L10::norm2, "norm2", 2}}});
  if (alg == 9)
    return order({{{A, L9::attention, "attn"}, {N, L9::norm1, "norm1", 1}}, {{M, L9::mlp, "mlp"}, {N, L9::norm2, "norm2", 2}}});
  if (stack == MapStack::Encoder)
    return order({{{A, L8::enc_attention, "attn"}, {N, L8::enc_norm1, "norm1", 1}},
                  {{M, L8::enc_mlp, "mlp"}, {N, L8::enc_norm2, "norm2", 2}}});
  return order({{{A, L8::self_attention, "self"}, {N, L8::dec_norm3, "norm3", 3}},
                {{A, L8::cross_attention, "cross"}, {N, L8::dec_norm4, "norm4", 4}},
                {{M, L8::dec_mlp, "mlp"}, {N, L8::dec_norm5, "norm5", 5}}});
}

std::string line_text(LineRef r) { return "Algorithm " + std::to_string(r.alg) + " line " + std::to_string(r.line); }

// What marks an attention box: how its scores are positioned and computed (variants).
std::string attention_mark(const ModelConfig& c, bool cross) {
  std::vector<std::string> m;
  if (!cross) {
    if (c.position == Position::Rope) m.push_back("RoPE");
    if (c.position == Position::Alibi) m.push_back("ALiBi");
    if (c.position == Position::Relative) m.push_back("+B rel.");
    if (c.window > 0) m.push_back("window " + std::to_string(c.window));
  }
  if (c.attention == AttentionKind::Flash) m.push_back("4-F");
  if (c.attention == AttentionKind::RandomFeatures) m.push_back("4-R");
  if (c.kv_heads() < c.H) m.push_back("H_kv = " + std::to_string(c.kv_heads()));
  std::string s;
  for (const std::string& x : m) s += (s.empty() ? "" : " · ") + x;
  return s;
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::GELU: return "GELU";
    case Activation::GELUTanh: return "GELU_tanh";
    case Activation::ReLU: return "ReLU";
    case Activation::SwiGLU: return "SwiGLU";
  }
  return "GELU";
}

// How a map is laid out to fit a width: the rows of heads, whether bands wrap, the width they wrap at.
struct Fit {
  int head_rows = 1;
  bool wrap = false;
  float max_w = 0;  // ≤ 0: no limit
};

class Builder {
 public:
  Builder(const ModelConfig& c, const Architecture& a, Fit fit) : c_(c), alg_(a.forward_algorithm()), fit_(fit) {
    left_w_ = text_w("layer 00") + kPad;
    m_.spine_x = left_w_ + 1.0f;
    m_.head_rows = fit.head_rows;
    m_.wrapped = fit.wrap;
    per_row_ = (c.H + fit.head_rows - 1) / fit.head_rows;
    head_w_ = std::max(text_w(std::to_string(c.H)) + 0.5f, 1.2f);
    band_h_ = kBandH + (fit.head_rows - 1) * (kHeadH + kHeadGap);
  }

  ModelMap build(const Architecture& a);

 private:
  int add(MapBox b) {
    b.w = std::max(b.w, std::max(text_w(b.label), text_w(b.mark)) + kPad);
    b.mark_variant = b.kind == MapKind::Attention || b.kind == MapKind::Embedding || b.kind == MapKind::Unembedding ||
                     (b.kind == MapKind::Mlp && c_.act() != architecture(c_).paper_activation());
    m_.w = std::max(m_.w, b.x + b.w);
    m_.boxes.push_back(std::move(b));
    return static_cast<int>(m_.boxes.size()) - 1;
  }
  void edge(int from, int to, EdgeKind k, std::string name, std::string shape) {
    m_.edges.push_back({from, to, std::move(shape), std::move(name), k});
  }
  // A box on the spine, below the last one.
  int stream_box(const std::string& id, MapKind kind, MapStack stack, std::string label, std::string mark,
                 std::string tip, std::vector<LineRef> lines) {
    MapBox b{id, kind, stack, 0, 0, 0, -1, std::move(label), std::move(mark), std::move(tip), std::move(lines)};
    b.x = m_.spine_x - 0.8f;
    b.y = y_;
    b.h = kStreamH;
    y_ += kStreamH + kGapH;
    return add(std::move(b));
  }
  std::string prefix(MapStack s) const { return s == MapStack::Encoder ? "enc." : s == MapStack::Decoder ? "dec." : ""; }
  int embedding(MapStack s, LineRef first, LineRef embed, LineRef last);
  // The layer's band; returns its Layer box. Records the decoder's cross-attention boxes.
  int layer(MapStack s, int l, LineRef loop, LineRef end);
  int attention(const std::string& id, MapStack s, int l, LineRef line, float x, float y);
  std::string attention_label(MapStack s, LineRef line) const {
    return line == L8::cross_attention ? "cross MHAttention" : s == MapStack::Decoder ? "self MHAttention" : "MHAttention";
  }
  // A sub-layer's box width, before it is placed (the band wraps on it).
  float sub_w(const Sub& sub, MapStack s) const;
  std::string norm_name() const { return c_.norm == Norm::RmsNorm ? "RMSNorm" : "layer_norm"; }
  std::string norm_label(int n) const { return (c_.norm == Norm::RmsNorm ? "RMS" : "LN") + std::string(sup(n)); }
  std::string stack_stream(MapStack s) const { return s == MapStack::Encoder ? "Z" : "X"; }
  std::string stack_len(MapStack s) const { return s == MapStack::Encoder ? "ℓ_z" : "ℓ_x"; }
  // The layers of one stack, from `prev` (the box before them); returns the last box.
  int stack(MapStack s, int L, int prev, LineRef loop, LineRef end);
  void badges();

  const ModelConfig& c_;
  int alg_;
  Fit fit_;
  int per_row_;      // heads per row
  float head_w_;     // a head box's width: its number, the widest being H
  float band_h_;     // a band's row: the label row and the heads' rows
  ModelMap m_;
  float y_ = 1.6f;  // the next row; the first holds the input's label
  float left_w_;
  std::vector<int> cross_;
};

int Builder::embedding(MapStack s, LineRef first, LineRef embed, LineRef last) {
  std::string label = "W_e";
  switch (c_.position) {
    case Position::Learned: label += " + W_p"; break;
    case Position::Sinusoidal: label += " + sinusoid"; break;
    default: break;
  }
  std::string mark = c_.position == Position::Rope    ? "RoPE in attention"
                     : c_.position == Position::Alibi ? "ALiBi in attention"
                     : c_.position == Position::Relative ? "relative bias B in attention"
                     : c_.position == Position::None  ? "no positions"
                                                      : "";
  if (c_.embedding_norm) mark += std::string(mark.empty() ? "" : " · ") + "+ layer_norm";
  const std::string seq = s == MapStack::Encoder ? "z" : "x";
  const std::string tip = "e_t = W_e[:, " + seq + "[t]]" + (c_.position == Position::Learned ? " + W_p[:, t]" : "") +
                          " for every token t (Algorithms 1, 2), " + line_text(embed);
  return stream_box(prefix(s) + "emb", MapKind::Embedding, s, label, mark, tip, {first, embed, last});
}

float Builder::sub_w(const Sub& sub, MapStack s) const {
  if (sub.kind == MapKind::Norm) return text_w(norm_label(sub.norm)) + kPad;
  if (sub.kind == MapKind::Mlp) return std::max(text_w("MLP"), text_w(activation_name(c_.act()))) + kPad;
  const float label = std::max(text_w(attention_label(s, sub.line)), text_w(attention_mark(c_, sub.line == L8::cross_attention)));
  return std::max(label, per_row_ * (head_w_ + kHeadGap) - kHeadGap) + kPad;
}

int Builder::attention(const std::string& id, MapStack s, int l, LineRef line, float x, float y) {
  const bool cross = line == L8::cross_attention;
  const std::string what = attention_label(s, line);
  const std::string args = cross ? "(X, Z | W^ed_l)" : s == MapStack::Encoder ? "(Z | W^enc_l)" : s == MapStack::Decoder ? "(X | W^dec_l)" : "(X̃ | W_l)";
  MapBox b{id, MapKind::Attention, s, l, 0, 0, -1, what, attention_mark(c_, cross),
           "X ← X + MHAttention" + args + ", Algorithm 5 with H = " + std::to_string(c_.H) + " heads, " + line_text(line),
           {line}};
  b.x = x, b.y = y, b.h = band_h_;
  b.w = per_row_ * (head_w_ + kHeadGap) - kHeadGap + kPad;
  const int a = add(std::move(b));
  for (int h = 1; h <= c_.H; ++h) {
    const int kv = c_.kv_head_of(h);
    std::string tip = "head " + std::to_string(h) + ": Y^" + std::to_string(h) + " ← Attention(" +
                      (cross ? "X, Z" : s == MapStack::Encoder ? "Z, Z" : "X, X") + " | W^" + std::to_string(h) +
                      "_qkv), Algorithm 4; Y^h ∈ ℝ^{d_mid×" + stack_len(s) + "}";
    if (c_.kv_heads() < c_.H) tip += "; reads key/value head " + std::to_string(kv) + " of H_kv = " + std::to_string(c_.kv_heads());
    MapBox hb{id + ".h" + std::to_string(h), MapKind::Head, s, l, h, kv, a, std::to_string(h), "", tip, {line}};
    const int row = (h - 1) / per_row_, col = (h - 1) % per_row_;  // row by row, as the heads are numbered
    hb.x = x + kPad / 2 + col * (head_w_ + kHeadGap);
    hb.y = y + kBandH - kHeadH - 0.3f + row * (kHeadH + kHeadGap);
    hb.w = head_w_, hb.h = kHeadH;
    m_.boxes.push_back(std::move(hb));  // not add(): its width is the slot's, not its label's + kPad
  }
  if (cross) cross_.push_back(a);
  return a;
}

int Builder::layer(MapStack s, int l, LineRef loop, LineRef end) {
  const std::string p = prefix(s) + "l" + std::to_string(l);
  MapBox lb{p, MapKind::Layer, s, l, 0, 0, -1, "layer " + std::to_string(l), "",
            "layer l = " + std::to_string(l) + (s == MapStack::Encoder ? " of the encoder" : s == MapStack::Decoder ? " of the decoder" : "") +
                ": " + line_text(loop) + " to " + line_text(end),
            {loop, end}};
  lb.x = 0.2f, lb.y = y_, lb.w = left_w_ - 0.4f;
  const int layer_box = add(std::move(lb));
  const float x0 = m_.spine_x + 1.5f;
  // Where a wrapped band breaks: the panel's width, less the encoder-decoder's bus.
  const float limit = fit_.max_w - (alg_ == 8 ? kBusMargin : 0.0f);
  float x = x0, y = y_;
  int prev = -1;
  const std::string shape = "d_e × " + stack_len(s);
  for (const Sub& sub : layer_recipe(alg_, s, c_.norm_pos() == NormPosition::Pre)) {
    if (fit_.wrap && prev >= 0 && x + sub_w(sub, s) > limit) x = x0, y += band_h_ + kRowGap;
    int b;
    if (sub.kind == MapKind::Attention) {
      b = attention(p + "." + sub.id, s, l, sub.line, x, y);
    } else {
      MapBox sb{p + "." + sub.id, sub.kind, s, l, 0, 0, -1, "", "", "", {sub.line}};
      if (sub.kind == MapKind::Norm) {
        sb.label = norm_label(sub.norm);
        const std::string g = std::string("γ") + sup(sub.norm) + "_l";
        sb.tip = (c_.norm == Norm::RmsNorm ? "RMSNorm(" + stack_stream(s) + "[:, t] | " + g + ") (variant)"
                                           : "layer_norm(" + stack_stream(s) + "[:, t] | " + g + ", β" + sup(sub.norm) + "_l)") +
                 " for every t (Algorithm 6), " + line_text(sub.line);
      } else {
        sb.label = "MLP";
        sb.mark = activation_name(c_.act());
        sb.tip = stack_stream(s) + " ← " + stack_stream(s) + " + W_mlp2 " + activation_name(c_.act()) +
                 "(W_mlp1 X̃ + b_mlp1 1ᵀ) + b_mlp2 1ᵀ; hidden d_mlp × " + stack_len(s) + ", " + line_text(sub.line);
      }
      sb.x = x, sb.y = y, sb.h = band_h_;
      b = add(std::move(sb));
    }
    if (prev >= 0) edge(prev, b, EdgeKind::Sub, stack_stream(s), shape);
    prev = b;
    x = m_.boxes[b].x + m_.boxes[b].w + kBoxGap;
  }
  m_.boxes[layer_box].h = y + band_h_ - y_;  // every row of the band
  y_ = y + band_h_ + kGapH;
  return layer_box;
}

int Builder::stack(MapStack s, int L, int prev, LineRef loop, LineRef end) {
  const std::string shape = "d_e × " + stack_len(s);
  for (int l = 1; l <= L; ++l) {
    const int b = layer(s, l, loop, end);
    edge(prev, b, EdgeKind::Stream, stack_stream(s), shape);
    prev = b;
  }
  return prev;
}

void Builder::badges() {
  const bool paper_pre = architecture(c_).paper_norm_position() == NormPosition::Pre;
  const bool pre = c_.norm_pos() == NormPosition::Pre;
  auto badge = [this](std::string t, bool variant) { m_.badges.push_back({std::move(t), variant}); };
  badge(pre ? "pre-LN" : "post-LN", pre != paper_pre);
  if (c_.norm == Norm::RmsNorm) badge("RMSNorm", true);
  if (c_.position != Position::Learned) {
    static const char* names[] = {"W_p", "sinusoid", "RoPE", "ALiBi", "no positions", "relative"};
    badge(names[static_cast<int>(c_.position)], true);
  }
  if (c_.act() == Activation::SwiGLU || c_.act() != architecture(c_).paper_activation())
    badge(activation_name(c_.act()), true);
  if (c_.tied_unembedding) badge("tied W_u", true);
  if (c_.kv_heads() < c_.H) badge("H_kv = " + std::to_string(c_.kv_heads()) + " < H = " + std::to_string(c_.H), true);
  if (c_.window > 0) badge("window w = " + std::to_string(c_.window), true);
  if (c_.attention == AttentionKind::Flash) badge("flash attention (4-F)", true);
  if (c_.attention == AttentionKind::RandomFeatures) badge("random-feature attention (4-R)", true);
  if (c_.mask == MaskKind::Prefix && alg_ == 10) badge("prefix-LM mask", true);
}

ModelMap Builder::build(const Architecture& a) {
  m_.title = a.title();
  const bool pre = c_.norm_pos() == NormPosition::Pre;
  const std::string x_shape = "d_e × ℓ_x";
  int last;
  if (alg_ == 10 || alg_ == 9) {
    m_.title += ", L = " + std::to_string(c_.L) + ", H = " + std::to_string(c_.H);
    const LineRef l1 = alg_ == 10 ? L10::l : L9::l, embed = alg_ == 10 ? L10::embed : L9::embed,
                  X = alg_ == 10 ? L10::X : L9::X;
    const int emb = embedding(MapStack::Main, l1, embed, X);
    edge(-1, emb, EdgeKind::Stream, "x", "ℓ_x tokens");
    last = stack(MapStack::Main, c_.L, emb, alg_ == 10 ? L10::loop : L9::loop, alg_ == 10 ? L10::end : L9::end);
    if (alg_ == 9) {
      const int f = stream_box("wf", MapKind::FinalProjection, MapStack::Main, "W_f, GELU", pre ? "after the final norm" : "",
                               "X ← GELU(W_f X + b_f 1ᵀ), X ∈ ℝ^{d_f×ℓ_x}, " + line_text(L9::final_gelu), {L9::final_gelu});
      edge(last, f, EdgeKind::Stream, "X", x_shape);
      const int n = stream_box("final_norm", MapKind::FinalNorm, MapStack::Main, norm_name(),
                               "γ, β", "layer_norm(X[:, t] | γ, β) for every t, " + line_text(L9::final_norm), {L9::final_norm});
      edge(f, n, EdgeKind::Stream, "X", "d_f × ℓ_x");
      last = n;
    } else if (pre) {
      const int n = stream_box("final_norm", MapKind::FinalNorm, MapStack::Main, norm_name(),
                               "γ, β", "X[:, t] ← layer_norm(X[:, t] | γ, β) for every t, " + line_text(L10::final_norm),
                               {L10::final_norm});
      edge(last, n, EdgeKind::Stream, "X", x_shape);
      last = n;
    }
  } else {
    m_.title += ", L_enc = " + std::to_string(c_.L_enc) + ", L_dec = " + std::to_string(c_.L_dec) + ", H = " + std::to_string(c_.H);
    const int ez = embedding(MapStack::Encoder, L8::l_z, L8::enc_embed, L8::Z);
    edge(-1, ez, EdgeKind::Stream, "z", "ℓ_z tokens");
    int enc = stack(MapStack::Encoder, c_.L_enc, ez, L8::enc_loop, L8::enc_end);
    if (pre) {
      const int n = stream_box("enc.final_norm", MapKind::FinalNorm, MapStack::Encoder, norm_name(),
                               "γ_enc", "Z ← norm(Z | γ_enc, β_enc) (pre-LN), " + line_text(L8::enc_end), {L8::enc_end});
      edge(enc, n, EdgeKind::Stream, "Z", "d_e × ℓ_z");
      enc = n;
    }
    const int Z = stream_box("enc.Z", MapKind::StackOutput, MapStack::Encoder, "Z", "encoder output",
                             "Z ∈ ℝ^{d_e×ℓ_z}: the encoder's output, read by every decoder layer's cross-attention", {});
    edge(enc, Z, EdgeKind::Stream, "Z", "d_e × ℓ_z");
    const int ex = embedding(MapStack::Decoder, L8::l_x, L8::dec_embed, L8::X);
    edge(-1, ex, EdgeKind::Stream, "x", "ℓ_x tokens");
    last = stack(MapStack::Decoder, c_.L_dec, ex, L8::dec_loop, L8::dec_end);
    if (pre) {
      const int n = stream_box("dec.final_norm", MapKind::FinalNorm, MapStack::Decoder, norm_name(),
                               "γ_dec", "X ← norm(X | γ_dec, β_dec) (pre-LN), " + line_text(L8::dec_end), {L8::dec_end});
      edge(last, n, EdgeKind::Stream, "X", x_shape);
      last = n;
    }
    const float bands_w = m_.w;
    m_.bus_x = bands_w + 1.5f;  // 1 F of room right of it
    for (int b : cross_) edge(Z, b, EdgeKind::Cross, "Z", "d_e × ℓ_z");
    m_.w = bands_w + kBusMargin;
  }
  const LineRef P = alg_ == 10 ? L10::P : alg_ == 9 ? L9::P : L8::P;
  const std::string wu = c_.tied_unembedding ? "W_u = W_eᵀ" : "W_u";
  const int u = stream_box("unemb", MapKind::Unembedding, MapStack::Main, "softmax(" + wu + " X)", c_.tied_unembedding ? "tied W_u" : "",
                           "P ← softmax(W_u X" + std::string(c_.unembedding_bias ? " + b_u 1ᵀ" : "") + "), P ∈ (0,1)^{N_V×ℓ_x}, " +
                               line_text(P),
                           {P});
  edge(last, u, EdgeKind::Stream, "X", alg_ == 9 ? "d_f × ℓ_x" : x_shape);
  edge(u, -1, EdgeKind::Stream, "P", "N_V × ℓ_x");
  m_.h = y_;
  badges();
  return std::move(m_);
}

}  // namespace

const char* to_string(MapKind k) {
  switch (k) {
    case MapKind::Embedding: return "embedding";
    case MapKind::Layer: return "layer";
    case MapKind::Norm: return "norm";
    case MapKind::Attention: return "attention";
    case MapKind::Head: return "head";
    case MapKind::Mlp: return "mlp";
    case MapKind::FinalNorm: return "final_norm";
    case MapKind::FinalProjection: return "final_projection";
    case MapKind::StackOutput: return "stack_output";
    case MapKind::Unembedding: return "unembedding";
  }
  return "";
}

int ModelMap::find(const std::string& id) const {
  for (size_t i = 0; i < boxes.size(); ++i)
    if (boxes[i].id == id) return static_cast<int>(i);
  return -1;
}

ModelMap model_map(const ModelConfig& c, float max_w) {
  const Architecture& a = architecture(c);
  const int alg = a.forward_algorithm();
  if (alg != 8 && alg != 9 && alg != 10)
    throw Error("the model map draws Algorithms 8, 9 and 10; this model runs Algorithm " + std::to_string(alg));
  ModelMap best = Builder(c, a, {1, false, max_w}).build(a);  // one row of heads, no wrap: the most legible
  auto per_row = [&c](int rows) { return (c.H + rows - 1) / rows; };
  for (const bool wrap : {false, true})
    for (int rows = wrap ? 1 : 2; rows <= std::min(c.H, kMaxHeadRows) && max_w > 0 && best.w > max_w; ++rows) {
      if (rows > 1 && per_row(rows) == per_row(rows - 1)) continue;  // no narrower
      ModelMap m = Builder(c, a, {rows, wrap, max_w}).build(a);
      if (m.w < best.w) best = std::move(m);
    }
  return best;
}

std::vector<MapPlace> map_places(const Trace& t, int forward_alg) {
  std::vector<MapPlace> out(t.size());
  // Scanned from the end: the caller of an event at depth d is the next event at depth d − 1, so
  // later[j] (the nearest later event at depth j, cleared when a shallower one is passed) is the
  // event's call stack. O(events × depth) where Trace::call_stack per event would be quadratic.
  std::vector<size_t> later;
  for (size_t k = t.size(); k-- > 0;) {
    const Event& e = t.events[k];
    const int d = std::max(0, e.depth);
    MapPlace& p = out[k];
    p.layer = e.idx.l, p.head = e.idx.h, p.pass = e.pass;
    if (e.alg == forward_alg) p.line = e.ref();
    for (int j = d - 1; p.line.none() && j >= 0; --j)
      if (j < static_cast<int>(later.size()) && later[j] != SIZE_MAX && t.events[later[j]].alg == forward_alg)
        p.line = t.events[later[j]].ref();
    later.resize(d + 1, SIZE_MAX);
    later[d] = k;
  }
  return out;
}

bool box_holds(const ModelMap& m, int b, const MapPlace& p) {
  if (b < 0 || b >= static_cast<int>(m.boxes.size()) || p.line.none()) return false;
  const MapBox& box = m.boxes[b];
  const bool line = std::any_of(box.lines.begin(), box.lines.end(),
                                [&](LineRef r) { return r.alg == p.line.alg && r.line == p.line.line; });
  return line && box.layer == p.layer && (box.kind != MapKind::Head || box.head == p.head);
}

int box_at(const ModelMap& m, const MapPlace& p) {
  int found = -1;
  for (int b = 0; b < static_cast<int>(m.boxes.size()); ++b)
    if (box_holds(m, b, p) && (found < 0 || m.boxes[b].kind == MapKind::Head)) found = b;
  return found;
}

size_t first_step_in(const ModelMap& m, const std::vector<MapPlace>& places, int b) {
  for (size_t k = 0; k < places.size(); ++k)
    if (box_holds(m, b, places[k])) return k;
  return SIZE_MAX;
}

}  // namespace sf
