// The three notations for Stepformer's backward listings (not in the paper; see
// core/pseudocode/notations.hpp). Neither seed writes a backward pass: Carpenter leaves the gradient
// to automatic differentiation, and Dinan–Yaida–Zhang's tutorial stops at the forward pass. So
// Carpenter has no counterpart for any adjoint line, and the DYZ column writes each adjoint in the
// tutorial's own indices (α sample, t query token, t′ key token, i, j features, c head feature,
// C = n/H; ℒ the loss), labelled as Stepformer's, or says why there is none.
#include "core/pseudocode/backward_listings.hpp"
#include "core/pseudocode/notations.hpp"
#include "core/trace/vocabulary.hpp"

namespace sf {

namespace {

NotationText text(std::string s) { return {std::move(s), ""}; }
NotationText none(std::string why) { return {"", std::move(why)}; }

const std::string kCarpenter =
    "Carpenter writes no backward pass: \"automatic differentiation\" (PyTorch, JAX) computes the gradient of the log density, "
    "which he calls back-propagation";
const std::string kDyzNoTraining = "the tutorial stops at the model's head: no loss, no training loop";

// ---- DYZ index forms shared by several lines ----
const std::string kNorm = "∂ℒ/∂z_{α;t;j} = (1/√(σ²_{α;t} + ε)) [γ_j ∂ℒ/∂s_{α;t;j} − (1/n) Σ_i γ_i ∂ℒ/∂s_{α;t;i} − ẑ_{α;t;j} (1/n) Σ_i γ_i ∂ℒ/∂s_{α;t;i} ẑ_{α;t;i}]";
const std::string kNormEvery = kNorm + "   (Algorithm 6's adjoint, every t)";
const std::string kStackNorm = kNorm + "   (pre-LN variant: the stack's final norm, every t)";
const std::string kHead =
    "∂ℒ/∂z^{(L)}_{α;t;i} = p_{α;t;i} − δ_{i y_{α;t}} (softmax and loss together: y the target),   ∂ℒ/∂W^{WU}_{ij} = Σ_{α,t} "
    "∂ℒ/∂z^{(L)}_{α;t;i} s_{α;t;j},   ∂ℒ/∂s_{α;t;j} = Σ_i W^{WU}_{ij} ∂ℒ/∂z^{(L)}_{α;t;i}";
const std::string kLayers = "ℓ = L, …, 1: ∂ℒ/∂z^{(ℓ)} from ∂ℒ/∂z^{(ℓ+1)}";
const std::string kToEmbeddings = "∂ℒ/∂z^{(1)}_{α;t;i}, t = 1, …, T";
const std::string kEmbeddings =
    "∂ℒ/∂W^{WE}_{ij} = Σ_{α,t} ∂ℒ/∂z^{(1)}_{α;t;i} x_{α;t;j} (x one-hot: only the tokens used),   ∂ℒ/∂b^{PE}_{t;i} = Σ_α ∂ℒ/∂z^{(1)}_{α;t;i}";
const std::string kNoCross = "the tutorial's attention is self-attention only: no cross-attention, so no gradient into Z";

// ---- The lines of a residual sub-layer, which depend on the norm order ----
// Pre-LN (the paper's Algorithm 10): the sub-layer reads the norm's output s = layer_norm(z) and adds
// to the residual z; its adjoint gives ∂ℒ/∂s, and the norm's adjoint adds its share to ∂ℒ/∂z.
// Post-LN (the paper's Algorithms 8 and 9): the sub-layer reads z itself and the norm follows the
// sum, so the norm's adjoint runs first and replaces ∂ℒ/∂z, and the sub-layer's adds to it.

std::string norm_adjoint(bool pre) {
  return pre ? "∂ℒ/∂z^{(ℓ)}_{α;t;j} += " + kNorm.substr(kNorm.find('=') + 2) + "   (pre-LN: the norm's share, added to the residual's)"
             : kNorm + "   (post-LN: the norm follows the residual sum, so its adjoint replaces ∂ℒ/∂z; Algorithm 6's adjoint, every t)";
}

// The MLP's adjoint; `relu`: Algorithm 8's σ = ReLU.
std::string mlp_adjoint(bool pre, bool relu) {
  const std::string in = pre ? "s" : "z";  // what the MLP reads: the norm's output, or the stream itself
  const std::string to_input = pre ? "∂ℒ/∂s_{α;t;i} = Σ_j W_{ji} ∂ℒ/∂w_{α;t;j}   (pre-LN: s the norm's output; ∂ℒ/∂r = ∂ℒ/∂z^{(ℓ+1)}: the residual passes it on too)"
                                   : "∂ℒ/∂z_{α;t;i} = ∂ℒ/∂r_{α;t;i} + Σ_j W_{ji} ∂ℒ/∂w_{α;t;j}   (post-LN: r = z + MLP(z), the MLP's share added to the residual's)";
  return "∂ℒ/∂X_{ij} = Σ_{α,t} ∂ℒ/∂r_{α;t;i} σ(w_{α;t;j}),   ∂ℒ/∂w_{α;t;j} = σ′(w_{α;t;j}) Σ_i X_{ij} ∂ℒ/∂r_{α;t;i},   ∂ℒ/∂W_{ji} = Σ_{α,t} "
         "∂ℒ/∂w_{α;t;j} " + in + "_{α;t;i},   " + to_input + (relu ? "   (σ = ReLU)" : "");
}

// The self-attention's adjoint; `bidirectional`: an encoder's (no mask).
std::string attention_adjoint(bool pre, bool bidirectional) {
  const std::string heads = "Σ_{h=1}^{H} (head h's adjoint of R^{MHSA})";
  return (pre ? "∂ℒ/∂s^{(ℓ)}_{α;t;i} = " + heads + ",   ∂ℒ/∂z^{(ℓ)}_{α;t;i} = ∂ℒ/∂z^{(ℓ+1)}_{α;t;i}   (pre-LN: the heads read the norm's output s; the residual passes ∂ℒ/∂z on)"
              : "∂ℒ/∂z^{(ℓ)}_{α;t;i} = ∂ℒ/∂z^{(ℓ+1)}_{α;t;i} + " + heads + "   (post-LN: the heads read z itself; the residual and the attention add)") +
         (bidirectional ? "   (Encoder: no mask)" : "");
}

enum class Sub { Attention, EncoderAttention, Cross, Mlp, ReluMlp };
struct SubLayerLines {
  int alg, first;  // the sub-layer and its norm are lines first and first + 1, in the order of the norm position
  Sub kind;
};
constexpr SubLayerLines kSubLayers[] = {{10, 5, Sub::Attention},        {10, 7, Sub::Mlp},   {9, 5, Sub::EncoderAttention},
                                        {9, 7, Sub::Mlp},               {8, 5, Sub::EncoderAttention}, {8, 7, Sub::ReluMlp},
                                        {8, 14, Sub::Attention},        {8, 16, Sub::Cross}, {8, 18, Sub::ReluMlp}};

NotationText sublayer_text(Sub kind, bool pre) {
  switch (kind) {
    case Sub::Attention: return text(attention_adjoint(pre, false));
    case Sub::EncoderAttention: return text(attention_adjoint(pre, true));
    case Sub::Cross: return none(kNoCross);
    case Sub::Mlp: return text(mlp_adjoint(pre, false));
    case Sub::ReluMlp: return text(mlp_adjoint(pre, true));
  }
  return none(kNoCross);
}

// A stack's final norm (Algorithm 10's line 10, 9's line 10, 8's lines 9 and 20): the paper's GPT
// has one, the pre-LN variants of BERT and the encoder-decoder add one; post-LN ends with the last
// layer's norm.
std::optional<NotationText> stack_norm_text(int alg, int line, bool pre) {
  if (alg == 10 && line == 10) return pre ? text(kNormEvery) : none("post-LN has no final norm: the last layer's norm ends the stack, so the line is skipped");
  if (alg == 9 && line == 10)
    return pre ? text(kStackNorm + "   (then W_f: the tutorial's head has no final projection)") : none("the tutorial's head has no final projection W_f");
  if (alg == 8 && line == 20) return pre ? text(kStackNorm) : none("post-LN has no final norm of the decoder: the last layer's norm ends the stack");
  if (alg == 8 && line == 9)
    return pre ? text(kStackNorm + "   (the encoder's; its output Z is what the cross-attention reads, which the tutorial has not)")
               : none("the tutorial's attention is self-attention only: no encoder output for a decoder to read");
  return std::nullopt;
}

// Head h's projection adjoint (Algorithm 4 lines 1–3): the tutorial's weight `W` (Q^h, K^h, V^h)
// and its output `q` (q^h, k^h, v^h) on token index `t`.
NotationText projection(const std::string& W, const std::string& q, const std::string& t) {
  return text("∂ℒ/∂" + W + "_{ci} = Σ_{α," + t + "} ∂ℒ/∂" + q + "_{α;" + t + ";c} s_{α;" + t + ";i},   ∂ℒ/∂s_{α;" + t + ";i} += Σ_c " + W +
              "_{ci} ∂ℒ/∂" + q + "_{α;" + t + ";c}   (no bias in the tutorial)");
}

// One backward listing's rows: every line has Carpenter's "none"; `dyz` gives each line's DYZ text.
void add(std::vector<NotationEntry>& out, int alg, const std::vector<std::pair<int, NotationText>>& dyz) {
  for (const auto& [line, d] : dyz) out.push_back({alg, line, none(kCarpenter), d, Pass::Backward});
}

std::vector<NotationEntry> build() {
  std::vector<NotationEntry> t;
  add(t, 1, {{1, text("∂ℒ/∂W^{WE}_{ij} = Σ_{α,t} ∂ℒ/∂z̃_{α;t;i} x_{α;t;j}   (x one-hot: only the columns of the tokens used)")}});
  add(t, 2, {{1, text("∂ℒ/∂b^{PE}_{t;i} = Σ_α ∂ℒ/∂z^{(1)}_{α;t;i}")}});
  add(t, 4,
      {{6, text("∂ℒ/∂v^h_{α;t′;c} = Σ_t Ω^h_{α;tt′} ∂ℒ/∂o^h_{α;t;c},   ∂ℒ/∂Ω^h_{α;tt′} = Σ_c v^h_{α;t′;c} ∂ℒ/∂o^h_{α;t;c},   ∂ℒ/∂Ω̃^h_{α;tt′} = "
                "Ω^h_{α;tt′} (∂ℒ/∂Ω^h_{α;tt′} − Σ_{t″} Ω^h_{α;tt″} ∂ℒ/∂Ω^h_{α;tt″})   (o^h_{α;t;c} ≡ Σ_{t′} Ω^h_{α;tt′} v^h_{α;t′;c})")},
       {5, text("Decoder: ∂ℒ/∂Ω̃^h_{α;tt′} = 0 for t′ > t   (Ω^h_{α;tt′} = 0 there)")},
       {4, text("∂ℒ/∂q^h_{α;t;c} = (1/√C) Σ_{t′} ∂ℒ/∂Ω̃^h_{α;tt′} k^h_{α;t′;c},   ∂ℒ/∂k^h_{α;t′;c} = (1/√C) Σ_t ∂ℒ/∂Ω̃^h_{α;tt′} q^h_{α;t;c}   "
                "(Ω̃ is scaled: the paper's ∇S is ∂ℒ/∂Ω̃ / √C, transposed)")},
       {3, projection("V^h", "v^h", "t′")},
       {2, projection("K^h", "k^h", "t′")},
       {1, projection("Q^h", "q^h", "t")}});
  // Algorithm 4-R (a variant): the tutorial writes exact softmax attention, never an estimate
  const std::string dyz_rf = "no counterpart: the tutorial's attention is the exact softmax Ω^h; it has no random features";
  add(t, algs::random_feature_attention,
      {{12, none(dyz_rf)}, {11, none(dyz_rf)}, {10, none(dyz_rf)}, {7, none(dyz_rf)}, {6, none(dyz_rf)}, {5, none(dyz_rf)},
       {3, projection("V^h", "v^h", "t′")}, {2, projection("K^h", "k^h", "t′")}, {1, projection("Q^h", "q^h", "t")}});
  add(t, 5,
      {{4, text("∂ℒ/∂U^h_{ic} = Σ_{α,t} ∂ℒ/∂r_{α;t;i} o^h_{α;t;c},   ∂ℒ/∂o^h_{α;t;c} = Σ_i U^h_{ic} ∂ℒ/∂r_{α;t;i}   (no bias b_o)")},
       {3, none("the sum over h in r_{α;t;i} concatenates and projects in one step: line 4's ∂ℒ/∂o^h is already per head")},
       {1, text("h = H, …, 1")},
       {2, text("∂ℒ/∂s_{α;t;i} = Σ_{h=1}^{H} (head h's share: Algorithm 4's adjoint)")}});
  add(t, 6,
      {{3, text("∂ℒ/∂γ_i = Σ_{α,t} ∂ℒ/∂s_{α;t;i} ẑ_{α;t;i},   ∂ℒ/∂β_i = Σ_{α,t} ∂ℒ/∂s_{α;t;i}   (ẑ_{α;t;i} = (z_{α;t;i} − μ_{α;t}) / √(σ²_{α;t} + ε))")},
       {2, text("∂ℒ/∂σ²_{α;t} = −½ (σ²_{α;t} + ε)^{−3/2} Σ_i γ_i ∂ℒ/∂s_{α;t;i} (z_{α;t;i} − μ_{α;t})")},
       {1, text(kNorm + "   (all three lines' paths)")}});
  add(t, 7, {{1, text(kHead)}});
  // Algorithms 10 (pre-LN), 9 and 8 (post-LN) in the paper's norm order; norm_ordered_dyz has both.
  const auto paper = [](int alg, int line) { return *norm_ordered_dyz(alg, line, alg == 10); };
  add(t, 10,
      {{11, text(kHead)}, {10, paper(10, 10)}, {4, text(kLayers)}, {8, paper(10, 8)}, {7, paper(10, 7)}, {6, paper(10, 6)},
       {5, paper(10, 5)}, {3, text(kToEmbeddings)}, {2, text(kEmbeddings)}});
  add(t, 9,
      {{12, text(kHead)}, {11, text(kNormEvery)}, {10, paper(9, 10)}, {4, text(kLayers)}, {8, paper(9, 8)}, {7, paper(9, 7)},
       {6, paper(9, 6)}, {5, paper(9, 5)}, {3, text(kToEmbeddings)}, {2, text(kEmbeddings)}});
  add(t, 8,
      {{21, text(kHead)}, {20, paper(8, 20)}, {13, text(kLayers)}, {19, paper(8, 19)}, {18, paper(8, 18)}, {17, paper(8, 17)},
       {16, paper(8, 16)}, {15, paper(8, 15)}, {14, paper(8, 14)}, {12, text(kToEmbeddings)}, {11, text(kEmbeddings)},
       {9, paper(8, 9)}, {4, text(kLayers)}, {8, paper(8, 8)}, {7, paper(8, 7)}, {6, paper(8, 6)}, {5, paper(8, 5)},
       {3, text(kToEmbeddings)}, {2, text(kEmbeddings)}});
  for (const auto& [alg, lines] : std::vector<std::pair<int, std::vector<int>>>{{11, {5, 4}}, {12, {9, 8}}, {13, {5, 4}}})
    for (int line : lines) t.push_back({alg, line, none(kCarpenter), none(kDyzNoTraining), Pass::Backward});
  return t;
}

}  // namespace

std::optional<NotationText> norm_ordered_dyz(int alg, int line, bool pre_ln) {
  for (const SubLayerLines& s : kSubLayers) {
    if (s.alg != alg || (line != s.first && line != s.first + 1)) continue;
    if ((line == s.first) == pre_ln) return text(norm_adjoint(pre_ln));  // pre-LN writes the norm first
    return sublayer_text(s.kind, pre_ln);
  }
  return stack_norm_text(alg, line, pre_ln);
}

const std::vector<NotationEntry>& backward_notation_entries() {
  static const std::vector<NotationEntry> table = build();
  return table;
}

}  // namespace sf
