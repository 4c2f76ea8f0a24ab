// The variants' labels shared by the forward and backward listings (see variant_labels.hpp).
#include "core/pseudocode/variant_labels.hpp"

#include <cstdio>

#include "core/arch/architecture.hpp"

namespace sf::pseudo {

namespace {
// The ecosystem extras (issue 11): not in the paper; BERT checkpoints have them.
const std::string kBert = " — not in the paper: BERT (Devlin et al.), Hugging Face checkpoint";
}  // namespace

// 10000 → "10000", 500.5 → "500.5".
std::string number(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.10g", x);
  return b;
}

std::string sinusoid_base(const ModelConfig& c) { return c.position_base > 0 ? number(c.position_base) : "ℓ_max"; }

Variants variants_of(const ModelConfig& c) {
  Variants v;
  const Architecture* a = find_architecture(c.arch);
  const NormPosition paper_pos = a ? a->paper_norm_position() : c.norm_pos();
  const Activation paper_act = a ? a->paper_activation() : c.act();
  v.pre = c.norm_pos() == NormPosition::Pre;
  if (c.norm_pos() != paper_pos) v.order = (v.pre ? "pre-LN" : "post-LN (GPT-1)") + kSeed004;
  if (c.norm == Norm::RmsNorm) v.rms = "RMSNorm" + kSeed004;
  switch (c.position) {
    case Position::Learned: break;
    case Position::Sinusoidal: v.position = "sinusoidal W_p (base " + sinusoid_base(c) + ", the paper's §5)" + kSeed004; break;
    case Position::Rope: v.position = "RoPE" + kSeed004, v.rotary = true; break;
    case Position::Alibi: v.position = "ALiBi" + kSeed004, v.alibi = true; break;
    case Position::None: v.position = "no positions: the causal mask alone tells them apart" + kSeed004; break;
    case Position::Relative:
      v.position = "relative position bias (T5, Raffel et al.), not in the paper" + kSeed004, v.relative = true;
      break;
  }
  v.no_w_p = c.position != Position::Learned && c.position != Position::Sinusoidal;
  const Activation act = c.act();
  v.swiglu = act == Activation::SwiGLU;
  v.act_name = act == Activation::ReLU ? "ReLU" : act == Activation::GELUTanh ? "GELU_tanh" : "GELU";
  if (act != paper_act) {
    switch (act) {
      case Activation::GELU: v.activation = "GELU, eq. (5) — the paper's Algorithms 9 and 10"; break;
      case Activation::GELUTanh: v.activation = "GELU, tanh approximation — GPT-2"; break;
      case Activation::ReLU: v.activation = "ReLU — the paper's Algorithm 8"; break;
      case Activation::SwiGLU: v.activation = "SwiGLU" + kSeed004; break;
    }
  }
  if (c.tied_unembedding) v.tied = "tied unembedding W_u = W_eᵀ — Dinan–Yaida–Zhang (seed 001)";
  if (c.kv_heads() != c.H)
    v.kv = (c.kv_heads() == 1 ? "multi-query attention (H_kv = 1)" : "grouped-query attention (H_kv = " + std::to_string(c.kv_heads()) + ")") +
           kSeed004;
  if (c.attention == AttentionKind::Flash)
    v.flash = "FlashAttention, Algorithm 4-F (B_r = " + std::to_string(c.block_r) + ", B_c = " + std::to_string(c.block_c) +
              "), not in the paper: Dao et al. 2022" + kSeed004;
  if (c.mask == MaskKind::Prefix) v.prefix = "prefix-LM mask at \"" + c.prefix_separator + "\"" + kSeed004;
  if (c.window > 0) {
    v.w = c.window;
    v.window = "sliding-window attention (w = " + std::to_string(c.window) + "), not in the paper" + kSeed004;
  }
  if (c.token_types > 0) v.token_type = "token-type embedding W_s[:, 1] (segment 1)" + kBert;
  if (c.embedding_norm) v.emb_norm = "embedding layer norm" + kBert;
  if (c.unembedding_bias) v.bias = "bias b_u on W_u" + kBert;
  return v;
}

Labels labels(std::initializer_list<std::string> all) {
  Labels out;
  for (const std::string& s : all)
    if (!s.empty()) out.push_back(s);
  return out;
}

void rewrite(PseudoAlgorithm& a, int n, std::string text, const Labels& why) {
  if (why.empty()) return;
  std::string label = joined(why);
  for (PseudoLine& l : a.lines)
    if (l.number == n) {
      l.text = std::move(text);
      l.variant = std::move(label);
      return;
    }
}

void add_header(PseudoAlgorithm& a, const std::string& text, const std::string& why) {
  if (!why.empty()) a.variant_header.push_back({0, text, 0, why});
}

std::string joined(const Labels& why) {
  std::string label;
  for (const std::string& w : why) label += (label.empty() ? "" : "; ") + w;
  return label;
}

int forward_algorithm(const std::string& arch) { return arch == "gpt" ? 10 : arch == "bert" ? 9 : arch == "ed" ? 8 : 0; }

}  // namespace sf::pseudo
