// Stepformer's backward listings (see core/pseudocode/backward_listings.hpp): not in the paper.
// Each statement is checked against the batched backward that training uses:
//   Algorithm 4 ↔ attention_backward (core/gradients/grad_attention.cpp), Algorithm 5 ↔
//   mh_attention_backward, Algorithm 6 ↔ layer_norm_backward (grad_layer_norm.cpp), Algorithm 7 and
//   the loss lines ↔ loss_backward (grad_loss.cpp), the MLP lines ↔ mlp_backward (grad_mlp.cpp), the
//   residual sub-layers ↔ sublayer_backward (grad_sublayer.hpp), line 2 ↔ embedding_backward and
//   embedding_extras_backward (grad_embedding.cpp).
#include "core/pseudocode/backward_listings.hpp"

#include <functional>
#include <map>
#include <utility>

#include "core/pseudocode/variant_labels.hpp"
#include "core/trace/vocabulary.hpp"

namespace sf {

namespace {

using namespace pseudo;

const std::string kLabelComment = std::string("/* ") + kBackwardListingLabel + ". */";

// A numbered line of a backward listing: the adjoint of forward line `n`.
PseudoLine adj(int n, std::string text, int indent = 0, std::vector<std::string> steps = {}, const Labels& why = {}) {
  PseudoLine l{n, std::move(text), indent, joined(why)};
  l.steps = std::move(steps);
  return l;
}
PseudoLine comment(std::string text) { return {0, std::move(text), 0}; }

// The shape of a listing: its header starts with the label, then says what it backpropagates.
PseudoAlgorithm listing(int alg, std::string name, std::string signature, std::vector<std::string> header) {
  header.insert(header.begin(), kLabelComment);
  return {alg, std::move(name), std::move(signature), std::move(header), {}};
}

// ---- Algorithms 1, 2: the embeddings ----

PseudoAlgorithm token_embedding(const Variants& v) {
  PseudoAlgorithm a = listing(1, "Token embedding adjoint", "∇W_e ← Token embedding adjoint(∇e | v)",
                              {"/* The token's vector was read from column v of W_e: its gradient goes back there. */",
                               "Input: ∇e ∈ ℝ^{d_e}, ∂loss/∂e; v ∈ V ≅ [N_V], the token ID.",
                               "Output: ∇W_e ∈ ℝ^{d_e×N_V}, added to in column v only."});
  a.lines = {adj(1, "∇W_e[:, v] ← ∇W_e[:, v] + ∇e        [[a token used twice collects both gradients]]")};
  add_header(a, "∇W_e also collects the unembedding's gradient: W_u = W_eᵀ (Algorithm 7's adjoint)", v.tied);
  return a;
}

PseudoAlgorithm positional_embedding(const Variants& v) {
  PseudoAlgorithm a = listing(2, "Positional embedding adjoint", "∇W_p ← Positional embedding adjoint(∇e_p | ℓ)",
                              {"/* The position's vector was read from column ℓ of W_p: its gradient goes back there. */",
                               "Input: ∇e_p ∈ ℝ^{d_e}, ∂loss/∂e_p; ℓ ∈ [ℓ_max], the position.",
                               "Output: ∇W_p ∈ ℝ^{d_e×ℓ_max}, added to in column ℓ only."});
  a.lines = {adj(1, "∇W_p[:, ℓ] ← ∇W_p[:, ℓ] + ∇e_p")};
  if (v.no_w_p) rewrite(a, 1, "(not called: no W_p under this variant)", {v.position});
  else rewrite(a, 1, "(no gradient: W_p is computed from sin and cos, not learned)", labels({v.position}));
  return a;
}

// ---- Algorithm 4: one attention head ----

// Lines 1 and 2: a projection's adjoint, `W`, `b` and its input `in` (X or Z), its gradient `grad`
// (∇Q or ∇K) and the input's gradient `out`, written with "← … +" when `adds`. RoPE: the rotation's
// adjoint comes first.
PseudoLine projection_adjoint(int n, const std::string& W, const std::string& b, const std::string& in,
                              const std::string& grad, const std::string& out, bool adds, const Variants& v) {
  const std::string out_text = out + " ← " + (adds ? out + " + " : "") + W + "ᵀ ";
  if (!v.rotary) return adj(n, "∇" + W + " ← " + grad + " " + in + "ᵀ,   ∇" + b + " ← " + grad + " 1,   " + out_text + grad);
  const std::string pre = "∇(" + W + " " + in + " + " + b + " 1ᵀ)";
  return adj(n, "∇" + W + " ← " + pre + " " + in + "ᵀ,   ∇" + b + " ← " + pre + " 1,   " + out_text + pre, 0,
             {pre + " ← RoPE_t⁻¹(" + grad + ")        [[column t rotated back by −t·θ_i: a rotation's inverse is its transpose]]"},
             {v.position});
}

PseudoAlgorithm attention(const Variants& v, const ModelConfig& c) {
  PseudoAlgorithm a =
      listing(4, "Attention adjoint", "∇X, ∇Z, ∇W_qkv ← Attention adjoint(∇Ṽ | X, Z, W_qkv, Mask)",
              {"/* Backpropagates one (masked) attention head, from ∇Ṽ = ∂loss/∂Ṽ. A = softmax(S / √d_attn) is line 6's matrix of weights. */",
               "Input: ∇Ṽ ∈ ℝ^{d_out×ℓ_x}; the forward's X, Z, Q, K, V, A and Mask.",
               "Output: ∇X ∈ ℝ^{d_x×ℓ_x} (through Q); ∇Z ∈ ℝ^{d_z×ℓ_z} (through K and V; in self-attention Z = X and the caller adds the two).",
               "Output: ∇W_q ∈ ℝ^{d_attn×d_x}, ∇b_q ∈ ℝ^{d_attn}; ∇W_k ∈ ℝ^{d_attn×d_z}, ∇b_k ∈ ℝ^{d_attn}; ∇W_v ∈ ℝ^{d_out×d_z}, ∇b_v ∈ ℝ^{d_out}."});
  a.lines = {
      adj(6, "∇V, ∇A, ∇S from ∇Ṽ, Ṽ = V · softmax(S / √d_attn):", 0,
          {"∇V ← ∇Ṽ Aᵀ        [[∈ ℝ^{d_out×ℓ_z}]]", "∇A ← Vᵀ ∇Ṽ        [[∈ ℝ^{ℓ_z×ℓ_x}]]",
           "∇S ← (A ⊙ (∇A − 1 (1ᵀ (A ⊙ ∇A)))) / √d_attn        [[∈ ℝ^{ℓ_z×ℓ_x}: each column through softmax's Jacobian]]"}),
      adj(5, "∀t_z, t_x, if ¬Mask[t_z, t_x] then ∇S[t_z, t_x] ← 0        [[exactly 0: A[t_z, t_x] = 0 there]]"),
      adj(4, "∇Q ← K ∇S,   ∇K ← Q ∇Sᵀ        [[∇Q ∈ ℝ^{d_attn×ℓ_x}, ∇K ∈ ℝ^{d_attn×ℓ_z}]]"),
      adj(3, "∇W_v ← ∇V Zᵀ,   ∇b_v ← ∇V 1,   ∇Z ← W_vᵀ ∇V"),
      projection_adjoint(2, "W_k", "b_k", "Z", "∇K", "∇Z", true, v),
      projection_adjoint(1, "W_q", "b_q", "X", "∇Q", "∇X", false, v),
  };
  if (v.rotary)
    add_header(a, "RoPE: lines 1 and 2 rotate ∇Q and ∇K back, θ_i = " + number(c.rope_base) + "^{−2(i−1)/d_attn}; self-attention only",
               v.position);
  if (v.alibi) {
    rewrite(a, 6, "∇V, ∇A, ∇S from ∇Ṽ, Ṽ = V · softmax(S / √d_attn + m_h·B)   [[m_h·B is a constant: the adjoint is unchanged]]",
            {v.position});
    add_header(a, "ALiBi: B[t_z, t_x] = −|t_z − t_x| has no gradient, so ∇S is the paper's", v.position);
  }
  if (v.relative) {
    rewrite(a, 5, "∀t_z, t_x, if ¬Mask[t_z, t_x] then ∇S[t_z, t_x] ← 0;   ∇W_rel[h, k] ← Σ_{bucket(t_z − t_x) = k} ∇S·√d_attn"
                  "        [[B = W_rel[h, bucket(·)] was added to S/√d_attn]]",
            {v.position});
    add_header(a, "Relative bias: the learned B[t_z, t_x] = W_rel[h, bucket(t_z − t_x)] gets ∇B = ∇S·√d_attn, summed per bucket",
               v.position);
  }
  return a;
}

// ---- Algorithm 4-R: random-feature attention (a variant, not in the paper: rfa_listing.cpp) ----

// "random-feature attention, Algorithm 4-R (D = 64)" for a model that runs it, else "".
std::string rf_label(const ModelConfig& c) {
  if (c.attention != AttentionKind::RandomFeatures) return "";
  return "random-feature attention, Algorithm 4-R (D = " + std::to_string(c.rf_features) + ")";
}

// Lines 5 and 6's adjoint, x ↦ φ(x) (rows 2i−1, 2i of Φ are D^{−1/2} cos⟨w_i, x⟩, sin⟨w_i, x⟩).
std::string phi_adjoint(const std::string& P) {
  return "Σ_i w_i (" + P + "[2i−1, :] ⊙ ∇" + P + "[2i, :] − " + P + "[2i, :] ⊙ ∇" + P + "[2i−1, :])";
}

PseudoAlgorithm rf_attention(const Variants& v) {
  PseudoAlgorithm a = listing(
      algs::random_feature_attention, "RFAttention adjoint", "∇X, ∇Z, ∇W_qkv ← RFAttention adjoint(∇Ṽ | X, Z, W_qkv, Mask; D, ω)",
      {"/* Backpropagates Algorithm 4-R from ∇Ṽ = ∂loss/∂Ṽ, in linear time like the forward: line 10's prefix sums become "
       "suffix sums, and no ℓ_z×ℓ_x matrix is built. Φ_Q, Φ_K, κ and the running sums are recomputed from Q and K. */",
       "/* ω, and so line 4's w_i, are fixed (not learned): line 4 has no adjoint. b̂[t_x] = max(b, ε g) is line 12's divisor. */",
       "Input: ∇Ṽ ∈ ℝ^{d_out×ℓ_x}; the forward's X, Z, Q, K, V, Mask and ω.",
       "Output: ∇X ∈ ℝ^{d_x×ℓ_x}, ∇Z ∈ ℝ^{d_z×ℓ_z}, ∇W_q, ∇b_q, ∇W_k, ∇b_k, ∇W_v, ∇b_v, as Algorithm 4's adjoint."});
  a.lines = {
      adj(12, "∇a[:, t_x] ← ∇Ṽ[:, t_x] / b̂[t_x],   ∇b[t_x] ← −∇Ṽ[:, t_x]ᵀ Ṽ[:, t_x] / b̂[t_x]   for t_x ∈ [ℓ_x]"
              "        [[where b̂ = ε g, ∇g[t_x] takes ∇b's value instead, times ε]]"),
      adj(11, "∇Φ_Q[:, t_x] ← S_φ ∇a[:, t_x] + s_φ ∇b[t_x]        [[S_φ, s_φ as they stood at query t_x]]"),
      adj(10, "for n = ℓ_z, …, 1: ∇V[:, n] ← κ[n] ∇S_φᵀ Φ_K[:, n],   ∇Φ_K[:, n] ← κ[n] (∇S_φ V[:, n] + ∇s_φ),   "
              "∇κ[n] ← Φ_K[:, n]ᵀ (∇S_φ V[:, n] + ∇s_φ) + ∇g",
          0,
          {"∇S_φ ← Σ_{t_x : n ≤ n(t_x)} Φ_Q[:, t_x] ∇a[:, t_x]ᵀ,   ∇s_φ ← Σ_{t_x : n ≤ n(t_x)} Φ_Q[:, t_x] ∇b[t_x],   "
           "∇g ← Σ_{t_x : n ≤ n(t_x)} ∇g[t_x]        [[suffix sums, the adjoint of line 10's prefix sums: key n "
           "collects the queries that saw it]]"}),
      adj(7, "∇K[:, t_z] ← ∇κ[t_z] κ[t_z] K[:, t_z] / σ²        [[c is a constant shift: Ṽ does not depend on it]]"),
      adj(6, "∇K ← ∇K + " + phi_adjoint("Φ_K") + "        [[φ's adjoint: d cos u = −sin u du, d sin u = cos u du]]"),
      adj(5, "∇Q ← " + phi_adjoint("Φ_Q")),
      adj(3, "∇W_v ← ∇V Zᵀ,   ∇b_v ← ∇V 1,   ∇Z ← W_vᵀ ∇V"),
      projection_adjoint(2, "W_k", "b_k", "Z", "∇K", "∇Z", true, v),
      projection_adjoint(1, "W_q", "b_q", "X", "∇Q", "∇X", false, v),
  };
  return a;
}

// ---- Algorithm 5: multi-head attention ----

PseudoAlgorithm mh_attention(const Variants& v, const ModelConfig& c) {
  PseudoAlgorithm a =
      listing(5, "MHAttention adjoint", "∇X, ∇Z, ∇W ← MHAttention adjoint(∇Ṽ | X, Z, W, Mask)",
              {"/* Backpropagates a multi-head attention layer: the output projection, then every head's Attention adjoint, last head first. */",
               "Input: ∇Ṽ ∈ ℝ^{d_out×ℓ_x}; the forward's X, Z and Y.",
               "Output: ∇X ∈ ℝ^{d_x×ℓ_x}, ∇Z ∈ ℝ^{d_z×ℓ_z}; ∇W_o, ∇b_o and every head's ∇W^h_qkv."});
  a.lines = {
      adj(4, "∇W_o ← ∇Ṽ Yᵀ,   ∇b_o ← ∇Ṽ 1,   ∇Y ← W_oᵀ ∇Ṽ"),
      adj(3, "for h ∈ [H]: ∇Y^h ← ∇Y[(h−1)·d_mid + 1 : h·d_mid, :]        [[head h's rows]]"),
      adj(1, "For h = H, H − 1, …, 1:"),
      adj(2, "∇X^h, ∇Z^h, ∇W^h_qkv ← Attention adjoint(∇Y^h | X, Z, W^h_qkv, Mask);   ∇X ← ∇X + ∇X^h;   ∇Z ← ∇Z + ∇Z^h", 1),
      comment("/* Self-attention (Z = X): ∇X ← ∇X + ∇Z. */"),
  };
  rewrite(a, 2,
          "∇X^h, ∇Z^h ← Attention adjoint(∇Y^h | X, Z, W^h_q, b^h_q, W^{g(h)}_k, b^{g(h)}_k, W^{g(h)}_v, b^{g(h)}_v, Mask);   ∇X ← ∇X + ∇X^h;   "
          "∇Z ← ∇Z + ∇Z^h   [[∇W^{g(h)}_k, ∇b^{g(h)}_k, ∇W^{g(h)}_v, ∇b^{g(h)}_v add up over the heads of group g(h)]]",
          labels({v.kv}));
  if (const std::string rf = rf_label(c); !rf.empty()) {  // the heads run Algorithm 4-R: its adjoint (with H_kv's text, if any)
    const PseudoLine* y = adjoint_line(a, 2);
    std::string text = y->text;
    text.insert(text.find("Attention adjoint("), "RF");
    rewrite(a, 2, text + "   [[Algorithm 4-R's adjoint]]", labels({y->variant, rf}));
  }
  add_header(a, "W_k, b_k, W_v, b_v have H_kv = " + std::to_string(c.kv_heads()) +
                    " heads, each shared by H/H_kv query heads: their gradients add up; g(h) = ⌊(h−1)·H_kv/H⌋ + 1",
             v.kv);
  return a;
}

// ---- Algorithm 6: layer_norm, one column ----

PseudoAlgorithm layer_norm(const Variants& v) {
  PseudoAlgorithm a = listing(6, "layer_norm adjoint", "∇e ← layer_norm adjoint(∇ê | e, γ, β)",
                              {"/* Backpropagates the normalisation of one column e; ∇γ and ∇β collect every column's share. */",
                               "Input: ∇ê ∈ ℝ^{d_e}; the forward's e, m and v.",
                               "Output: ∇e ∈ ℝ^{d_e}; ∇γ, ∇β ∈ ℝ^{d_e} (added to).",
                               "The forward divides by √(v + ε), not the paper's √v (which is 0 for a constant e); so does its adjoint."});
  a.lines = {
      adj(3, "∇γ, ∇β, ∇e, ∇v, ∇m from ê = (e − m)/√(v + ε) ⊙ γ + β:", 0,
          {"∇γ ← ∇γ + ∇ê ⊙ (e − m)/√(v + ε)", "∇β ← ∇β + ∇ê",
           "∇e ← ∇ê ⊙ γ / √(v + ε)        [[the direct path: lines 2 and 1 add theirs]]",
           "∇v ← −½ (v + ε)^{−3/2} Σ_{i=1}^{d_e} ∇ê[i] γ[i] (e[i] − m)", "∇m ← −1ᵀ(∇ê ⊙ γ) / √(v + ε)"}),
      adj(2, "∇e ← ∇e + 2 ∇v (e − m) / d_e        [[v's path through m adds 0: Σ_i (e[i] − m) = 0]]"),
      adj(1, "∇e ← ∇e + ∇m 1 / d_e"),
  };
  if (!v.rms.empty()) {
    for (PseudoLine& l : a.lines)
      if (l.number == 3) {
        l.text = "∇γ, ∇e, ∇v from ê = e/√(v + ε) ⊙ γ:";
        l.steps = {"∇γ ← ∇γ + ∇ê ⊙ e/√(v + ε)", "∇e ← ∇ê ⊙ γ / √(v + ε)        [[the direct path: line 2 adds its]]",
                   "∇v ← −½ (v + ε)^{−3/2} Σ_{i=1}^{d_e} ∇ê[i] γ[i] e[i]"};
        l.variant = v.rms;
      }
    rewrite(a, 2, "∇e ← ∇e + 2 ∇v e / d_e", {v.rms});
    rewrite(a, 1, "(no m: RMSNorm does not centre e, nothing to add)", {v.rms});
    add_header(a, "Parameters: γ only: no ∇β", v.rms);
  }
  return a;
}

// ---- Algorithm 7: unembedding, one column ----

PseudoAlgorithm unembedding(const Variants& v) {
  PseudoAlgorithm a = listing(7, "Unembedding adjoint", "∇e, ∇W_u ← Unembedding adjoint(∇p | e, W_u)",
                              {"/* Backpropagates one column's softmax over the vocabulary. */",
                               "Input: ∇p ∈ ℝ^{N_V}, ∂loss/∂p; the forward's e and p.",
                               "Output: ∇e ∈ ℝ^{d_e}; ∇(W_u e) ∈ ℝ^{N_V}, from which the caller adds W_u's share ∇(W_u e) eᵀ (all columns at once)."});
  const std::string logits = v.bias.empty() ? "W_u e" : "W_u e + b_u";
  a.lines = {adj(1, "∇(" + logits + "), ∇e from p = softmax(" + logits + "):", 0,
                 {"∇(" + logits + ") ← p ⊙ (∇p − 1 (pᵀ ∇p))        [[softmax's Jacobian; with the loss's ∇p it is p − onehot(y), y the target]]",
                  v.tied.empty() ? "∇e ← W_uᵀ ∇(" + logits + ")" : "∇e ← W_e ∇(" + logits + ")        [[W_u = W_eᵀ]]"},
                 labels({v.tied, v.bias}))};
  add_header(a, "no W_u: W_u = W_eᵀ, so W_e collects the unembedding's gradient ∇(W_u e) eᵀ, transposed", v.tied);
  add_header(a, "b_u ∈ ℝ^{N_V}: ∇b_u collects every column's ∇(W_u e + b_u)", v.bias);
  return a;
}

// ---- the transformers' shared lines (Algorithms 8, 9, 10) ----

// The norm's adjoint on every column: "for t ∈ [ℓ]: ∇X[:, t] ← ∇X[:, t] + layer_norm adjoint(∇X̃[:, t] | X[:, t], γ¹_l, β¹_l)".
// `grad_in` is the gradient of the norm's output, `X` its input, `adds` whether the input's gradient
// adds to what the residual already passed on.
std::string norm_adjoint(const Variants& v, const std::string& len, const std::string& X, const std::string& grad_in,
                         bool adds, const std::string& scale, const std::string& offset) {
  const std::string out = "∇" + X + "[:, t]";
  return "for t ∈ [" + len + "]: " + out + " ← " + (adds ? out + " + " : "") + (v.rms.empty() ? "layer_norm" : "rms_norm") +
         " adjoint(" + grad_in + "[:, t] | " + X + "[:, t], " + scale + (v.rms.empty() ? ", " + offset : "") + ")";
}

// The derivative of the MLP's activation, as the MLP's second sub-step writes it.
std::string activation_derivative(const Variants& v, const std::string& U) {
  const std::string head = "∇" + U + " ← ∇" + v.act_name + "(…) ⊙ " + v.act_name + "′" + U + ",   ";
  if (v.act_name == "ReLU") return head + "ReLU′(u) = [[u > 0]]";
  if (v.act_name == "GELU_tanh")
    return head + "GELU_tanh′(u) = ½(1 + tanh a) + ½u(1 − tanh² a)·√(2/π)(1 + 3·0.044715u²), a = √(2/π)(u + 0.044715u³)";
  return head + "GELU′(u) = Φ(u) + u φ(u)";
}

// A residual sub-layer "X ← X + f(in)": its adjoint's text (and sub-steps), given ∇X after it.
// `in` is X̃ (pre-LN: the sub-layer reads the norm's output, whose gradient it assigns) or X
// (post-LN: the sub-layer reads X, and its gradient adds to the residual's).
struct SubLayer {
  std::function<PseudoLine(int n, int indent, const std::string& X, const std::string& in, bool pre)> adjoint;
  std::string scale, offset;
};

SubLayer attention_sublayer(const Variants& v, const std::string& W, const std::string& context, const std::string& mask,
                            const Labels& why, std::string scale, std::string offset) {
  const std::string note = v.rotary     ? "   [[RoPE: inside Algorithm 4's adjoint]]"
                           : v.alibi    ? "   [[ALiBi: inside Algorithm 4's adjoint]]"
                           : v.relative ? "   [[relative bias: ∇W_rel inside Algorithm 4's adjoint]]"
                                        : "";
  Labels all = why;
  if (!note.empty()) all.push_back(v.position);
  if (!v.order.empty()) all.insert(all.begin(), v.order);
  return {[=](int n, int indent, const std::string& X, const std::string& in, bool pre) {
            const std::string call = "MHAttention adjoint(∇" + X + " | " + in + context + ", " + W + ", " + mask + ")";
            return adj(n, pre ? "∇" + in + " ← " + call + "        [[∇" + X + " passes on unchanged: the residual]]" + note
                              : "∇" + X + " ← ∇" + X + " + " + call + "        [[the residual keeps ∇" + X + "]]" + note,
                       indent, {}, all);
          },
          std::move(scale), std::move(offset)};
}

// The MLP sub-layer: W^l_w1, W^l_w2 (and W^l_gate under SwiGLU).
SubLayer mlp_sublayer(const Variants& v, const std::string& w1, const std::string& w2, const std::string& gate, std::string scale,
                      std::string offset) {
  Labels why = labels({v.order, v.activation});
  return {[=](int n, int indent, const std::string& X, const std::string& in, bool pre) {
            const std::string W1 = "W^l_" + w1, W2 = "W^l_" + w2, G = "W^l_" + gate;
            const std::string U = "(" + W1 + " " + in + " + b^l_" + w1 + " 1ᵀ)";
            const std::string out = "∇" + in + " ← " + (pre ? "" : "∇" + in + " + ");
            const std::string act = v.swiglu ? "SiLU(…) ⊙ (…)" : v.act_name + "(…)";
            std::vector<std::string> steps{"∇" + W2 + " ← ∇" + X + " (" + act + ")ᵀ,   ∇b^l_" + w2 + " ← ∇" + X + " 1",
                                           "∇" + act + " ← " + W2 + "ᵀ ∇" + X};
            if (v.swiglu) {
              const std::string Gp = "(" + G + " " + in + " + b^l_" + gate + " 1ᵀ)";
              steps.push_back("∇SiLU(…) ← ∇(SiLU(…) ⊙ (…)) ⊙ " + U + "        [[SiLU(…) = SiLU" + Gp + "]]");
              steps.push_back("∇" + Gp + " ← ∇SiLU(…) ⊙ SiLU′" + Gp + ",   SiLU′(g) = σ(g)(1 + g(1 − σ(g)))");
              steps.push_back("∇" + U + " ← ∇(SiLU(…) ⊙ (…)) ⊙ SiLU(…)");
              steps.push_back("∇" + W1 + " ← ∇" + U + " " + in + "ᵀ,   ∇b^l_" + w1 + " ← ∇" + U + " 1,   ∇" + G + " ← ∇" + Gp + " " + in +
                              "ᵀ,   ∇b^l_" + gate + " ← ∇" + Gp + " 1");
            } else {
              steps.push_back(activation_derivative(v, U));
              steps.push_back("∇" + W1 + " ← ∇" + U + " " + in + "ᵀ,   ∇b^l_" + w1 + " ← ∇" + U + " 1");
            }
            const std::string back = W1 + "ᵀ ∇" + U + (v.swiglu ? " + " + G + "ᵀ ∇(" + G + " " + in + " + b^l_" + gate + " 1ᵀ)" : "");
            const std::string head = pre ? "∇" + in + " ← " + back + "        [[∇" + X + " passes on unchanged: the residual]]"
                                         : "∇" + X + " ← ∇" + X + " + " + back + "        [[the residual keeps ∇" + X + "]]";
            return adj(n, head, indent, std::move(steps), why);
          },
          std::move(scale), std::move(offset)};
}

// The adjoints of a layer's lines first … first + 2·subs − 1, in the order they run: the last
// sub-layer first, and in each the line written second first. Pre-LN (the paper's Algorithm 10):
// the sub-layer's adjoint gives ∇X̃, then the norm's adds it into ∇X; post-LN (Algorithms 8, 9):
// the norm's adjoint replaces ∇X, then the sub-layer's adds to it.
void layer_adjoints(PseudoAlgorithm& a, const Variants& v, int first, const std::string& len, const std::string& X,
                    const std::vector<SubLayer>& subs) {
  const Labels norm_why = labels({v.order, v.rms});
  for (size_t k = subs.size(); k-- > 0;) {
    const SubLayer& s = subs[k];
    const int n = first + 2 * static_cast<int>(k);
    if (v.pre) {
      const std::string Xt = X + kTilde;
      a.lines.push_back(s.adjoint(n + 1, 1, X, Xt, true));
      a.lines.push_back(adj(n, norm_adjoint(v, len, X, "∇" + Xt, true, s.scale, s.offset), 1, {}, norm_why));
    } else {
      a.lines.push_back(adj(n + 1, norm_adjoint(v, len, X, "∇" + X, false, s.scale, s.offset), 1, {}, norm_why));
      a.lines.push_back(s.adjoint(n, 1, X, X, false));
    }
  }
}

// The adjoint of the embedding line (Alg. 10 L2, Alg. 9 L2, Alg. 8 L2 and L11): ∇e_t back into the
// columns of W_e and W_p it was read from, through the BERT checkpoints' extras first.
PseudoLine embedding_adjoint(const Variants& v, int n, const std::string& len, const std::string& seq) {
  const std::string we = "∇W_e[:, " + seq + "[t]] ← ∇W_e[:, " + seq + "[t]] + ∇e_t";
  const std::string wp = v.no_w_p ? "" : v.position.empty() ? "∇W_p[:, t] ← ∇W_p[:, t] + ∇e_t" : "";
  const std::string note = v.no_w_p                ? "   [[no W_p: no position gradient]]"
                           : !v.position.empty() ? "   [[W_p is computed, not learned: no ∇W_p]]"
                                                 : "        [[Algorithms 1 and 2's adjoints]]";
  const std::string sums = "for t ∈ [" + len + "]: " + we + (wp.empty() ? "" : ";   " + wp) + note;
  if (v.token_type.empty() && v.emb_norm.empty()) return adj(n, sums, 0, {}, labels({v.position}));
  std::vector<std::string> steps;
  if (!v.emb_norm.empty())
    steps.push_back("for t ∈ [" + len + "]: ∇e_t ← layer_norm adjoint(∇e_t | e_t, γ_emb, β_emb)        [[∇γ_emb, ∇β_emb collect every column]]");
  if (!v.token_type.empty()) steps.push_back("∇W_s[:, 1] ← Σ_{t=1}^{" + len + "} ∇e_t        [[every token is segment 1]]");
  return adj(n, sums, 0, std::move(steps), labels({v.position, v.token_type, v.emb_norm}));
}

// The adjoint of "return P = softmax(W_u X)" on every column.
PseudoLine unembedding_adjoint(const Variants& v, int n, const std::string& len) {
  const std::string W = v.tied.empty() ? "W_u" : "W_eᵀ";
  const std::string logits = "∇(" + W + " X" + (v.bias.empty() ? "" : " + b_u 1ᵀ") + ")";
  const std::string grad_w = "∇W_u ← " + logits + " Xᵀ" + (v.tied.empty() ? "" : ";   ∇W_e ← ∇W_e + ∇W_uᵀ   [[W_u = W_eᵀ]]");
  return adj(n,
             "for t ∈ [" + len + "]: ∇X[:, t], " + logits + "[:, t] ← Unembedding adjoint(∇P[:, t] | X[:, t], " + W + ");   " + grad_w +
                 (v.bias.empty() ? "" : ";   ∇b_u ← " + logits + " 1"),
             0, {}, labels({v.tied, v.bias}));
}

PseudoLine residual_to_embeddings(int n, const std::string& len, const std::string& X) {
  return adj(n, "for t ∈ [" + len + "]: ∇e_t ← ∇" + X + "[:, t]");
}

// ---- Algorithm 10: DTransformer (GPT) ----

PseudoAlgorithm dtransformer(const Variants& v) {
  PseudoAlgorithm a =
      listing(10, "DTransformer adjoint", "∇θ ← DTransformer adjoint(∇P | x, θ)",
              {"/* GPT's backward pass: from ∇P to the gradient of every parameter, the last layer first. */",
               "Input: ∇P ∈ ℝ^{N_V×ℓ}, ∂loss/∂P (the adjoint of Algorithm 13's line 5); x and the forward's values.",
               "Output: ∇θ: ∇W_e, ∇W_p; for l ∈ [L]: ∇W_l, ∇γ¹_l, ∇β¹_l, ∇γ²_l, ∇β²_l, ∇W^l_mlp1, ∇b^l_mlp1, ∇W^l_mlp2, ∇b^l_mlp2; ∇γ, ∇β; ∇W_u.",
               "Every ∇ of a parameter starts at 0. ∇X ∈ ℝ^{d_e×ℓ} is the gradient of the residual stream as the lines run."});
  const std::string mask = v.prefix.empty() ? "Mask[t, t′] = [[t ≤ t′]]" : "Mask[t, t′] = [[t ≤ max(t′, p)]]";
  a.lines.push_back(unembedding_adjoint(v, 11, "ℓ"));
  if (v.pre) a.lines.push_back(adj(10, norm_adjoint(v, "ℓ", "X", "∇X", false, "γ", "β"), 0, {}, labels({v.rms})));
  else a.lines.push_back(adj(10, "(no final norm: post-LN — no adjoint)", 0, {}, {v.order}));
  a.lines.push_back(adj(4, "for l = L, L − 1, …, 1 do"));
  layer_adjoints(a, v, 5, "ℓ", "X",
                 {attention_sublayer(v, "W_l", "", mask, labels({v.prefix}), "γ¹_l", "β¹_l"),
                  mlp_sublayer(v, "mlp1", "mlp2", "gate", "γ²_l", "β²_l")});
  a.lines.push_back(comment("end"));
  a.lines.push_back(residual_to_embeddings(3, "ℓ", "X"));
  a.lines.push_back(embedding_adjoint(v, 2, "ℓ", "x"));
  return a;
}

// ---- Algorithm 9: ETransformer (BERT) ----

PseudoAlgorithm etransformer(const Variants& v) {
  PseudoAlgorithm a =
      listing(9, "ETransformer adjoint", "∇θ ← ETransformer adjoint(∇P | x, θ)",
              {"/* BERT's backward pass: from ∇P to the gradient of every parameter, the last layer first. */",
               "Input: ∇P ∈ ℝ^{N_V×ℓ}, ∂loss/∂P (the adjoint of Algorithm 12's line 9: non-zero only in the masked columns t ∈ T̃); x and the forward's values.",
               "Output: ∇θ: ∇W_e, ∇W_p; for l ∈ [L]: ∇W_l, ∇γ¹_l, ∇β¹_l, ∇γ²_l, ∇β²_l, ∇W^l_mlp1, ∇b^l_mlp1, ∇W^l_mlp2, ∇b^l_mlp2; ∇W_f, ∇b_f, ∇γ, ∇β; ∇W_u.",
               "Every ∇ of a parameter starts at 0. ∇X is the gradient of the residual stream as the lines run; the mask Mask ≡ 1 spreads it to every token."});
  a.lines.push_back(unembedding_adjoint(v, 12, "ℓ"));
  a.lines.push_back(adj(11, norm_adjoint(v, "ℓ", "X", "∇X", false, "γ", "β"), 0, {}, labels({v.rms})));
  // X ← GELU(W_f X + b_f 1ᵀ) (pre-LN: after the stack's final norm, whose adjoint then runs last).
  const std::string U = "∇(W_f X + b_f 1ᵀ)";
  const std::string weights = "∇W_f ← " + U + " Xᵀ,   ∇b_f ← " + U + " 1,   ∇X ← W_fᵀ " + U;
  std::vector<std::string> final_steps{U + " ← ∇X ⊙ GELU′(W_f X + b_f 1ᵀ),   GELU′(u) = Φ(u) + u φ(u)"};
  if (v.pre) final_steps.push_back(weights);
  a.lines.push_back(adj(10, v.pre ? norm_adjoint(v, "ℓ", "X", "∇X", false, "γ_enc", "β_enc") + "        [[pre-LN: the stack's final norm]]" : weights,
                        0, std::move(final_steps), labels({v.order})));
  a.lines.push_back(adj(4, "for l = L, L − 1, …, 1 do"));
  layer_adjoints(a, v, 5, "ℓ", "X",
                 {attention_sublayer(v, "W_l", "", "Mask ≡ 1", {}, "γ¹_l", "β¹_l"), mlp_sublayer(v, "mlp1", "mlp2", "gate", "γ²_l", "β²_l")});
  a.lines.push_back(comment("end"));
  a.lines.push_back(residual_to_embeddings(3, "ℓ", "X"));
  a.lines.push_back(embedding_adjoint(v, 2, "ℓ", "x"));
  return a;
}

// ---- Algorithm 8: EDTransformer ----

// The reversed loop over a stack's layers, opened by the adjoint of its "for" line `n`; a pre-LN
// stack's final norm (a variant, forward line `norm_line`) was the last thing it ran, so its adjoint
// comes first. Post-LN, the encoder's "end" line (`norm_line`) states where its ∇Z comes from.
void stack_loop(PseudoAlgorithm& a, const Variants& v, int n, const std::string& L, int norm_line, const std::string& len,
                const std::string& X, const std::string& scale, const std::string& offset, const std::string& encoder_output = "") {
  if (v.pre)
    a.lines.push_back(adj(norm_line, norm_adjoint(v, len, X, "∇" + X, false, scale, offset) + "        [[pre-LN: the stack's final norm]]", 0,
                          {}, labels({v.order, v.rms})));
  else if (!encoder_output.empty())
    a.lines.push_back(adj(norm_line, encoder_output));
  a.lines.push_back(adj(n, "for l = " + L + ", " + L + " − 1, …, 1 do"));
}

PseudoAlgorithm edtransformer(const Variants& v) {
  PseudoAlgorithm a = listing(
      8, "EDTransformer adjoint", "∇θ ← EDTransformer adjoint(∇P | z, x, θ)",
      {"/* The encoder-decoder's backward pass: the decoder's layers last to first, then the encoder's with the gradient the cross-attentions sent into Z. */",
       "Input: ∇P ∈ ℝ^{N_V×ℓ_x}, ∂loss/∂P (the adjoint of Algorithm 11's line 5); z, x and the forward's values.",
       "Output: ∇θ: ∇W_e, ∇W_p (both sequences add to them); for l ∈ [L_enc]: ∇W^enc_l, ∇γ¹_l, ∇β¹_l, ∇γ²_l, ∇β²_l, ∇W^l_mlp1, ∇b^l_mlp1, ∇W^l_mlp2, ∇b^l_mlp2;",
       "for l ∈ [L_dec]: ∇W^dec_l, ∇W^ed_l, ∇γ³_l, ∇β³_l, ∇γ⁴_l, ∇β⁴_l, ∇γ⁵_l, ∇β⁵_l, ∇W^l_mlp3, ∇b^l_mlp3, ∇W^l_mlp4, ∇b^l_mlp4; ∇W_u.",
       "Every ∇ of a parameter starts at 0, and so does ∇Z ∈ ℝ^{d_e×ℓ_z}: each decoder layer's cross-attention (line 16) adds to it."});
  a.lines.push_back(comment("/* From P back to the decoder's X: */"));
  a.lines.push_back(unembedding_adjoint(v, 21, "ℓ_x"));
  stack_loop(a, v, 13, "L_dec", 20, "ℓ_x", "X", "γ_dec", "β_dec");
  const SubLayer cross{[](int n, int indent, const std::string&, const std::string& in, bool pre) {
                         const std::string call = "MHAttention adjoint(∇X | " + in + ", Z, W^ed_l, Mask ≡ 1)";
                         const std::string to_x = pre ? "∇" + in + " ← ∇X^{ed}" : "∇X ← ∇X + ∇X^{ed}";
                         return adj(n, "∇X^{ed}, ∇Z^{ed} ← " + call + ";   " + to_x + ";   ∇Z ← ∇Z + ∇Z^{ed}        [[∇Z: into the encoder]]",
                                    indent);
                       },
                       "γ⁴_l", "β⁴_l"};
  layer_adjoints(a, v, 14, "ℓ_x", "X",
                 {attention_sublayer(v, "W^dec_l", "", "Mask[t, t′] ≡ [[t ≤ t′]]", {}, "γ³_l", "β³_l"), cross,
                  mlp_sublayer(v, "mlp3", "mlp4", "gate2", "γ⁵_l", "β⁵_l")});
  a.lines.push_back(comment("end"));
  a.lines.push_back(residual_to_embeddings(12, "ℓ_x", "X"));
  a.lines.push_back(embedding_adjoint(v, 11, "ℓ_x", "x"));
  a.lines.push_back(comment("/* Back through the encoder, from the ∇Z the cross-attentions collected: */"));
  stack_loop(a, v, 4, "L_enc", 9, "ℓ_z", "Z", "γ_enc", "β_enc",
             "∇Z: the gradient of the encoder's output, every decoder layer's ∇Z^{ed} added up (line 16)");
  layer_adjoints(a, v, 5, "ℓ_z", "Z",
                 {attention_sublayer(v, "W^enc_l", "", "Mask ≡ 1", {}, "γ¹_l", "β¹_l"), mlp_sublayer(v, "mlp1", "mlp2", "gate", "γ²_l", "β²_l")});
  a.lines.push_back(comment("end"));
  a.lines.push_back(residual_to_embeddings(3, "ℓ_z", "Z"));
  a.lines.push_back(embedding_adjoint(v, 2, "ℓ_z", "z"));
  return a;
}

// ---- Algorithms 11, 12, 13: the loss lines ----

PseudoAlgorithm loss_lines(int alg, const Variants& v) {
  const int update = alg == 12 ? 10 : 6;
  PseudoAlgorithm a = listing(alg, alg == 11 ? "EDTraining: ∇loss(θ)" : alg == 12 ? "ETraining: ∇loss(θ)" : "DTraining: ∇loss(θ)",
                              "∇loss(θ) of line " + std::to_string(update) + ": θ ← θ − η · ∇loss(θ)",
                              {"/* The gradient that line " + std::to_string(update) + " uses, computed backward from the loss. */",
                               "Input: ∇loss = 1 (∂loss/∂loss); P(θ), the forward's output.",
                               "Output: ∇loss(θ), the gradient of every parameter of θ."});
  const std::string zero = "∇P ← 0;   ";
  const std::string next = "∇P[x_n[t+1], t] ← −1 / P(θ)[x_n[t+1], t]";
  if (alg == 12) {
    a.lines = {adj(9, zero + "for t ∈ T̃: ∇P[x_n[t], t] ← −1 / P(θ)[x_n[t], t]        [[only the masked positions carry loss]]"),
               adj(8, "∇loss(θ) ← ETransformer adjoint(∇P | x̃_n, θ)        [[Algorithm 9's backward listing]]")};
  } else if (alg == 11) {
    a.lines = {adj(5, zero + "for t ∈ [ℓ − 1]: " + next),
               adj(4, "∇loss(θ) ← EDTransformer adjoint(∇P | z_n, x_n, θ)        [[Algorithm 8's backward listing]]")};
  } else {
    a.lines = {adj(5, zero + "for t ∈ [ℓ − 1]: " + next),
               adj(4, "∇loss(θ) ← DTransformer adjoint(∇P | x_n, θ)        [[Algorithm 10's backward listing]]")};
    rewrite(a, 5, zero + "for t = max(1, p), …, ℓ − 1: " + next + "        [[no loss inside the prefix]]", labels({v.prefix}));
  }
  return a;
}

// The configuration each algorithm's listing is written for: its architecture's (8, 9, 10 and 11,
// 12, 13 belong to one), with c's variants.
ModelConfig config_for(int alg, const ModelConfig& c) {
  const char* arch = (alg == 8 || alg == 11) ? "ed" : (alg == 9 || alg == 12) ? "bert" : (alg == 10 || alg == 13) ? "gpt" : nullptr;
  if (!arch || c.arch == arch) return c;
  ModelConfig paper;
  paper.arch = arch;
  return paper;
}

}  // namespace

bool has_backward_listing(int alg) {
  return (alg >= 1 && alg <= 13 && alg != 3) || alg == algs::random_feature_attention;
}

PseudoAlgorithm backward_pseudocode_for(int alg, const ModelConfig& config) {
  const ModelConfig c = config_for(alg, config);
  const Variants v = variants_of(c);
  switch (alg) {
    case 1: return token_embedding(v);
    case 2: return positional_embedding(v);
    case 4: return attention(v, c);
    case 5: return mh_attention(v, c);
    case 6: return layer_norm(v);
    case 7: return unembedding(v);
    case 8: return edtransformer(v);
    case 9: return etransformer(v);
    case 10: return dtransformer(v);
    case 11:
    case 12:
    case 13: return loss_lines(alg, v);
    case algs::random_feature_attention: return rf_attention(v);
    default: return PseudoAlgorithm{0, "", "", {}, {}};
  }
}

const PseudoAlgorithm& backward_pseudocode(int alg) {
  static const std::map<int, PseudoAlgorithm> table = [] {
    std::map<int, PseudoAlgorithm> t;
    for (int alg = 1; alg <= 13; ++alg)
      if (has_backward_listing(alg)) t.emplace(alg, backward_pseudocode_for(alg, ModelConfig{}));
    t.emplace(algs::random_feature_attention, backward_pseudocode_for(algs::random_feature_attention, ModelConfig{}));
    return t;
  }();
  static const PseudoAlgorithm none{0, "", "", {}, {}};
  auto it = table.find(alg);
  return it == table.end() ? none : it->second;
}

const PseudoLine* adjoint_line(const PseudoAlgorithm& listing, int line) {
  if (line <= 0) return nullptr;
  for (const PseudoLine& l : listing.lines)
    if (l.number == line) return &l;
  return nullptr;
}

const PseudoLine* backward_line(int alg, int line) { return adjoint_line(backward_pseudocode(alg), line); }

int count_substeps(const Trace& t, size_t k) {
  const Event& e = t.events[k];
  const int line_depth = e.kind == EventKind::SubStep ? e.depth - 1 : e.depth;  // a SubStep is one level deeper
  int n = 0;
  for (size_t j = k; j-- > 0;) {
    const Event& p = t.events[j];
    if (p.kind == EventKind::SubStep && p.depth == line_depth + 1 && p.ref() == e.ref()) ++n;
    else if (p.depth <= line_depth) break;  // the frame's previous line, or its Enter
  }
  return n;
}

std::string adjoint_name(int line) { return "adjoint of line " + std::to_string(line); }

}  // namespace sf
