// Stepformer's backward listings (core/pseudocode/backward_listings.hpp; not in the paper): every
// listing is labelled so, each of its lines is the adjoint of a line of the forward algorithm and has
// a tooltip and an entry in each notation, the variants rewrite the lines they change, and the
// listings' formulas compute what the batched backward of training computes.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "core/backprop/adjoints.hpp"
#include "core/backprop/traced_backward.hpp"
#include "core/gradients/grad.hpp"
#include "core/gradients/grad_edtransformer.hpp"
#include "core/gradients/grad_etransformer.hpp"
#include "core/gradients/sequence_gradient.hpp"
#include "core/pseudocode/backward_listings.hpp"
#include "core/pseudocode/notations.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace test_backward_listings {

namespace {

using namespace sf;

using MatD = Mat<double>;
using VecD = Vec<double>;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Every text of a listing's line: its statement and its sub-steps.
std::string all_text(const PseudoLine& l) {
  std::string s = l.text;
  for (const std::string& step : l.steps) s += "\n" + step;
  return s;
}

ModelConfig config(const std::string& arch) {
  ModelConfig c;
  c.arch = arch;
  return c;
}

// The variant mixes the issue names, and one with every ecosystem extra.
std::vector<ModelConfig> variant_mixes() {
  std::vector<ModelConfig> out;
  ModelConfig a = config("gpt");  // RMSNorm + RoPE + SwiGLU + tied + H_kv = 1
  a.norm = Norm::RmsNorm, a.position = Position::Rope, a.activation = Activation::SwiGLU, a.tied_unembedding = true, a.H_kv = 1;
  out.push_back(a);
  ModelConfig b = config("gpt");  // post-LN + ALiBi + gelu_tanh, prefix mask
  b.norm_position = NormPosition::Post, b.position = Position::Alibi, b.activation = Activation::GELUTanh, b.mask = MaskKind::Prefix;
  out.push_back(b);
  ModelConfig c = config("bert");  // pre-LN BERT with the checkpoints' extras, ReLU
  c.norm_position = NormPosition::Pre, c.embedding_norm = true, c.token_types = 2, c.unembedding_bias = true, c.activation = Activation::ReLU;
  out.push_back(c);
  ModelConfig d = config("ed");  // an encoder-decoder with RoPE, sinusoidal in another
  d.position = Position::Rope, d.norm_position = NormPosition::Pre;
  out.push_back(d);
  ModelConfig e = config("gpt");
  e.position = Position::Sinusoidal;
  out.push_back(e);
  return out;
}

// The algorithms with a listing, with a configuration of their architecture.
std::vector<std::pair<int, ModelConfig>> listings_for(const std::vector<ModelConfig>& configs) {
  std::vector<std::pair<int, ModelConfig>> out;
  for (const ModelConfig& c : configs)
    for (int alg = 1; alg <= 15; ++alg)
      if (has_backward_listing(alg)) out.push_back({alg, c});
  return out;
}

std::vector<ModelConfig> paper_and_variants() {
  std::vector<ModelConfig> all{config("gpt"), config("bert"), config("ed")};
  for (const ModelConfig& c : variant_mixes()) all.push_back(c);
  return all;
}

TEST(BackwardListings, TheListedAlgorithmsAreTheOnesWithParametersOrAGradient) {
  std::set<int> listed;
  for (int alg = 0; alg <= 110; ++alg)
    if (has_backward_listing(alg)) listed.insert(alg);
  EXPECT_EQ(listed, (std::set<int>{1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, algs::random_feature_attention}));
  EXPECT_EQ(backward_pseudocode(3).number, 0);
  EXPECT_TRUE(backward_pseudocode(14).lines.empty());
}

TEST(BackwardListings, EveryListingIsLabelledNotInThePaper) {
  for (const auto& [alg, c] : listings_for(paper_and_variants())) {
    const PseudoAlgorithm a = backward_pseudocode_for(alg, c);
    ASSERT_EQ(a.number, alg);
    ASSERT_FALSE(a.header.empty());
    EXPECT_TRUE(contains(a.header.front(), kBackwardListingLabel)) << "Algorithm " << alg;
    EXPECT_TRUE(contains(a.name, "adjoint") || contains(a.name, "∇loss")) << a.name;
  }
}

TEST(BackwardListings, EveryLineIsTheAdjointOfAForwardLineWithATooltipAndNotations) {
  for (const auto& [alg, c] : listings_for(paper_and_variants())) {
    const PseudoAlgorithm a = backward_pseudocode_for(alg, c);
    std::set<int> numbers;
    for (const PseudoLine& l : a.lines) {
      if (l.number == 0) continue;  // a comment
      const std::string where = c.arch + ": Algorithm " + std::to_string(alg) + ", " + adjoint_name(l.number);
      EXPECT_TRUE(numbers.insert(l.number).second) << where << " is listed twice";
      ASSERT_NE(pseudocode_line(alg, l.number), nullptr) << where << ": the forward has no such line";
      EXPECT_FALSE(l.text.empty()) << where;
      EXPECT_GT(std::string(explain_adjoint(alg, l.number, c)).size(), 30u) << where;
      const LineRef r{alg, l.number, Pass::Backward};
      ASSERT_NE(notation_entry(r), nullptr) << where;
      for (Notation n : {Notation::Carpenter, Notation::DinanYaidaZhang}) {
        const NotationText nt = notation_text(n, r);
        EXPECT_NE(nt.text.empty(), nt.no_counterpart.empty()) << where << " in " << to_string(n);
      }
    }
  }
}

TEST(BackwardListings, LinesRunInTheReverseOfTheForwardOrder) {
  // At each depth of nesting the numbers decrease: a reversed loop's header (the adjoint of the
  // forward's "for") comes first, then its body's adjoints, last line first.
  for (const auto& [alg, c] : listings_for(paper_and_variants())) {
    std::map<int, int> previous;  // indent → the last number seen there
    for (const PseudoLine& l : backward_pseudocode_for(alg, c).lines) {
      if (l.number == 0) continue;
      auto [it, first] = previous.try_emplace(l.indent, l.number);
      if (!first) EXPECT_LT(l.number, it->second) << "Algorithm " << alg << " (" << c.arch << ")";
      it->second = l.number;
    }
  }
  EXPECT_EQ(backward_line(10, 4)->text, "for l = L, L − 1, …, 1 do");
  EXPECT_EQ(backward_line(10, 9), nullptr);  // "end" has no adjoint
  EXPECT_EQ(backward_line(10, 8)->indent, 1);
  EXPECT_TRUE(contains(backward_line(5, 1)->text, "H, H − 1, …, 1"));
  EXPECT_EQ(backward_line(5, 2)->indent, 1);
  EXPECT_EQ(backward_line(10, 1), nullptr);  // ℓ ← length(x) has nothing to differentiate
}

TEST(BackwardListings, AttentionListsTheSoftmaxJacobianAsSubSteps) {
  const PseudoLine* six = backward_line(4, 6);
  ASSERT_NE(six, nullptr);
  ASSERT_EQ(six->steps.size(), 3u);
  EXPECT_TRUE(contains(six->steps[0], "∇V ← ∇Ṽ Aᵀ"));
  EXPECT_TRUE(contains(six->steps[1], "∇A ← Vᵀ ∇Ṽ"));
  EXPECT_TRUE(contains(six->steps[2], "∇S ← (A ⊙ (∇A − 1 (1ᵀ (A ⊙ ∇A)))) / √d_attn"));
  EXPECT_TRUE(contains(backward_line(4, 5)->text, "∇S[t_z, t_x] ← 0"));
  EXPECT_TRUE(contains(backward_line(4, 4)->text, "∇Q ← K ∇S"));
  EXPECT_TRUE(contains(backward_line(4, 4)->text, "∇K ← Q ∇Sᵀ"));
  // Layer norm's adjoint, per column: ∇γ, ∇β, ∇e, ∇m, ∇v at line 3, then lines 2 and 1.
  const PseudoLine* three = backward_line(6, 3);
  ASSERT_EQ(three->steps.size(), 5u);
  const std::vector<std::string> order{"∇γ ←", "∇β ←", "∇e ←", "∇v ←", "∇m ←"};  // as the traced backward runs them
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(three->steps[i].rfind(order[i], 0), 0u) << three->steps[i];
  EXPECT_TRUE(contains(backward_line(6, 2)->text, "∇e ← ∇e + 2 ∇v (e − m) / d_e"));
  EXPECT_TRUE(contains(backward_line(6, 1)->text, "∇e ← ∇e + ∇m 1 / d_e"));
}

TEST(BackwardListings, VariantsRewriteTheLinesTheyChange) {
  const std::vector<ModelConfig> mixes = variant_mixes();
  const ModelConfig& rms_rope = mixes[0];
  // RMSNorm: no m, no β.
  const PseudoAlgorithm ln = backward_pseudocode_for(6, rms_rope);
  EXPECT_FALSE(adjoint_line(ln, 3)->variant.empty());
  EXPECT_FALSE(contains(all_text(*adjoint_line(ln, 3)), "∇β"));
  EXPECT_TRUE(contains(adjoint_line(ln, 1)->text, "no m"));
  // RoPE: ∇Q and ∇K rotated back first.
  const PseudoAlgorithm att = backward_pseudocode_for(4, rms_rope);
  EXPECT_TRUE(contains(all_text(*adjoint_line(att, 1)), "RoPE_t⁻¹(∇Q)"));
  EXPECT_TRUE(contains(all_text(*adjoint_line(att, 2)), "RoPE_t⁻¹(∇K)"));
  EXPECT_TRUE(backward_line(4, 1)->steps.empty());  // the paper's has none
  // SwiGLU: the gate's gradients; tied: W_e collects the unembedding's.
  const PseudoAlgorithm gpt = backward_pseudocode_for(10, rms_rope);
  EXPECT_TRUE(contains(all_text(*adjoint_line(gpt, 8)), "∇W^l_gate"));
  EXPECT_TRUE(contains(all_text(*adjoint_line(backward_pseudocode_for(7, rms_rope), 1)), "∇e ← W_e ∇(W_u e)"));
  EXPECT_TRUE(contains(adjoint_line(gpt, 11)->text, "∇W_u ← ∇(W_eᵀ X) Xᵀ;   ∇W_e ← ∇W_e + ∇W_uᵀ"));
  // H_kv = 1: the shared key and value heads' gradients add up.
  const PseudoAlgorithm mh = backward_pseudocode_for(5, rms_rope);
  const PseudoLine* heads = adjoint_line(mh, 2);
  EXPECT_FALSE(heads->variant.empty());
  EXPECT_TRUE(contains(heads->text, "W^{g(h)}_k"));
  // post-LN GPT: no final norm, the sub-layer's norm is line 6 and the attention line 5.
  const ModelConfig& post = mixes[1];
  const PseudoAlgorithm gpt1 = backward_pseudocode_for(10, post);
  EXPECT_TRUE(contains(adjoint_line(gpt1, 10)->text, "no final norm"));
  EXPECT_TRUE(contains(adjoint_line(gpt1, 6)->text, "layer_norm adjoint"));
  EXPECT_TRUE(contains(adjoint_line(gpt1, 5)->text, "MHAttention adjoint"));
  EXPECT_TRUE(contains(explain_adjoint(10, 6, post), "overwrote X"));
  EXPECT_TRUE(contains(explain_adjoint(10, 6, config("gpt")), "residual passes ∇X on"));
  EXPECT_TRUE(contains(adjoint_line(gpt1, 8)->text, "layer_norm adjoint"));
  EXPECT_TRUE(contains(all_text(*adjoint_line(gpt1, 7)), "GELU_tanh′"));
  EXPECT_TRUE(contains(adjoint_line(backward_pseudocode_for(4, post), 6)->text, "constant"));
  EXPECT_TRUE(contains(adjoint_line(gpt1, 5)->text, "max(t′, p)"));
  EXPECT_TRUE(contains(adjoint_line(backward_pseudocode_for(13, post), 5)->text, "max(1, p)"));
  // BERT's extras: the embedding norm and W_s before W_e; b_u in the unembedding.
  const ModelConfig& bert = mixes[2];
  const PseudoAlgorithm bert_listing = backward_pseudocode_for(9, bert);
  const PseudoLine* embed = adjoint_line(bert_listing, 2);
  EXPECT_TRUE(contains(all_text(*embed), "γ_emb"));
  EXPECT_TRUE(contains(all_text(*embed), "∇W_s[:, 1]"));
  EXPECT_TRUE(contains(all_text(*adjoint_line(backward_pseudocode_for(7, bert), 1)), "∇(W_u e + b_u) ← p ⊙"));
  EXPECT_TRUE(contains(adjoint_line(backward_pseudocode_for(9, bert), 12)->text, "∇b_u ← ∇(W_u X + b_u 1ᵀ) 1"));
  EXPECT_TRUE(contains(all_text(*adjoint_line(bert_listing, 8)), "ReLU′"));  // pre-LN: line 7 is the norm, 8 the MLP
  EXPECT_TRUE(contains(adjoint_line(bert_listing, 7)->text, "layer_norm adjoint"));
  EXPECT_TRUE(contains(all_text(*adjoint_line(backward_pseudocode_for(9, bert), 10)), "γ_enc"));
  // A pre-LN encoder-decoder: each stack's final norm's adjoint runs before its layers'.
  const PseudoAlgorithm ed = backward_pseudocode_for(8, mixes[3]);
  EXPECT_TRUE(contains(adjoint_line(ed, 20)->text, "γ_dec"));
  EXPECT_TRUE(contains(adjoint_line(ed, 9)->text, "γ_enc"));
  // Sinusoidal positions: no ∇W_p.
  EXPECT_TRUE(contains(adjoint_line(backward_pseudocode_for(2, mixes[4]), 1)->text, "no gradient"));
  EXPECT_TRUE(contains(adjoint_line(backward_pseudocode_for(10, mixes[4]), 2)->text, "no ∇W_p"));
  // The paper's configuration marks nothing.
  for (int alg : {1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
    for (const PseudoLine& l : backward_pseudocode(alg).lines) EXPECT_TRUE(l.variant.empty()) << alg << ":" << l.number;
}

TEST(BackwardListings, TheEncoderDecoderSendsGradientIntoZAndBackThroughTheEncoder) {
  const PseudoAlgorithm ed = backward_pseudocode(8);
  EXPECT_TRUE(contains(adjoint_line(ed, 16)->text, "∇Z ← ∇Z + ∇Z^{ed}"));
  // The decoder's lines run before the encoder's.
  size_t cross = 0, encoder = 0;
  for (size_t i = 0; i < ed.lines.size(); ++i) {
    if (ed.lines[i].number == 16) cross = i;
    if (ed.lines[i].number == 5) encoder = i;
  }
  EXPECT_LT(cross, encoder);
  EXPECT_TRUE(contains(backward_line(12, 9)->text, "T̃"));
}

TEST(BackwardListings, NotationsOfBackwardLines) {
  const LineRef six{4, 6, Pass::Backward};
  EXPECT_TRUE(contains(notation_text(Notation::PhuongHutter, six).text, "∇A ← Vᵀ ∇Ṽ"));
  EXPECT_TRUE(contains(notation_text(Notation::Carpenter, six).no_counterpart, "automatic differentiation"));
  EXPECT_TRUE(contains(notation_text(Notation::DinanYaidaZhang, six).text, "∂ℒ/∂Ω̃^h_{α;tt′}"));
  EXPECT_TRUE(contains(notation_text(Notation::DinanYaidaZhang, {8, 16, Pass::Backward}).no_counterpart, "cross-attention"));
  // The forward line keeps its own entry.
  EXPECT_EQ(notation_text(Notation::PhuongHutter, LineRef{4, 6}).text, pseudocode_line(4, 6)->text);
  EXPECT_TRUE(contains(notation_text(Notation::Carpenter, LineRef{4, 9, Pass::Backward}).no_counterpart, "no adjoint of line 9"));
}

// Issue 24: the DYZ entries of the transformer-level lines followed the paper's norm order whatever
// the model's. For the open model they follow its own: under post-LN, GPT's line 5 is the attention
// added to the residual (not the norm's share), line 6 the norm, and line 10 (no final norm) has no
// counterpart; under pre-LN, BERT's and the encoder-decoder's lines swap the other way.
TEST(BackwardListings, DyzNotationFollowsTheModelsNormOrder) {
  auto dyz = [](int alg, int line, const ModelConfig& c) {
    return notation_text(Notation::DinanYaidaZhang, LineRef{alg, line, Pass::Backward}, c);
  };
  ModelConfig post_gpt = config("gpt"), pre_bert = config("bert"), pre_ed = config("ed");
  post_gpt.norm_position = NormPosition::Post;
  pre_bert.norm_position = pre_ed.norm_position = NormPosition::Pre;
  for (const auto& [alg, paper, variant] : std::vector<std::tuple<int, ModelConfig, ModelConfig>>{
           {10, config("gpt"), post_gpt}, {9, config("bert"), pre_bert}, {8, config("ed"), pre_ed}}) {
    const bool paper_pre = alg == 10;
    for (const PseudoLine& l : backward_pseudocode_for(alg, paper).lines) {
      if (l.number == 0) continue;
      // The paper's configuration gives the table's entry, unchanged.
      const NotationText table = notation_text(Notation::DinanYaidaZhang, LineRef{alg, l.number, Pass::Backward});
      EXPECT_EQ(dyz(alg, l.number, paper).text, table.text) << "Algorithm " << alg << ", " << adjoint_name(l.number);
    }
    // Line 5 is a norm in one order and the self-attention in the other.
    const std::string norm_share = "∂ℒ/∂z^{(ℓ)}_{α;t;j} += ", attention_added = "∂ℒ/∂z^{(ℓ)}_{α;t;i} = ∂ℒ/∂z^{(ℓ+1)}_{α;t;i} + Σ_{h=1}^{H}";
    const std::string pre5 = dyz(alg, 5, paper_pre ? paper : variant).text, post5 = dyz(alg, 5, paper_pre ? variant : paper).text;
    EXPECT_NE(pre5, post5) << "Algorithm " << alg;
    EXPECT_TRUE(contains(pre5, norm_share) && contains(pre5, "pre-LN")) << pre5;
    EXPECT_TRUE(contains(post5, attention_added) && contains(post5, "post-LN")) << post5;
    // Line 6 the other way round: the heads reading the norm's output s, or the norm replacing ∂ℒ/∂z.
    const std::string pre6 = dyz(alg, 6, paper_pre ? paper : variant).text, post6 = dyz(alg, 6, paper_pre ? variant : paper).text;
    EXPECT_TRUE(contains(pre6, "∂ℒ/∂s^{(ℓ)}_{α;t;i} = Σ_{h=1}^{H}")) << pre6;
    EXPECT_TRUE(contains(post6, "∂ℒ/∂z_{α;t;j} = (1/√(σ²_{α;t} + ε))") && contains(post6, "replaces")) << post6;
    // The MLP (line 8 pre-LN, 7 post-LN) reads the norm's output s, or z itself.
    EXPECT_TRUE(contains(dyz(alg, 8, paper_pre ? paper : variant).text, "∂ℒ/∂w_{α;t;j} s_{α;t;i}"));
    EXPECT_TRUE(contains(dyz(alg, 7, paper_pre ? variant : paper).text, "∂ℒ/∂w_{α;t;j} z_{α;t;i}"));
    // Every line of the variant's own listing still has a text or says why not.
    for (const PseudoLine& l : backward_pseudocode_for(alg, variant).lines) {
      if (l.number == 0) continue;
      const NotationText nt = dyz(alg, l.number, variant);
      EXPECT_NE(nt.text.empty(), nt.no_counterpart.empty()) << "Algorithm " << alg << ", " << adjoint_name(l.number);
    }
  }
  // A stack's final norm: post-LN GPT has none; pre-LN encoder-decoder's decoder has one.
  EXPECT_TRUE(contains(dyz(10, 10, post_gpt).no_counterpart, "post-LN has no final norm")) << dyz(10, 10, post_gpt).text;
  EXPECT_TRUE(contains(dyz(10, 10, config("gpt")).text, "Algorithm 6's adjoint"));
  EXPECT_TRUE(contains(dyz(8, 20, pre_ed).text, "the stack's final norm"));
  EXPECT_FALSE(dyz(8, 20, config("ed")).no_counterpart.empty());
  // The decoder's cross-attention (line 16 post-LN, 17 pre-LN) has no counterpart either way.
  EXPECT_TRUE(contains(dyz(8, 16, config("ed")).no_counterpart, "cross-attention"));
  EXPECT_TRUE(contains(dyz(8, 17, pre_ed).no_counterpart, "cross-attention"));
  // A model of another architecture sees a listing in the paper's order (backward_pseudocode_for).
  EXPECT_EQ(dyz(9, 5, post_gpt).text, dyz(9, 5, config("bert")).text);
}

// ---- every line the traced backward emits is in its listing ----

ModelConfig small(const std::string& arch) {
  ModelConfig c = config(arch);
  c.L = c.L_enc = c.L_dec = 2;
  c.H = 2;
  c.d_e = 8;
  c.d_attn = c.d_mid = 4;
  c.d_mlp = 16;
  c.d_f = 8;
  c.l_max = 12;
  c.vocab = {"a", "b", "c", "="};
  return c;
}

// The traced backward of one sequence (core/backprop): GPT through its entry point, BERT and the
// encoder-decoder through their adjoint frames on their batched forward caches (B = 1).
Trace traced(const ModelConfig& c) {
  const Model m = Model::initialised(c, 3);
  std::vector<double> theta(m.theta.begin(), m.theta.end()), grad(m.table.total(), 0.0);
  const Tokens x{c.bos_token(), 1, 2, 1, 4, 3}, z{c.bos_token(), 3, 1, 3};
  Trace t;
  Tracer tr(t);
  const TraceBackward backward(&tr);
  ResidualGradients<double> kept;
  if (c.arch == "gpt") {
    traced_backward<double>(m, next_token_batch({}, x), &tr);
  } else if (c.arch == "bert") {
    const BertW<const double> W = bind_bert<const double>(m.table, theta.data());
    BertW<double> dW = bind_bert<double>(m.table, grad.data());
    BertCache<double> cache;
    etransformer_forward<double>(c, W, masked_batch(x, {2, 5}, c.mask_token()), 1.0, cache);
    adjoint_etransformer<double>(c, W, cache, dW, &kept, &tr);
  } else {
    const EdW<const double> W = bind_ed<const double>(m.table, theta.data());
    EdW<double> dW = bind_ed<double>(m.table, grad.data());
    EdCache<double> cache;
    edtransformer_forward<double>(c, W, next_token_batch(z, x), 1.0, cache);
    adjoint_edtransformer<double>(c, W, cache, dW, &kept, &tr);
  }
  return t;
}

// The configurations traced: the three architectures as the paper has them, and the variant
// mixes of the issue, small.
std::vector<ModelConfig> traced_configs() {
  std::vector<ModelConfig> out{small("gpt"), small("bert"), small("ed")};
  for (const ModelConfig& v : variant_mixes()) {
    ModelConfig c = small(v.arch);
    c.norm = v.norm, c.position = v.position, c.activation = v.activation, c.tied_unembedding = v.tied_unembedding;
    c.H_kv = v.H_kv, c.norm_position = v.norm_position, c.mask = v.mask, c.embedding_norm = v.embedding_norm;
    c.token_types = v.token_types, c.unembedding_bias = v.unembedding_bias;
    out.push_back(c);
  }
  return out;
}

TEST(BackwardListings, EveryLineTheTracedBackwardEmitsIsListedExplainedAndNotated) {
  std::set<std::pair<int, int>> reached;
  for (const ModelConfig& c : traced_configs()) {
    const Trace t = traced(c);
    ASSERT_GT(t.size(), 50u) << c.arch;
    for (size_t k = 0; k < t.size(); ++k) {
      const Event& e = t.events[k];
      ASSERT_EQ(e.pass, Pass::Backward);
      if (e.kind == EventKind::Enter) {
        EXPECT_TRUE(has_backward_listing(e.alg)) << c.arch << ": Algorithm " << e.alg;
        continue;
      }
      const std::string where = c.arch + " (" + variant_summary(c) + "): Algorithm " + std::to_string(e.alg) + ", " + adjoint_name(e.line);
      const PseudoAlgorithm listing = backward_pseudocode_for(e.alg, c);
      const PseudoLine* l = adjoint_line(listing, e.line);
      ASSERT_NE(l, nullptr) << where;
      reached.insert({e.alg, e.line});
      EXPECT_GT(std::string(explain_adjoint(e.alg, e.line, c)).size(), 30u) << where;
      ASSERT_NE(notation_entry(e.ref()), nullptr) << where;
      // A line's sub-steps are the listing's, one for one (the panel highlights them by their
      // order). RoPE rotates self-attention only: a cross-attention head's lines 1 and 2 have none.
      if (e.kind == EventKind::Line) {
        const size_t n = static_cast<size_t>(count_substeps(t, k));
        // The cross-attention is line 16 of Algorithm 8, or 17 when pre-LN puts its norm first.
        const Event& top = t.events[t.call_stack(k).front()];
        const bool cross = top.alg == 8 && top.line == (c.norm_pos() == NormPosition::Pre ? 17 : 16);
        if (!(cross && e.alg == 4 && n == 0))
          EXPECT_EQ(n, l->steps.size()) << where << " (in Algorithm " << top.alg << "'s " << adjoint_name(top.line) << "): " << l->text;
      }
    }
  }
  // Every block's adjoint and each loss line were reached.
  for (const auto& want : std::vector<std::pair<int, int>>{{1, 1}, {2, 1}, {4, 6}, {4, 5}, {4, 1}, {5, 4}, {5, 1}, {6, 3}, {6, 1},
                                                           {7, 1}, {8, 16}, {9, 10}, {10, 6}, {11, 5}, {12, 9}, {13, 5}})
    EXPECT_TRUE(reached.count(want)) << "Algorithm " << want.first << ", " << adjoint_name(want.second);
}

// ---- the listings' formulas compute what training's batched backward computes ----

// A deterministic matrix of values in (−1, 1).
MatD filled(Eigen::Index r, Eigen::Index c, double seed) {
  MatD m(r, c);
  for (Eigen::Index i = 0; i < r; ++i)
    for (Eigen::Index j = 0; j < c; ++j) m(i, j) = std::sin(seed + 1.7 * static_cast<double>(i) + 0.61 * static_cast<double>(j * j + 1));
  return m;
}

// The values are O(1) sums of at most max(d, ℓ) ≈ 10 products in double: rounding leaves about
// 10·2⁻⁵³ ≈ 1e-15 of relative error, and two implementations that order their sums differently
// agree to that. 1e-12 leaves a thousandfold margin yet fails on any wrong term (a missing
// 1/√d_attn alone is a 50 % error).
constexpr double kTol = 1e-12;

TEST(BackwardListings, AttentionListingComputesWhatTrainingComputes) {
  const Eigen::Index d_attn = 4, d_mid = 3, l = 5;
  const MatD Q = filled(d_attn, l, 0.3), K = filled(d_attn, l, 1.1), V = filled(d_mid, l, 2.9), dVt = filled(d_mid, l, 4.2);
  const Mask causal = unidirectional_mask(l, l);
  const MatD mask = causal.cast<double>();
  MatD A(l, l), Vt(d_mid, l), dS(l, l), dQ(d_attn, l), dK(d_attn, l), dV(d_mid, l);
  attention_forward<double>(Q, K, V, mask, A, Vt);
  attention_backward<double>(dVt, Q, K, V, A, dS, dQ, dK, dV);
  // Adjoint of line 6: ∇V ← ∇Ṽ Aᵀ; ∇A ← Vᵀ ∇Ṽ; ∇S ← (A ⊙ (∇A − 1 (1ᵀ (A ⊙ ∇A)))) / √d_attn.
  const MatD lV = dVt * A.transpose();
  const MatD lA = V.transpose() * dVt;
  const MatD ones = MatD::Ones(l, 1);
  MatD lS = (A.array() * (lA - ones * (ones.transpose() * A.cwiseProduct(lA))).array()).matrix() / std::sqrt(double(d_attn));
  // Adjoint of line 5: masked entries exactly 0 (they already are: A is 0 there).
  for (Eigen::Index tz = 0; tz < l; ++tz)
    for (Eigen::Index tx = 0; tx < l; ++tx)
      if (!causal(tz, tx)) {
        EXPECT_EQ(lS(tz, tx), 0.0);
        EXPECT_EQ(dS(tz, tx), 0.0);
      }
  // Adjoint of line 4: ∇Q ← K ∇S, ∇K ← Q ∇Sᵀ.
  const MatD lQ = K * lS, lK = Q * lS.transpose();
  EXPECT_LT((lV - dV).norm(), kTol * dV.norm());
  EXPECT_LT((lS - dS).norm(), kTol * dS.norm());
  EXPECT_LT((lQ - dQ).norm(), kTol * dQ.norm());
  EXPECT_LT((lK - dK).norm(), kTol * dK.norm());
}

TEST(BackwardListings, LayerNormListingComputesWhatTrainingComputes) {
  const Eigen::Index d_e = 6;
  const double eps = 1e-5;
  const MatD e = filled(d_e, 1, 0.7), gamma = filled(d_e, 1, 3.3), beta = filled(d_e, 1, 5.1), de_hat = filled(d_e, 1, 6.4);
  for (Norm norm : {Norm::LayerNorm, Norm::RmsNorm}) {
    const bool rms = norm == Norm::RmsNorm;
    LayerNormCache<double> cache;
    MatD out, de = MatD::Zero(d_e, 1), dgamma(d_e, 1), dbeta(d_e, 1);
    layer_norm_forward<double>(e, gamma, beta, eps, cache, out, norm);
    layer_norm_backward<double>(de_hat, gamma, cache, de, dgamma, dbeta);  // RMSNorm leaves dbeta alone
    // The listing, line by line (RMSNorm: m = 0 and no β).
    const double m = rms ? 0.0 : e.mean();
    const VecD c = e.col(0).array() - m;
    const double v = c.squaredNorm() / d_e, r = 1.0 / std::sqrt(v + eps);
    // Adjoint of line 3.
    const VecD lgamma = de_hat.col(0).cwiseProduct(c) * r;
    VecD le = de_hat.col(0).cwiseProduct(gamma.col(0)) * r;
    const double lm = rms ? 0.0 : -de_hat.col(0).dot(gamma.col(0)) * r;
    const double lv = -0.5 * std::pow(v + eps, -1.5) * (de_hat.col(0).cwiseProduct(gamma.col(0))).dot(c);
    // Adjoint of line 2, then of line 1.
    le += 2.0 * lv * c / static_cast<double>(d_e);
    le.array() += lm / static_cast<double>(d_e);
    EXPECT_LT((lgamma - dgamma.col(0)).norm(), kTol * dgamma.norm()) << (rms ? "RMSNorm" : "layer_norm");
    EXPECT_LT((le - de.col(0)).norm(), kTol * de.norm()) << (rms ? "RMSNorm" : "layer_norm");
    if (!rms) EXPECT_LT((de_hat - dbeta).norm(), kTol * dbeta.norm());
  }
}

TEST(BackwardListings, UnembeddingAndLossListingComputeWhatTrainingComputes) {
  // Algorithm 13 line 5's adjoint ∇P[y, t] = −1/P[y, t], then Algorithm 7's softmax Jacobian
  // p ⊙ (∇p − 1 (pᵀ∇p)), give training's ∂loss/∂(W_u X) = P − onehot(y).
  const Eigen::Index d_e = 4, N_V = 7, l = 3;
  const MatD X = filled(d_e, l, 0.2), W_u = filled(N_V, d_e, 2.4);
  const std::vector<int> targets{3, 7, 0};  // 1-based; the last position has no target
  VecD weights(l);
  weights << 1, 1, 0;
  LossCache<double> cache;
  loss_forward<double>(X, W_u, MatD(0, 0), targets, weights, cache);
  MatD dlogits, dW_u(N_V, d_e), db_u(0, 0), dX(d_e, l);
  loss_backward<double>(X, W_u, targets, weights, cache, dlogits, dW_u, db_u, dX);
  MatD lW_u = MatD::Zero(N_V, d_e), lX(d_e, l);
  for (Eigen::Index t = 0; t < l; ++t) {
    const VecD p = cache.P.col(t);
    VecD dp = VecD::Zero(N_V);
    if (targets[t]) dp(targets[t] - 1) = -1.0 / p(targets[t] - 1);
    const VecD du = p.cwiseProduct(dp - VecD::Ones(N_V) * p.dot(dp));
    lW_u += du * X.col(t).transpose();
    lX.col(t) = W_u.transpose() * du;
  }
  EXPECT_LT((lW_u - dW_u).norm(), kTol * dW_u.norm());
  EXPECT_LT((lX - dX).norm(), kTol * dX.norm());
}

}  // namespace

}  // namespace test_backward_listings
