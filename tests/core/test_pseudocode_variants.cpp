// The variant pseudocode (core/pseudocode/variants): the paper's configuration gives exactly
// the paper's listing with no marks; each variant marks the lines docs/variants.md says it
// changes, and no others, with the texts written there.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "core/model/config.hpp"
#include "core/pseudocode/pseudocode.hpp"
#include "core/pseudocode/variants.hpp"

namespace test_pseudocode_variants {

namespace {

using sf::ModelConfig;
using sf::pseudocode_for;

ModelConfig config(const std::string& arch) {
  ModelConfig c;
  c.arch = arch;
  if (arch == "bert") c.d_f = c.d_e;
  return c;
}

// The numbered lines of `alg` that carry a variant mark, with their texts.
std::map<int, std::string> marked(int alg, const ModelConfig& c, bool kv_cache = false) {
  std::map<int, std::string> out;
  const sf::PseudoAlgorithm a = pseudocode_for(alg, c, kv_cache);
  for (const sf::PseudoLine& l : a.lines)
    if (!l.variant.empty()) out[l.number] = l.text;
  return out;
}

std::set<int> keys(const std::map<int, std::string>& m) {
  std::set<int> s;
  for (const auto& [k, v] : m) s.insert(k);
  return s;
}

// Every algorithm other than those listed is the paper's, unmarked.
void expect_only(const ModelConfig& c, const std::set<int>& changed) {
  for (int alg = 1; alg <= 15; ++alg) {
    const sf::PseudoAlgorithm a = pseudocode_for(alg, c);
    if (changed.count(alg)) continue;
    EXPECT_TRUE(marked(alg, c).empty()) << "Algorithm " << alg << " is marked for " << sf::variant_summary(c);
    EXPECT_TRUE(a.variant_header.empty()) << "Algorithm " << alg;
  }
}

TEST(PseudocodeVariants, ThePapersConfigurationIsThePapersListing) {
  for (const std::string arch : {"gpt", "bert", "ed"}) {
    const ModelConfig c = config(arch);
    ASSERT_EQ(sf::variant_summary(c), "");
    for (int alg = 1; alg <= 15; ++alg) {
      const sf::PseudoAlgorithm a = pseudocode_for(alg, c);
      const sf::PseudoAlgorithm* paper = sf::pseudocode(alg);
      ASSERT_NE(paper, nullptr);
      EXPECT_EQ(a.number, alg);
      EXPECT_EQ(a.signature, paper->signature);
      EXPECT_EQ(a.header, paper->header);
      EXPECT_TRUE(a.variant_header.empty());
      ASSERT_EQ(a.lines.size(), paper->lines.size());
      for (size_t i = 0; i < a.lines.size(); ++i) {
        EXPECT_EQ(a.lines[i].number, paper->lines[i].number);
        EXPECT_EQ(a.lines[i].text, paper->lines[i].text) << arch << " Algorithm " << alg;
        EXPECT_EQ(a.lines[i].indent, paper->lines[i].indent);
        EXPECT_EQ(a.lines[i].variant, "") << arch << " Algorithm " << alg << " line " << a.lines[i].number;
      }
    }
    // The KV cache changes only the inference algorithm.
    EXPECT_TRUE(marked(10, c, true).empty());
  }
  EXPECT_EQ(pseudocode_for(16, config("gpt")).number, 0);
  EXPECT_TRUE(pseudocode_for(0, config("gpt")).lines.empty());
}

TEST(PseudocodeVariants, PostLnGptReordersLinesFiveToEightAndDropsTheFinalNorm) {
  ModelConfig c = config("gpt");
  c.norm_position = sf::NormPosition::Post;
  const auto m = marked(10, c);
  EXPECT_EQ(keys(m), (std::set<int>{5, 6, 7, 8, 10}));
  EXPECT_EQ(m.at(5), "X ← X + MHAttention(X | W_l, Mask[t, t′] = [[t ≤ t′]])");
  EXPECT_EQ(m.at(6), "for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)");
  EXPECT_EQ(m.at(7), "X ← X + W^l_mlp2 GELU(W^l_mlp1 X + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ");
  EXPECT_EQ(m.at(8), "for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ²_l, β²_l)");
  EXPECT_NE(m.at(10).find("no final norm"), std::string::npos);
  const sf::PseudoAlgorithm a = pseudocode_for(10, c);
  EXPECT_NE(a.lines[4].variant.find("post-LN"), std::string::npos);
  EXPECT_NE(a.lines[4].variant.find("seed 004"), std::string::npos);
  ASSERT_EQ(a.variant_header.size(), 1u);
  EXPECT_NE(a.variant_header[0].text.find("no final γ, β"), std::string::npos);
  expect_only(c, {10});
}

TEST(PseudocodeVariants, PreLnBertAndEncoderDecoderNormBeforeEachSubLayerAndAtTheEnd) {
  ModelConfig b = config("bert");
  b.norm_position = sf::NormPosition::Pre;
  const auto mb = marked(9, b);
  EXPECT_EQ(keys(mb), (std::set<int>{5, 6, 7, 8, 10}));
  EXPECT_EQ(mb.at(5), "for t ∈ [ℓ]: X̃[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)");
  EXPECT_EQ(mb.at(6), "X ← X + MHAttention(X̃ | W_l, Mask ≡ 1)");
  EXPECT_EQ(mb.at(8), "X ← X + W^l_mlp2 GELU(W^l_mlp1 X̃ + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ");
  EXPECT_EQ(mb.at(10), "for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ_enc, β_enc);  X ← GELU(W_f X + b_f 1ᵀ)");
  expect_only(b, {9});

  ModelConfig e = config("ed");
  e.norm_position = sf::NormPosition::Pre;
  const auto me = marked(8, e);
  EXPECT_EQ(keys(me), (std::set<int>{5, 6, 7, 8, 9, 14, 15, 16, 17, 18, 19, 20}));
  EXPECT_EQ(me.at(14), "for t ∈ [ℓ_x]: X̃[:, t] ← layer_norm(X[:, t] | γ³_l, β³_l)");
  EXPECT_EQ(me.at(17), "X ← X + MHAttention(X̃, Z | W^ed_l, Mask ≡ 1)");
  EXPECT_EQ(me.at(19), "X ← X + W^l_mlp4 ReLU(W^l_mlp3 X̃ + b^l_mlp3 1ᵀ) + b^l_mlp4 1ᵀ");
  EXPECT_EQ(me.at(9), "end;  for t ∈ [ℓ_z]: Z[:, t] ← layer_norm(Z[:, t] | γ_enc, β_enc)");
  EXPECT_EQ(me.at(20), "end;  for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ_dec, β_dec)");
  expect_only(e, {8});
}

TEST(PseudocodeVariants, RmsNormRewritesAlgorithmSixAndEveryNormCall) {
  ModelConfig c = config("gpt");
  c.norm = sf::Norm::RmsNorm;
  const auto m6 = marked(6, c);
  EXPECT_EQ(keys(m6), (std::set<int>{1, 2, 3}));
  EXPECT_NE(m6.at(1).find("no m"), std::string::npos);
  EXPECT_EQ(m6.at(2), "v ← Σ_{i=1}^{d_e} e[i]² / d_e");
  EXPECT_EQ(m6.at(3).find("return ê = e/√v ⊙ γ"), 0u);
  const auto m10 = marked(10, c);
  EXPECT_EQ(keys(m10), (std::set<int>{5, 7, 10}));
  EXPECT_EQ(m10.at(5), "for t ∈ [ℓ]: X̃[:, t] ← rms_norm(X[:, t] | γ¹_l)");
  EXPECT_EQ(m10.at(10), "for t ∈ [ℓ]: X[:, t] ← rms_norm(X[:, t] | γ)");
  EXPECT_EQ(pseudocode_for(6, c).lines[1].variant, "RMSNorm — encyclopedia article (seed 004)");
  expect_only(c, {6, 10});
}

TEST(PseudocodeVariants, PositionsRewriteTheEmbeddingLineAndAttention) {
  ModelConfig s = config("gpt");
  s.position = sf::Position::Sinusoidal;
  s.position_base = 10000;
  EXPECT_EQ(keys(marked(10, s)), (std::set<int>{2}));
  EXPECT_NE(marked(2, s).at(1).find("sin(ℓ / 10000^{2i/d_e})"), std::string::npos);
  expect_only(s, {2, 10});
  s.position_base = 0;
  EXPECT_NE(marked(2, s).at(1).find("sin(ℓ / ℓ_max^{2i/d_e})"), std::string::npos);

  ModelConfig r = config("gpt");
  r.position = sf::Position::Rope;
  const auto m4 = marked(4, r);
  EXPECT_EQ(keys(m4), (std::set<int>{1, 2}));
  EXPECT_EQ(m4.at(1).find("Q ← RoPE_t(W_q X + b_q 1ᵀ)"), 0u);
  EXPECT_EQ(m4.at(2).find("K ← RoPE_t(W_k Z + b_k 1ᵀ)"), 0u);
  const auto m10 = marked(10, r);
  EXPECT_EQ(keys(m10), (std::set<int>{2, 6}));
  EXPECT_EQ(m10.at(2).find("for t ∈ [ℓ]: e_t ← W_e[:, x[t]]   [[no W_p"), 0u);
  expect_only(r, {2, 4, 10});

  ModelConfig a = config("ed");
  a.position = sf::Position::Alibi;
  const auto a4 = marked(4, a);
  EXPECT_EQ(keys(a4), (std::set<int>{6}));
  EXPECT_EQ(a4.at(6).find("return Ṽ = V · softmax(S / √d_attn + m_h·B)"), 0u);
  // Both embeddings and both self-attentions; cross-attention (line 16) has no bias.
  EXPECT_EQ(keys(marked(8, a)), (std::set<int>{2, 5, 11, 14}));
  expect_only(a, {2, 4, 8});
}

TEST(PseudocodeVariants, ActivationsRewriteTheMlpLines) {
  ModelConfig g = config("gpt");
  g.activation = sf::Activation::SwiGLU;
  const auto m = marked(10, g);
  EXPECT_EQ(keys(m), (std::set<int>{8}));
  EXPECT_EQ(m.at(8), "X ← X + W^l_mlp2 (SiLU(W^l_gate X̃ + b^l_gate 1ᵀ) ⊙ (W^l_mlp1 X̃ + b^l_mlp1 1ᵀ)) + b^l_mlp2 1ᵀ");
  expect_only(g, {10});

  ModelConfig e = config("ed");
  e.activation = sf::Activation::GELUTanh;
  const auto me = marked(8, e);
  EXPECT_EQ(keys(me), (std::set<int>{7, 18}));
  EXPECT_EQ(me.at(18), "X ← X + W^l_mlp4 GELU_tanh(W^l_mlp3 X + b^l_mlp3 1ᵀ) + b^l_mlp4 1ᵀ");
  EXPECT_EQ(pseudocode_for(8, e).lines[7].variant, "GELU, tanh approximation — GPT-2");

  ModelConfig b = config("bert");
  b.activation = sf::Activation::ReLU;
  EXPECT_EQ(keys(marked(9, b)), (std::set<int>{7}));  // line 10 keeps the paper's GELU
}

TEST(PseudocodeVariants, TiedUnembeddingRewritesTheReturnLines) {
  const std::tuple<const char*, int, int> cases[] = {{"gpt", 10, 11}, {"bert", 9, 12}, {"ed", 8, 21}};
  for (const auto& [arch, alg, line] : cases) {
    ModelConfig c = config(arch);
    c.tied_unembedding = true;
    const auto m = marked(alg, c);
    EXPECT_EQ(keys(m), (std::set<int>{line})) << arch;
    EXPECT_EQ(m.at(line), "return P = softmax(W_eᵀ X)");
    EXPECT_EQ(marked(7, c).at(1), "return p = softmax(W_eᵀ e)");
    const sf::PseudoAlgorithm a = pseudocode_for(alg, c);
    ASSERT_EQ(a.variant_header.size(), 1u);
    EXPECT_NE(a.variant_header[0].variant.find("seed 001"), std::string::npos);
    expect_only(c, {7, alg});
  }
}

TEST(PseudocodeVariants, SharedKeyValueHeadsAndThePrefixMask) {
  ModelConfig c = config("gpt");
  c.H_kv = 1;
  const auto m5 = marked(5, c);
  EXPECT_EQ(keys(m5), (std::set<int>{2}));
  EXPECT_NE(m5.at(2).find("W^{g(h)}_k"), std::string::npos);
  EXPECT_NE(pseudocode_for(5, c).lines[1].variant.find("multi-query"), std::string::npos);
  EXPECT_TRUE(marked(10, c).empty());
  EXPECT_EQ(pseudocode_for(10, c).variant_header.size(), 1u);
  expect_only(c, {5, 10});

  ModelConfig p = config("gpt");
  p.mask = sf::MaskKind::Prefix;
  const auto m10 = marked(10, p);
  EXPECT_EQ(keys(m10), (std::set<int>{6}));
  EXPECT_EQ(m10.at(6), "X ← X + MHAttention(X̃ | W_l, Mask[t, t′] = [[t ≤ max(t′, p)]])");
  EXPECT_EQ(keys(marked(13, p)), (std::set<int>{5}));
  expect_only(p, {10, 13});
}

TEST(PseudocodeVariants, KvCacheMarksTheInferenceLines) {
  const auto m14 = marked(14, config("gpt"), true);
  EXPECT_EQ(keys(m14), (std::set<int>{3, 4}));
  EXPECT_EQ(pseudocode_for(14, config("gpt"), true).lines[2].variant.find("KV cache: only the new column is computed — not in the paper"),
            0u);
  EXPECT_EQ(keys(marked(15, config("ed"), true)), (std::set<int>{4, 5}));
  EXPECT_TRUE(marked(14, config("gpt"), false).empty());
}

TEST(PseudocodeVariants, VariantsCombineOnOneLine) {
  ModelConfig c = config("gpt");
  c.norm_position = sf::NormPosition::Post;
  c.norm = sf::Norm::RmsNorm;
  c.activation = sf::Activation::SwiGLU;
  c.mask = sf::MaskKind::Prefix;
  const sf::PseudoAlgorithm a = pseudocode_for(10, c);
  const auto m = marked(10, c);
  EXPECT_EQ(m.at(5), "X ← X + MHAttention(X | W_l, Mask[t, t′] = [[t ≤ max(t′, p)]])");
  EXPECT_EQ(m.at(8), "for t ∈ [ℓ]: X[:, t] ← rms_norm(X[:, t] | γ²_l)");
  EXPECT_NE(m.at(7).find("SiLU(W^l_gate X + b^l_gate 1ᵀ)"), std::string::npos);
  const std::string& why8 = a.lines[7].variant;
  EXPECT_NE(why8.find("post-LN"), std::string::npos);
  EXPECT_NE(why8.find("RMSNorm"), std::string::npos);
  EXPECT_EQ(a.variant_header.size(), 3u);  // no β, no final γ/β, W_gate
}

}  // namespace

}  // namespace test_pseudocode_variants
