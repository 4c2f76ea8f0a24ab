// The pseudocode of a model with variants (see core/pseudocode/variants.hpp): the paper's text
// (core/pseudocode/pseudocode.cpp) with the lines the variants of docs/variants.md change
// rewritten and labelled with the variant and the seed that describes it.
#include "core/pseudocode/variants.hpp"

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/pseudocode/variant_labels.hpp"

namespace sf {

namespace {

using namespace pseudo;

// ---- the texts the forward algorithms share ----

// "for t ∈ [ℓ]: X̃[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)"; `scale` and `offset` are γ and β
// with their sub- and superscripts (RMSNorm has no β).
std::string norm_line(const Variants& v, const std::string& len, const std::string& out, const std::string& in,
                      const std::string& scale, const std::string& offset) {
  return "for t ∈ [" + len + "]: " + out + "[:, t] ← " + (v.rms.empty() ? "layer_norm" : "rms_norm") + "(" + in + "[:, t] | " +
         scale + (v.rms.empty() ? ", " + offset : "") + ")";
}

// The MLP sub-layer applied to `in`: "W^l_mlp2 GELU(W^l_mlp1 X̃ + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ", or
// the SwiGLU form with W^l_gate.
std::string mlp(const Variants& v, const std::string& in, const std::string& w1, const std::string& w2, const std::string& gate) {
  const std::string first = "W^l_" + w1 + " " + in + " + b^l_" + w1 + " 1ᵀ";
  const std::string inner = v.swiglu ? "(SiLU(W^l_" + gate + " " + in + " + b^l_" + gate + " 1ᵀ) ⊙ (" + first + "))"
                                     : v.act_name + "(" + first + ")";
  return "W^l_" + w2 + " " + inner + " + b^l_" + w2 + " 1ᵀ";
}

// Where positions enter a self-attention (RoPE, ALiBi, the relative bias), as a margin note.
// `buckets` names the relative bias's T5 buckets where a model has both kinds (the encoder-decoder).
std::string self_attention_note(const Variants& v, const std::string& buckets) {
  return v.rotary     ? "   [[RoPE inside Algorithm 4]]"
         : v.alibi    ? "   [[ALiBi inside Algorithm 4]]"
         : v.relative ? "   [[relative bias B" + (buckets.empty() ? "" : " (" + buckets + " buckets)") + " inside Algorithm 4]]"
                      : "";
}

// One residual sub-layer of a stack: its body applied to an input, its norm's γ, β names and
// the variants that change its own statement.
struct SubLayer {
  std::function<std::string(const std::string& in)> body;
  std::string scale, offset;
  Labels why;
};

// Lines first … first + 2·subs − 1 of a layer: post-LN writes each sub-layer then its norm
// (the paper's Algorithms 8 and 9), pre-LN the norm into X̃ then the sub-layer reading X̃
// (the paper's Algorithm 10). The line numbers stay; the statements follow the order.
void layer_lines(PseudoAlgorithm& a, const Variants& v, int first, const std::string& len, const std::string& X,
                 const std::vector<SubLayer>& subs) {
  int n = first;
  for (const SubLayer& s : subs) {
    const Labels norm_why = labels({v.order, v.rms});
    Labels sub_why = s.why;
    if (!v.order.empty()) sub_why.insert(sub_why.begin(), v.order);
    if (v.pre) {
      rewrite(a, n++, norm_line(v, len, X + kTilde, X, s.scale, s.offset), norm_why);
      rewrite(a, n++, X + " ← " + X + " + " + s.body(X + kTilde), sub_why);
    } else {
      rewrite(a, n++, X + " ← " + X + " + " + s.body(X), sub_why);
      rewrite(a, n++, norm_line(v, len, X, X, s.scale, s.offset), norm_why);
    }
  }
}

// Line 2 of Algorithms 9, 10 (lines 2 and 11 of Algorithm 8): the embedding of token t, with the
// position variants and the extras of BERT checkpoints (+ W_s[:, 1], then layer_norm(… | γ_emb, β_emb)).
void embedding_line(PseudoAlgorithm& a, const Variants& v, int n, const std::string& len, const std::string& seq) {
  std::string sum = "W_e[:, " + seq + "[t]]", note;
  if (v.no_w_p) {
    note = std::string("   [[no W_p: ") + (v.rotary ? "RoPE inside Algorithm 4" : v.alibi ? "ALiBi inside Algorithm 4" : v.relative ? "relative bias inside Algorithm 4" : "no positions") + "]]";
  } else {
    sum += " + W_p[:, t]";
    if (!v.position.empty()) note = "   [[W_p computed, Algorithm 2]]";
  }
  if (!v.token_type.empty()) sum += " + W_s[:, 1]";
  if (!v.emb_norm.empty()) sum = "layer_norm(" + sum + " | γ_emb, β_emb)";
  rewrite(a, n, "for t ∈ [" + len + "]: e_t ← " + sum + note, labels({v.position, v.token_type, v.emb_norm}));
}

// The return line P = softmax(W_u X): tied, W_eᵀ in place of W_u; with BERT's bias, + b_u 1ᵀ.
void return_line(PseudoAlgorithm& a, const Variants& v, int n) {
  rewrite(a, n, "return P = softmax(" + std::string(v.tied.empty() ? "W_u" : "W_eᵀ") + " X" + (v.bias.empty() ? "" : " + b_u 1ᵀ") + ")",
          labels({v.tied, v.bias}));
}

// The tensors the variants add or remove, listed under the forward algorithm's header.
void parameter_header(PseudoAlgorithm& a, const Variants& v, const ModelConfig& c) {
  if (v.no_w_p) add_header(a, "no W_p: positions are not embedded", v.position);
  else add_header(a, "W_p is computed, not a parameter: W_p[2i−1, t] = sin(t / " + sinusoid_base(c) + "^{2i/d_e}), W_p[2i, t] = cos(t / " +
                         sinusoid_base(c) + "^{2i/d_e})", v.position);
  add_header(a, "no β tensors: RMSNorm scales by γ only", v.rms);
  if (c.arch == "gpt") add_header(a, "no final γ, β: post-LN ends with the last layer's norm", v.order);
  if (c.arch == "bert") add_header(a, "γ_enc, β_enc ∈ ℝ^{d_e}: the final norm of the stack, before line 10", v.order);
  if (c.arch == "ed") add_header(a, "γ_enc, β_enc, γ_dec, β_dec ∈ ℝ^{d_e}: the final norms of the encoder (Z) and the decoder (before W_u)", v.order);
  if (v.swiglu)
    add_header(a, c.arch == "ed" ? "for l: W^l_gate, W^l_gate2 ∈ ℝ^{d_mlp×d_e}, b^l_gate, b^l_gate2 ∈ ℝ^{d_mlp} (encoder, decoder)"
                                 : "for l: W^l_gate ∈ ℝ^{d_mlp×d_e}, b^l_gate ∈ ℝ^{d_mlp}",
               v.activation);
  add_header(a, "no W_u: W_u = W_eᵀ", v.tied);
  add_header(a, "W_s ∈ ℝ^{d_e×" + std::to_string(c.token_types) + "}: token-type embeddings; every token is segment 0, column 1", v.token_type);
  add_header(a, "γ_emb, β_emb ∈ ℝ^{d_e}: the embedding layer norm", v.emb_norm);
  add_header(a, "b_u ∈ ℝ^{N_V}: the bias of the unembedding", v.bias);
  add_header(a, "W_k, b_k, W_v, b_v have H_kv = " + std::to_string(c.kv_heads()) + " heads; query head h reads g(h) = ⌊(h−1)·H_kv/H⌋ + 1",
             v.kv);
  if (v.relative)
    add_header(a, std::string(c.arch == "ed" ? "for l: W^{l,enc}_rel, W^{l,dec}_rel ∈ ℝ^{H×" : "for l: W^l_rel ∈ ℝ^{H×") +
                      std::to_string(c.relative_buckets) +
                      "}: each self-attention's learned bias per head and distance bucket (T5 shares one across layers)" +
                      (c.arch == "ed" ? "; the cross-attention W^ed_l has none" : ""),
               v.position);
}

// A self-attention's mask as the forward algorithm writes it, with the sliding window when set:
// `causal` [[t ≤ t′]] (∧ t′ − w ≤ t), or bidirectional ≡ 1 (|t − t′| ≤ w).
std::string self_mask(const Variants& v, bool causal, const std::string& paper) {
  if (v.window.empty()) return paper;
  const std::string w = std::to_string(v.w);
  return causal ? "Mask[t, t′] = [[t′ − " + w + " ≤ t ≤ t′]]" : "Mask[t, t′] = [[|t − t′| ≤ " + w + "]]";
}

SubLayer self_attention(const Variants& v, const std::string& W, const std::string& mask, Labels why,
                        const std::string& buckets = "") {
  const std::string note = self_attention_note(v, buckets);
  if (!note.empty()) why.push_back(v.position);
  return {[=](const std::string& in) { return "MHAttention(" + in + " | " + W + ", " + mask + ")" + note; }, "", "", why};
}

SubLayer mlp_layer(const Variants& v, const std::string& w1, const std::string& w2, const std::string& gate) {
  return {[=](const std::string& in) { return mlp(v, in, w1, w2, gate); }, "", "", labels({v.activation})};
}

SubLayer normed(SubLayer s, std::string scale, std::string offset) {
  s.scale = std::move(scale);
  s.offset = std::move(offset);
  return s;
}

// Algorithm 10, DTransformer (GPT).
void dtransformer(PseudoAlgorithm& a, const Variants& v, const ModelConfig& c) {
  embedding_line(a, v, 2, "ℓ", "x");
  const std::string mask = !v.prefix.empty() ? "Mask[t, t′] = [[t ≤ max(t′, p)]]" + std::string(v.window.empty() ? "" : " ∧ [[|t − t′| ≤ " + std::to_string(v.w) + "]]")
                                             : self_mask(v, true, "Mask[t, t′] = [[t ≤ t′]]");
  layer_lines(a, v, 5, "ℓ", "X",
              {normed(self_attention(v, "W_l", mask, labels({v.prefix, v.window})), "γ¹_l", "β¹_l"),
               normed(mlp_layer(v, "mlp1", "mlp2", "gate"), "γ²_l", "β²_l")});
  if (v.pre) rewrite(a, 10, norm_line(v, "ℓ", "X", "X", "γ", "β"), labels({v.rms}));
  else rewrite(a, 10, "(no final norm: post-LN — the line is skipped)", {v.order});
  return_line(a, v, 11);
  parameter_header(a, v, c);
}

// Algorithm 9, ETransformer (BERT).
void etransformer(PseudoAlgorithm& a, const Variants& v, const ModelConfig& c) {
  embedding_line(a, v, 2, "ℓ", "x");
  layer_lines(a, v, 5, "ℓ", "X",
              {normed(self_attention(v, "W_l", self_mask(v, false, "Mask ≡ 1"), labels({v.window})), "γ¹_l", "β¹_l"),
               normed(mlp_layer(v, "mlp1", "mlp2", "gate"), "γ²_l", "β²_l")});
  if (v.pre) rewrite(a, 10, norm_line(v, "ℓ", "X", "X", "γ_enc", "β_enc") + ";  X ← GELU(W_f X + b_f 1ᵀ)", {v.order});
  rewrite(a, 11, norm_line(v, "ℓ", "X", "X", "γ", "β"), labels({v.rms}));
  return_line(a, v, 12);
  parameter_header(a, v, c);
}

// Algorithm 8, EDTransformer.
void edtransformer(PseudoAlgorithm& a, const Variants& v, const ModelConfig& c) {
  embedding_line(a, v, 2, "ℓ_z", "z");
  layer_lines(a, v, 5, "ℓ_z", "Z",
              {normed(self_attention(v, "W^enc_l", self_mask(v, false, "Mask ≡ 1"), labels({v.window}), "bidirectional"),
                      "γ¹_l", "β¹_l"),
               normed(mlp_layer(v, "mlp1", "mlp2", "gate"), "γ²_l", "β²_l")});
  if (v.pre) rewrite(a, 9, "end;  " + norm_line(v, "ℓ_z", "Z", "Z", "γ_enc", "β_enc"), {v.order});
  embedding_line(a, v, 11, "ℓ_x", "x");
  // The relative bias (T5): bidirectional buckets in the encoder, causal ones in the decoder, no B
  // in the cross-attention (its queries and keys belong to different sequences).
  const std::string cross_note = v.relative ? "   [[no B: cross-attention]]" : "";
  const SubLayer cross{[=](const std::string& in) { return "MHAttention(" + in + ", Z | W^ed_l, Mask ≡ 1)" + cross_note; },
                       "γ⁴_l", "β⁴_l", labels({v.relative ? v.position : ""})};
  layer_lines(a, v, 14, "ℓ_x", "X",
              {normed(self_attention(v, "W^dec_l", self_mask(v, true, "Mask[t, t′] ≡ [[t ≤ t′]]"), labels({v.window}), "causal"),
                      "γ³_l", "β³_l"),
               cross,
               normed(mlp_layer(v, "mlp3", "mlp4", "gate2"), "γ⁵_l", "β⁵_l")});
  if (v.pre) rewrite(a, 20, "end;  " + norm_line(v, "ℓ_x", "X", "X", "γ_dec", "β_dec"), {v.order});
  return_line(a, v, 21);
  parameter_header(a, v, c);
}

}  // namespace

PseudoAlgorithm pseudocode_for(int alg, const ModelConfig& c, bool kv_cache) {
  const PseudoAlgorithm* paper = pseudocode(alg);
  if (!paper) return PseudoAlgorithm{0, "", "", {}, {}};
  PseudoAlgorithm a = *paper;
  const Variants v = variants_of(c);
  const int forward = forward_algorithm(c.arch);
  const std::string cache = "KV cache: only the new column is computed — not in the paper (encyclopedia article, seed 004)";
  switch (alg) {
    case 2:
      if (v.no_w_p) rewrite(a, 1, "(not called: no W_p under this variant)", {v.position});
      else rewrite(a, 1, "return e_p = W_p[:, ℓ],  W_p[2i−1, ℓ] = sin(ℓ / " + sinusoid_base(c) + "^{2i/d_e}),  W_p[2i, ℓ] = cos(ℓ / " +
                             sinusoid_base(c) + "^{2i/d_e})", labels({v.position}));
      break;
    case 4:
      if (v.rotary) {
        rewrite(a, 1, "Q ← RoPE_t(W_q X + b_q 1ᵀ)   [[column t rotated by t·θ_i; self-attention only]]", {v.position});
        rewrite(a, 2, "K ← RoPE_t(W_k Z + b_k 1ᵀ)   [[column t rotated by t·θ_i; self-attention only]]", {v.position});
        add_header(a, "RoPE: θ_i = " + number(c.rope_base) + "^{−2(i−1)/d_attn}, i = 1 … d_attn/2", v.position);
      }
      if (v.alibi) {
        rewrite(a, 6, "return Ṽ = V · softmax(S / √d_attn + m_h·B)   [[self-attention only]]", {v.position});
        add_header(a, "ALiBi: B[t_z, t_x] = −|t_z − t_x|, m_h = 2^{−8h/H}", v.position);
      }
      if (v.relative) {
        rewrite(a, 6, "return Ṽ = V · softmax(S / √d_attn + B)   [[self-attention only; B after the scaling]]", {v.position});
        add_header(a, "Relative bias: B[t_z, t_x] = W^l_rel[h, bucket(t_z − t_x)], " + std::to_string(c.relative_buckets) +
                          " buckets: exact for small |t_z − t_x|, logarithmic up to " + std::to_string(c.relative_max_distance) +
                          " (T5's bucket; causal masks use the distances t_x − t_z ≥ 0 only)",
                   v.position);
      }
      rewrite(a, 5, "∀t_z, t_x, if ¬Mask[t_z, t_x] then S[t_z, t_x] ← −∞   [[self-attention Mask ∧ [[|t_z − t_x| ≤ " +
                        std::to_string(v.w) + "]]]]",
              labels({v.window}));
      add_header(a, "Sliding window: a self-attention's Mask keeps |t_z − t_x| ≤ " + std::to_string(v.w) +
                        " (causal: t_x − w ≤ t_z ≤ t_x, w + 1 keys); cross-attention is not windowed",
                 v.window);
      break;
    case 5:
      rewrite(a, 2,
              "Y^h ← " + std::string(v.flash.empty() ? "Attention" : "FlashAttention") + "(X, Z | " +
                  (v.kv.empty() ? "W^h_qkv" : "W^h_q, b^h_q, W^{g(h)}_k, b^{g(h)}_k, W^{g(h)}_v, b^{g(h)}_v") + ", Mask" +
                  (v.flash.empty() ? ")" : "; B_r, B_c)   [[Algorithm 4-F]]"),
              labels({v.kv, v.flash}));
      add_header(a, "W_k, b_k, W_v, b_v have H_kv = " + std::to_string(c.kv_heads()) + " heads; g(h) = ⌊(h−1)·H_kv/H⌋ + 1", v.kv);
      add_header(a, "Mask: a self-attention's is windowed, Mask[t_z, t_x] ∧ [[|t_z − t_x| ≤ " + std::to_string(v.w) + "]]", v.window);
      break;
    case 6:
      rewrite(a, 1, "(no m: RMSNorm does not centre e)", labels({v.rms}));
      rewrite(a, 2, "v ← Σ_{i=1}^{d_e} e[i]² / d_e", labels({v.rms}));
      rewrite(a, 3, "return ê = e/√v ⊙ γ       (no m, no β)", labels({v.rms}));
      add_header(a, "Parameters: γ ∈ ℝ^{d_e} only (no β)", v.rms);
      break;
    case 7: rewrite(a, 1, "return p = softmax(W_eᵀ e)", labels({v.tied})); break;
    case 8:
      if (forward == 8) edtransformer(a, v, c);
      break;
    case 9:
      if (forward == 9) etransformer(a, v, c);
      break;
    case 10:
      if (forward == 10) dtransformer(a, v, c);
      break;
    case 13:
      if (forward == 10)
        rewrite(a, 5, "loss(θ) = −Σ_{t=max(1, p)}^{ℓ−1} log P(θ)[x_n[t+1], t]   [[no loss inside the prefix]]", labels({v.prefix}));
      break;
    case 14:
      if (kv_cache) {
        rewrite(a, 3, "P ← DTransformer(x | θ̂)   [[cached K, V: only column ℓ + i − 1 is computed]]", {cache});
        rewrite(a, 4, "p ← P[:, ℓ + i − 1]   [[the one column computed]]", {cache});
      }
      break;
    case 15:
      if (kv_cache) {
        rewrite(a, 4,
                "P ← EDTransformer(z, x̂ | θ̂)   [[cached K, V: only column length(x̂) is computed" +
                    std::string(v.relative ? "; its causal B[:, t_x] at t_x = length(x̂)" : "") + "]]",
                labels({cache, v.relative ? v.position : ""}));
        rewrite(a, 5, "p ← P[:, length(x̂)]   [[the one column computed]]", {cache});
      }
      break;
    default: break;
  }
  return a;
}

}  // namespace sf
