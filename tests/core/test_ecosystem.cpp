// Checkpoints from the ecosystem (core/io/model_files.hpp) against an independent PyTorch
// implementation in each ecosystem's own layout (tests/data/ecosystem/<case>/expected.json, written
// in float64 by tests/reference/gen_ecosystem_reference.py): Hugging Face GPT-2 with and without
// the "transformer." prefix and the attn.bias buffers, with F16/BF16/F64 tensors; nanoGPT with and
// without biases, its vocabulary padded; minGPT's untied lm_head; BERT with its masked-LM head,
// under new and TensorFlow-converted names. open_model then Algorithm 10 or 9 must give the
// reference's log P within log_p_float_tolerance in float and log_p_double_tolerance in double (θ
// cast to double; test_ecosystem_support.hpp derives both); the configuration
// must be the checkpoint's; every tensor of the table must say where it came from.
#include <gtest/gtest.h>

#include <cmath>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/architecture.hpp"
#include "test_ecosystem_support.hpp"

namespace test_ecosystem {

using namespace sf;
using namespace sf::test;

namespace {

// Runs f on every case, opened; an exception is that case's failure (named), not the end of the test.
void for_each_opened(const std::function<void(const EcosystemCase&, const OpenedModel&)>& f) {
  const std::vector<EcosystemCase> all = ecosystem_cases();
  ASSERT_EQ(all.size(), 8u);
  for (const EcosystemCase& k : all) {
    SCOPED_TRACE("case " + k.name + " (" + k.doc.at("what").get<std::string>() + ")");
    try {
      f(k, open_model(ecosystem_dir(k.name).string()));
    } catch (const std::exception& e) {
      ADD_FAILURE() << k.name << ": threw: " << e.what();
    }
  }
}

// The largest |log P[row, t] − reference| over the stored rows of every sequence of the case.
double log_p_gap(const EcosystemCase& k, const std::function<Mat<double>(const Tokens&)>& forward) {
  double worst = 0;
  for (const json& seq : k.doc.at("sequences")) {
    const Tokens x = seq.at("x").get<Tokens>();
    const Mat<double> P = forward(x);  // (N_V, ℓ)
    const std::vector<int> rows = seq.at("rows").get<std::vector<int>>();
    const json& want = seq.at("log_p");
    EXPECT_EQ(P.cols(), static_cast<Eigen::Index>(x.size()));
    for (size_t i = 0; i < rows.size(); ++i)
      for (size_t t = 0; t < x.size(); ++t)
        worst = std::max(worst, std::abs(std::log(P(rows[i] - 1, static_cast<Eigen::Index>(t))) - want[i][t].get<double>()));
  }
  return worst;
}

}  // namespace

TEST(EcosystemReference, EveryCaseOpensAsTheCheckpointSays) {
  for_each_opened([](const EcosystemCase& k, const OpenedModel& m) {
    const json& want = k.doc.at("paper");
    const ModelConfig& c = m.checkpoint.model.config;
    EXPECT_EQ(to_string(m.layout), k.doc.at("layout").get<std::string>());
    EXPECT_EQ(c.arch, want.at("arch").get<std::string>());
    EXPECT_EQ(c.L, want.at("L").get<int>());
    EXPECT_EQ(c.H, want.at("H").get<int>());
    EXPECT_EQ(c.d_e, want.at("d_e").get<int>());
    EXPECT_EQ(c.d_attn, want.at("d_attn").get<int>());
    EXPECT_EQ(c.d_mid, want.at("d_attn").get<int>());
    EXPECT_EQ(c.d_mlp, want.at("d_mlp").get<int>());
    EXPECT_EQ(c.l_max, want.at("l_max").get<int>());
    EXPECT_EQ(c.N_V(), want.at("N_V").get<int>());
    EXPECT_STREQ(to_string(c.act()), want.at("activation").get<std::string>().c_str());
    EXPECT_EQ(c.tied_unembedding, want.at("tied").get<bool>());
    EXPECT_EQ(c.eps, static_cast<float>(want.at("eps").get<double>()));
    EXPECT_EQ(c.bos_token(), want.at("bos").get<int>());
    EXPECT_EQ(c.eos_token(), want.at("eos").get<int>());
    EXPECT_EQ(c.mask_token(), want.at("mask").get<int>());
    EXPECT_EQ(m.tokenizer->N_V(), k.doc.at("tokens").get<int>());
    EXPECT_EQ(m.tokenizer->bos_token(), c.bos_token());
    const bool bert = c.arch == "bert";
    EXPECT_EQ(c.embedding_norm, bert);
    EXPECT_EQ(c.token_types, bert ? 2 : 0);
    EXPECT_EQ(c.unembedding_bias, bert);
    EXPECT_EQ(c.norm_pos(), bert ? NormPosition::Post : NormPosition::Pre);  // BERT post-LN, GPT-2 pre-LN: the paper's
    EXPECT_EQ(c.tokenizer, bert ? TokenizerKind::WordPiece : TokenizerKind::Gpt2);
    EXPECT_EQ(m.files.size(), 2u);  // model.safetensors, config.json
    EXPECT_EQ(fs::path(m.checkpoint_path).filename(), "model.safetensors");
  });
}

TEST(EcosystemReference, EveryTensorOfTheTableSaysWhereItCameFrom) {
  for_each_opened([](const EcosystemCase& k, const OpenedModel& m) {
    for (const ParamEntry& e : m.checkpoint.model.table.entries()) {
      const auto it = m.provenance.find(e.name);
      ASSERT_NE(it, m.provenance.end()) << k.name << ": no provenance for " << e.name;
      const bool zero = it->second.find(" = 0 (no bias in the checkpoint)") != std::string::npos;
      EXPECT_TRUE(it->second.find(" ← ") != std::string::npos || zero) << e.name << ": " << it->second;
    }
    if (m.checkpoint.model.config.tied_unembedding) {
      EXPECT_EQ(m.provenance.at("W_u").rfind("W_u = W_eᵀ (tied to ", 0), 0u) << m.provenance.at("W_u");
    }
  });
}

TEST(EcosystemReference, FloatForwardGivesTheReferenceLogP) {
  for_each_opened([](const EcosystemCase& k, const OpenedModel& m) {
    const Model& model = m.checkpoint.model;
    const double gap = log_p_gap(k, [&](const Tokens& x) {
      return architecture(model.config).forward(model, {}, x).cast<double>().eval();
    });
    EXPECT_LT(gap, log_p_float_tolerance(k)) << k.name << ": max |log P − reference| in float";
  });
}

TEST(EcosystemReference, DoubleForwardGivesTheReferenceLogP) {
  for_each_opened([](const EcosystemCase& k, const OpenedModel& m) {
    const Model& model = m.checkpoint.model;
    const std::vector<double> theta(model.theta.begin(), model.theta.end());
    const double gap = log_p_gap(k, [&](const Tokens& x) {
      return model.config.arch == "bert"
                 ? etransformer<double>(x, model.config, bind_bert<const double>(model.table, theta.data()))
                 : dtransformer<double>(x, model.config, bind_gpt<const double>(model.table, theta.data()));
    });
    EXPECT_LT(gap, log_p_double_tolerance(k)) << k.name << ": max |log P − reference| in double";
  });
}

// The provenance strings as people read them, for each kind of mapping.
TEST(EcosystemProvenance, HuggingFaceGpt2Conv1DIsTransposedAndSplitByHead) {
  const OpenedModel m = open_model(ecosystem_dir("hf-gpt2").string());
  const auto& p = m.provenance;
  EXPECT_EQ(p.at("W_e"), "W_e ← wte.weightᵀ");
  EXPECT_EQ(p.at("W_p"), "W_p ← wpe.weightᵀ");
  EXPECT_EQ(p.at("layer1.attn.W_q"), "W_q for heads 1–4 ← h.0.attn.c_attn.weight[:, 0:16]ᵀ, 4 columns per head");
  EXPECT_EQ(p.at("layer2.attn.W_v"), "W_v for heads 1–4 ← h.1.attn.c_attn.weight[:, 32:48]ᵀ, 4 columns per head");
  EXPECT_EQ(p.at("layer1.attn.b_k"), "b_k for heads 1–4 ← h.0.attn.c_attn.bias[16:32], 4 entries per head");
  EXPECT_EQ(p.at("layer1.attn.W_o"), "W_o ← h.0.attn.c_proj.weightᵀ");
  EXPECT_EQ(p.at("layer2.gamma1"), "γ¹_2 ← h.1.ln_1.weight");
  EXPECT_EQ(p.at("layer1.W_mlp1"), "W^1_mlp1 ← h.0.mlp.c_fc.weightᵀ");
  EXPECT_EQ(p.at("layer1.b_mlp2"), "b^1_mlp2 ← h.0.mlp.c_proj.bias");
  EXPECT_EQ(p.at("gamma"), "γ ← ln_f.weight");
  EXPECT_EQ(p.at("W_u"), "W_u = W_eᵀ (tied to wte.weight)");
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes.front().find("attn.bias"), std::string::npos) << m.notes.front();
}

TEST(EcosystemProvenance, NanoGptLinearIsSplitByRowsAndMissingBiasesAreZero) {
  const OpenedModel m = open_model(ecosystem_dir("nanogpt-nobias").string());
  const auto& p = m.provenance;
  EXPECT_EQ(p.at("W_e"), "W_e ← transformer.wte.weightᵀ");
  EXPECT_EQ(p.at("layer1.attn.W_k"), "W_k for heads 1–4 ← transformer.h.0.attn.c_attn.weight[16:32, :], 4 rows per head");
  EXPECT_EQ(p.at("layer1.attn.W_o"), "W_o ← transformer.h.0.attn.c_proj.weight");
  EXPECT_EQ(p.at("layer1.beta1"), "β¹_1 = 0 (no bias in the checkpoint)");
  EXPECT_EQ(p.at("layer1.attn.b_q"), "b_q = 0 (no bias in the checkpoint)");
  const Model& model = m.checkpoint.model;
  EXPECT_EQ(model.weights().layers[0].beta1.norm(), 0.0f);
  EXPECT_GT(model.weights().layers[0].gamma1.norm(), 0.0f);
  EXPECT_TRUE(model.config.tied_unembedding);  // lm_head.weight is a copy of wte
  bool said = false;
  for (const std::string& n : m.notes) said |= n.find("lm_head.weight equals transformer.wte.weight") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(EcosystemProvenance, MinGptKeepsItsOwnLmHead) {
  const OpenedModel m = open_model(ecosystem_dir("mingpt").string());
  EXPECT_EQ(m.provenance.at("W_u"), "W_u ← lm_head.weight");
  EXPECT_FALSE(m.checkpoint.model.config.tied_unembedding);
  EXPECT_EQ(m.checkpoint.model.weights().W_u.rows(), 277);
}

TEST(EcosystemProvenance, NanoGptPaddedVocabularyLoadsWithANote) {
  const OpenedModel m = open_model(ecosystem_dir("nanogpt").string());
  EXPECT_EQ(m.checkpoint.model.config.N_V(), 300);
  EXPECT_EQ(m.tokenizer->N_V(), 277);
  bool said = false;
  for (const std::string& n : m.notes) said |= n.find("ids 278–300 have no piece") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(EcosystemProvenance, BertExtrasAndHeadAreNamed) {
  const OpenedModel m = open_model(ecosystem_dir("hf-bert").string());
  const auto& p = m.provenance;
  EXPECT_EQ(p.at("W_s"), "W_s ← bert.embeddings.token_type_embeddings.weightᵀ");
  EXPECT_EQ(p.at("emb.gamma"), "γ_emb ← bert.embeddings.LayerNorm.weight");
  EXPECT_EQ(p.at("layer1.attn.W_k"), "W_k for heads 1–4 ← bert.encoder.layer.0.attention.self.key.weight, 4 rows per head");
  EXPECT_EQ(p.at("layer2.gamma2"), "γ²_2 ← bert.encoder.layer.1.output.LayerNorm.weight");
  EXPECT_EQ(p.at("W_f"), "W_f ← cls.predictions.transform.dense.weight");
  EXPECT_EQ(p.at("b_u"), "b_u ← cls.predictions.bias");
  EXPECT_EQ(p.at("W_u"), "W_u = W_eᵀ (tied to bert.embeddings.word_embeddings.weight)");
  bool said = false;
  for (const std::string& n : m.notes) said |= n.find("ignored: bert.embeddings.position_ids, bert.pooler.dense.bias") == 0;
  EXPECT_TRUE(said);

  const OpenedModel tf = open_model(ecosystem_dir("hf-bert-tf").string());
  EXPECT_EQ(tf.provenance.at("layer1.gamma1"), "γ¹_1 ← bert.encoder.layer.0.attention.output.LayerNorm.gamma");
  EXPECT_EQ(tf.provenance.at("beta"), "β ← cls.predictions.transform.LayerNorm.beta");
}

}  // namespace test_ecosystem
