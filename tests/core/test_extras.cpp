// The ecosystem extras (issue 11; not in the paper, as BERT checkpoints have them) and the model's
// own special tokens:
//  - the forward pass: e_t ← layer_norm(W_e[:, x[t]] + W_p[:, t] + W_s[:, 1] | γ_emb, β_emb) on the
//    embedding line, P = softmax(W_u X + b_u 1ᵀ) on the unembedding line, traced as labelled
//    sub-steps; the pseudocode marks both lines with their source;
//  - the batched backward of the two blocks against central differences (the whole models are in
//    tests/core/test_variants_grad.cpp's matrix, cases bert_extras*, and against PyTorch in
//    tests/core/test_variants_reference.cpp, cases *_extras);
//  - special ids moved away from the paper's N_V − 2, N_V − 1, N_V: generation stops at the
//    model's eos, fill-in uses its mask, BERT's masking never draws a special id, padding uses
//    pad_id; a model without a mask token, or with a vocabulary from tokenizer files, is refused
//    where it cannot work.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/fill_in.hpp"
#include "core/algorithms/kv_cache.hpp"
#include "core/arch/bert.hpp"
#include "core/arch/ed.hpp"
#include "core/gradients/grad.hpp"
#include "core/model/error.hpp"
#include "core/pseudocode/variants.hpp"
#include "core/training/training.hpp"
#include "grad_check.hpp"

namespace test_extras {

using namespace sf;
using namespace sf::test;

namespace {

ModelConfig tiny(const std::string& arch) {
  ModelConfig c;
  c.arch = arch;
  c.L = 1;
  c.L_enc = 1;
  c.L_dec = 1;
  c.H = 2;
  c.d_e = 6;
  c.d_f = 6;
  c.d_attn = 4;
  c.d_mid = 3;
  c.d_mlp = 8;
  c.l_max = 9;
  c.vocab = {"a", "b", "c", "="};  // N_V = 7
  return c;
}

ModelConfig with_extras(ModelConfig c) {
  c.embedding_norm = true;
  c.token_types = 2;
  c.unembedding_bias = true;
  return c;
}

// A vocabulary in the ecosystem's style: N_V = 12 from the files, the special tokens where the
// files put them (not at the end): pad 5, bos 2 ([CLS]), eos 3 ([SEP]), mask 4 ([MASK]).
ModelConfig moved_ids(const std::string& arch) {
  ModelConfig c = tiny(arch);
  c.tokenizer = TokenizerKind::WordPiece;
  c.vocab.clear();
  c.vocab_size = 12;
  c.bos_id = 2;
  c.eos_id = 3;
  c.mask_id = 4;
  c.pad_id = 5;
  c.unembedding_bias = true;  // b_u lets a test decide what the model predicts
  return c;
}

std::vector<double> random_theta(const ParamTable& table, uint64_t seed) { return spread_theta(table, seed, 0.4); }

const Event* find_event(const Trace& trace, EventKind kind, int alg, int line, const std::string& label_part = "") {
  for (const Event& e : trace.events)
    if (e.kind == kind && e.alg == alg && e.line == line && e.label.find(label_part) != std::string::npos) return &e;
  return nullptr;
}

const Value* find_value(const Event& e, const std::string& name) {
  for (const Value& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}

const PseudoLine& line_of(const PseudoAlgorithm& a, int n) {
  for (const PseudoLine& l : a.lines)
    if (l.number == n) return l;
  throw Error("no line " + std::to_string(n));
}

// A model with all-zero θ except b_u: every layer norm's γ is 0, so X = 0 before W_u and
// P[:, t] = softmax(b_u) for every t: b_u[favourite] = 10 makes `favourite` the argmax.
Model predicting(const ModelConfig& c, int favourite) {
  Model m(c);
  const ParamEntry& b_u = m.table.at("b_u");
  m.theta[b_u.offset + favourite - 1] = 10.0f;
  return m;
}

}  // namespace

// ---- the forward pass ----------------------------------------------------------------------------

TEST(Extras, EmbeddingLineAddsSegmentOneThenLayerNormsAsBertEmbeddings) {
  const ModelConfig c = with_extras(tiny("bert"));
  ASSERT_EQ(validate(c), "");
  const ParamTable table(c);
  const std::vector<double> theta = random_theta(table, 3);
  const BertW<const double> W = bind_bert<const double>(table, theta.data());
  const Tokens x{6, 1, 4, 2, 7};
  Trace trace;
  Tracer tr(trace);
  etransformer<double>(x, c, W, &tr);
  const Event* line2 = find_event(trace, EventKind::Line, 9, 2);
  ASSERT_NE(line2, nullptr);
  const Value* e = find_value(*line2, "e_t");
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->note.find("Not in the paper: BERT checkpoints (token-type embedding, segment 1)"), std::string::npos);
  EXPECT_NE(e->note.find("(embedding layer norm)"), std::string::npos);
  for (int t = 1; t <= static_cast<int>(x.size()); ++t) {
    // By hand: s = W_e[:, x[t]] + W_p[:, t] + W_s[:, 1], then (s − m)/√(v + ε) ⊙ γ_emb + β_emb.
    const Vec<double> s = W.W_e.col(x[t - 1] - 1) + W.W_p.col(t - 1) + W.extras.W_s.col(0);
    const double m = s.mean(), v = (s.array() - m).square().mean();
    const Vec<double> want =
        ((s.array() - m) / std::sqrt(v + c.eps)).matrix().cwiseProduct(W.extras.emb_gamma) + W.extras.emb_beta;
    // The traced float against the same by hand in double: a layer norm over d_e = 6 entries rounds
    // ≲ 3·6u relative (mean, variance, one division), outputs ≲ 3: ≲ 3.2e-6 < 1e-5 (u = 2⁻²⁴).
    EXPECT_LT((e->m.col(t - 1).cast<double>() - want).cwiseAbs().maxCoeff(), 1e-5) << "t = " << t;
  }
  // The sub-steps on line 2, labelled with their source, and Algorithm 6 nested once per token.
  const Event* sum = find_event(trace, EventKind::SubStep, 9, 2, "not in the paper: BERT checkpoints (token-type embedding, segment 1)");
  ASSERT_NE(sum, nullptr);
  EXPECT_NE(find_value(*sum, "W_s[:, 1]"), nullptr);
  EXPECT_NE(find_event(trace, EventKind::SubStep, 9, 2, "not in the paper: BERT checkpoints (embedding layer norm)"), nullptr);
  int norms_before_line3 = 0;
  for (const Event& ev : trace.events) {
    if (ev.kind == EventKind::Line && ev.alg == 9 && ev.line == 3) break;
    norms_before_line3 += ev.kind == EventKind::Enter && ev.alg == 6;
  }
  EXPECT_EQ(norms_before_line3, static_cast<int>(x.size()));
}

TEST(Extras, UnembeddingBiasShiftsTheLogits) {
  const ModelConfig c = with_extras(tiny("bert"));
  const ParamTable table(c);
  std::vector<double> theta = random_theta(table, 4);
  const Tokens x{6, 3, 5, 1, 7};
  auto P_of = [&] { return etransformer<double>(x, c, bind_bert<const double>(table, theta.data())); };
  const MatD P = P_of();
  const ParamEntry& b_u = table.at("b_u");
  // A constant added to b_u changes nothing (the column softmax ignores it) …
  for (int k = 0; k < c.N_V(); ++k) theta[b_u.offset + k] += 1.5;
  // (only the rounding of z + 1.5 differs: within kReorderedDouble, grad_check.hpp)
  EXPECT_LT((P_of() - P).cwiseAbs().maxCoeff(), kReorderedDouble);
  // … and δ on b_u[3] multiplies P[3, t] / P[j, t] by e^δ for every t, j.
  theta[b_u.offset + 2] += 0.7;
  const MatD Q = P_of();
  for (int t = 0; t < Q.cols(); ++t)
    // Four p's, each within kReorderedDouble relative (δlog p ≤ 2·max|δlogit|), and three divisions.
    EXPECT_NEAR((Q(2, t) / Q(0, t)) / (P(2, t) / P(0, t)), std::exp(0.7), (4 * kReorderedDouble + double_gamma(3)) * std::exp(0.7))
        << "t = " << t + 1;
  // Traced: the sub-step W_u X + b_u 1ᵀ, labelled.
  Trace trace;
  Tracer tr(trace);
  etransformer<double>(x, c, bind_bert<const double>(table, theta.data()), &tr);
  const Event* sub = find_event(trace, EventKind::SubStep, 9, 12, "not in the paper: BERT checkpoints (bias b_u on W_u)");
  ASSERT_NE(sub, nullptr);
  EXPECT_NE(find_value(*sub, "W_u X + b_u 1ᵀ"), nullptr);
  EXPECT_NE(find_value(*sub, "b_u"), nullptr);
}

TEST(Extras, EveryArchitectureAppliesThemAndTheKvCacheAgrees) {
  // GPT with the extras: the KV cache's last column is the full forward's.
  ModelConfig g = with_extras(tiny("gpt"));
  const Model gm = Model::initialised(g, 5);
  const Tokens x{6, 1, 2, 3, 1};
  const MatF P = dtransformer<float>(x, g, gm.weights());
  GptKvCache cache;
  VecF p;
  for (size_t n = 1; n <= x.size(); ++n) p = dtransformer_cached(Tokens(x.begin(), x.begin() + n), g, gm.weights(), cache);
  // The cached column against the full pass: the same sums in another order; 1e-5 as derived for
  // kTolCachedP in test_kv_cache.cpp (models of the same size, weights N(0, 0.02²)).
  EXPECT_LT((p - P.col(P.cols() - 1)).cwiseAbs().maxCoeff(), 1e-5);
  // The encoder-decoder embeds z and x with the same extras (lines 2 and 11), and caches agree too.
  const ModelConfig e = with_extras(tiny("ed"));
  const Model em = Model::initialised(e, 6);
  const Tokens z{6, 2, 3, 7};
  Trace trace;
  Tracer tr(trace);
  const MatF Pe = edtransformer<float>(z, x, e, ed_weights(em), &tr);
  for (int line : {2, 11})
    EXPECT_NE(find_event(trace, EventKind::SubStep, 8, line, "(embedding layer norm)"), nullptr) << "line " << line;
  EXPECT_NE(find_event(trace, EventKind::SubStep, 8, 21, "(bias b_u on W_u)"), nullptr);
  EdKvCache ecache;
  VecF pe;
  for (size_t n = 1; n <= x.size(); ++n)
    pe = edtransformer_cached(z, Tokens(x.begin(), x.begin() + n), e, ed_weights(em), ecache);
  EXPECT_LT((pe - Pe.col(Pe.cols() - 1)).cwiseAbs().maxCoeff(), 1e-5);  // as above: kTolCachedP
}

TEST(Extras, PseudocodeShowsTheChangedLinesAsVariantsNamingBert) {
  const ModelConfig c = with_extras(tiny("bert"));
  const PseudoAlgorithm a = pseudocode_for(9, c);
  const PseudoLine& l2 = line_of(a, 2);
  EXPECT_EQ(l2.text, "for t ∈ [ℓ]: e_t ← layer_norm(W_e[:, x[t]] + W_p[:, t] + W_s[:, 1] | γ_emb, β_emb)");
  EXPECT_NE(l2.variant.find("token-type embedding W_s[:, 1] (segment 1)"), std::string::npos) << l2.variant;
  EXPECT_NE(l2.variant.find("embedding layer norm"), std::string::npos) << l2.variant;
  EXPECT_NE(l2.variant.find("BERT (Devlin et al.), Hugging Face checkpoint"), std::string::npos) << l2.variant;
  const PseudoLine& l12 = line_of(a, 12);
  EXPECT_EQ(l12.text, "return P = softmax(W_u X + b_u 1ᵀ)");
  EXPECT_NE(l12.variant.find("bias b_u on W_u"), std::string::npos);
  EXPECT_EQ(a.variant_header.size(), 3u);  // W_s, γ_emb and β_emb, b_u
  EXPECT_EQ(line_of(a, 5).variant, "");    // the layers are the paper's
  // The encoder-decoder: both embedding lines; GPT: tied and biased; only the token type: no norm.
  const PseudoAlgorithm ed = pseudocode_for(8, with_extras(tiny("ed")));
  EXPECT_EQ(line_of(ed, 11).text, "for t ∈ [ℓ_x]: e_t ← layer_norm(W_e[:, x[t]] + W_p[:, t] + W_s[:, 1] | γ_emb, β_emb)");
  EXPECT_NE(line_of(ed, 2).variant, "");
  ModelConfig g = tiny("gpt");
  g.tied_unembedding = true;
  g.unembedding_bias = true;
  EXPECT_EQ(line_of(pseudocode_for(10, g), 11).text, "return P = softmax(W_eᵀ X + b_u 1ᵀ)");
  g.token_types = 1;
  g.position = Position::Rope;
  EXPECT_EQ(line_of(pseudocode_for(10, g), 2).text, "for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_s[:, 1]   [[no W_p: RoPE inside Algorithm 4]]");
}

// ---- the backward of the two blocks --------------------------------------------------------------

TEST(Extras, EmbeddingExtrasBackwardMatchesFiniteDifferences) {
  const ModelConfig c = with_extras(tiny("bert"));
  const ParamTable table(c);
  std::vector<double> theta = random_theta(table, 7);
  Rng rng(9);
  const MatD E0 = random_matrix(rng, c.d_e, 5), R = random_matrix(rng, c.d_e, 5);
  EmbeddingExtrasCache<double> cache;
  MatD X = E0;
  auto f = [&] {
    X = E0;
    embedding_extras_forward<double>(c, bind_extras<const double>(table, theta.data()), cache, X);
    return (X.array() * R.array()).sum();  // loss = Σ R ⊙ extras(E)
  };
  f();
  std::vector<double> grad(table.total(), 0.0);
  ExtrasW<double> dW = bind_extras<double>(table, grad.data());
  MatD dX = R, dE;
  embedding_extras_backward<double>(c, bind_extras<const double>(table, theta.data()), cache, dX, dE, dW.emb_gamma,
                                    dW.emb_beta, dW.W_s);
  for (const char* name : {"emb.gamma", "emb.beta", "W_s"}) {
    const ParamEntry& e = table.at(name);
    const MatD numeric = numeric_gradient(theta.data() + e.offset, static_cast<Eigen::Index>(e.size()), 1, f);
    EXPECT_LT(relative_error(Eigen::Map<const MatD>(grad.data() + e.offset, e.size(), 1), numeric), kGradCheckRelative) << name;
  }
  EXPECT_EQ(dW.W_s.col(1).norm(), 0.0);  // segment 2 is never used
  MatD E = E0;
  auto g = [&] {
    X = E;
    embedding_extras_forward<double>(c, bind_extras<const double>(table, theta.data()), cache, X);
    return (X.array() * R.array()).sum();
  };
  EXPECT_LT(relative_error(dX, numeric_gradient(E, g)), kGradCheckRelative);
}

TEST(Extras, LossWithBiasBackwardMatchesFiniteDifferences) {
  Rng rng(10);
  const int d_e = 4, N_V = 7, N = 5;
  MatD X = random_matrix(rng, d_e, N), W_u = random_matrix(rng, N_V, d_e), b_u = random_matrix(rng, N_V, 1);
  const std::vector<int> targets{3, 7, 0, 1, 3};
  Vec<double> weights(N);
  weights << 0.5, 1.0, 0.0, 2.0, 1.5;
  LossCache<double> cache;
  auto f = [&] { return loss_forward<double>(X, W_u, b_u, targets, weights, cache); };
  f();
  const MatD logits = (W_u * X).colwise() + b_u.col(0);
  EXPECT_LT((cache.P - softmax_columns<double>(logits)).cwiseAbs().maxCoeff(), kReorderedDouble);  // the same logits
  MatD dlogits, dW_u(N_V, d_e), db_u(N_V, 1), dX(d_e, N);
  loss_backward<double>(X, W_u, targets, weights, cache, dlogits, dW_u, db_u, dX);
  EXPECT_LT(relative_error(db_u, numeric_gradient(b_u, f)), kGradCheckRelative);
  EXPECT_LT(relative_error(dW_u, numeric_gradient(W_u, f)), kGradCheckRelative);
  EXPECT_LT(relative_error(dX, numeric_gradient(X, f)), kGradCheckRelative);
}

// ---- the model's own special tokens --------------------------------------------------------------

TEST(Extras, GenerationStopsAtTheModelsOwnEos) {
  const ModelConfig c = moved_ids("gpt");
  ASSERT_EQ(validate(c), "");
  InferenceOptions opt;
  opt.l_gen = 5;
  opt.tau = 0;
  opt.stop_at_eos = true;
  // The model predicts id 3, its eos ([SEP]): one token, then it stops.
  const InferenceResult r = dinference({2, 6}, predicting(c, 3), opt);
  EXPECT_EQ(r.y, (Tokens{3}));
  EXPECT_NE(r.stopped.find("eos_token"), std::string::npos) << r.stopped;
  // The paper's eos id N_V = 12 is an ordinary token here: generation goes on.
  const InferenceResult r2 = dinference({2, 6}, predicting(c, 12), opt);
  EXPECT_EQ(r2.y, (Tokens{12, 12, 12, 12, 12}));
  EXPECT_EQ(r2.stopped, "");
  // Algorithm 15 starts at the model's bos and stops at its eos.
  const ModelConfig e = moved_ids("ed");
  EdInferenceOptions eo;
  eo.tau = 0;
  const EdInferenceResult t = edinference({2, 7, 3}, predicting(e, 3), eo);
  EXPECT_EQ(t.x_hat, (Tokens{2, 3}));
  EXPECT_EQ(t.stopped, "eos_token");
  const EdInferenceResult t2 = edinference({2, 7, 3}, predicting(e, 12), eo);
  EXPECT_EQ(static_cast<int>(t2.x_hat.size()), e.l_max);  // 12 is not eos: the ℓ_max cap ends it
}

TEST(Extras, FillInUsesTheModelsMaskAndRefusesAModelWithoutOne) {
  ModelConfig c = moved_ids("bert");
  const Model m = predicting(c, 7);
  const FillResult r = fill_masks({2, 6, 4, 8, 3}, m, 0.0, 1, 3);
  ASSERT_EQ(r.positions.size(), 1u);
  EXPECT_EQ(r.positions[0].t, 3);
  EXPECT_EQ(r.positions[0].chosen, 7);
  EXPECT_EQ(r.positions[0].top.front().id, 7);
  EXPECT_EQ(r.filled, (Tokens{2, 6, 7, 8, 3}));
  // The paper's mask id N_V − 2 = 10 is an ordinary token of this vocabulary.
  EXPECT_THROW(fill_masks({2, 10, 3}, m, 0.0, 1, 3), Error);
  c.mask_id = -1;
  try {
    fill_masks({2, 4, 3}, predicting(c, 7), 0.0, 1, 3);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no mask token"), std::string::npos) << e.what();
  }
}

TEST(Extras, MaskingNeverDrawsASpecialIdAndPaddingUsesPadId) {
  const ModelConfig c = moved_ids("bert");
  EXPECT_EQ(special_ids(c), (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(special_ids(tiny("bert")), (std::vector<int>{5, 6, 7}));  // the paper's: N_V − 2, N_V − 1, N_V
  TrainOptions opt;
  opt.p_mask = 1.0;  // every position chosen
  opt.bert_80_10_10 = true;
  Rng rng(12);
  std::set<int> drawn;
  int random = 0;
  for (int k = 0; k < 20000; ++k) {
    const MaskDraw d = draw_mask(6, c, opt, rng);
    ASSERT_TRUE(d.chosen);
    if (d.token != c.mask_token() && d.token != 6) {
      drawn.insert(d.token);
      ++random;
    }
  }
  // Random replacements: the 8 ordinary ids {1, 6, …, 12} (6 itself counts as kept), never 2–5.
  EXPECT_EQ(drawn, (std::set<int>{1, 7, 8, 9, 10, 11, 12}));
  EXPECT_NEAR(random / 20000.0, 0.1 * 7 / 8, 0.01);
  // BERT's minibatch pads with pad_id and masks with mask_id.
  const std::vector<Example> data{{{}, {2, 6, 3}}, {{}, {2, 6, 7, 8, 3}}};
  TrainOptions paper;
  paper.p_mask = 0.5;
  Batch b;
  architecture(c).make_batch(c, data, {0, 1}, 5, 0, paper, rng, b);
  EXPECT_EQ(b.tokens[3], 5);
  EXPECT_EQ(b.tokens[4], 5);
  for (int k = 0; k < 10; ++k)
    if (b.targets[k]) EXPECT_EQ(b.tokens[k], 4);
  // GPT's pads with it too.
  architecture(moved_ids("gpt")).make_batch(moved_ids("gpt"), data, {0}, 5, 0, paper, rng, b);
  EXPECT_EQ(b.tokens, (Tokens{2, 6, 3, 5, 5}));
}

TEST(Extras, TrainingRefusesAVocabularyFromTokenizerFiles) {
  ModelConfig c = moved_ids("gpt");
  c.tokenizer = TokenizerKind::Gpt2;
  c.l_max = 24;  // room for the sort task's sequences, so the vocabulary is what is refused
  TaskOptions t;
  t.train_size = 8;
  t.val_size = 2;
  t.max_chars = c.l_max - 2;
  try {
    Trainer trainer(Model::initialised(c, 1), make_task("sort", t), TrainOptions{});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPT-2's byte-level BPE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("character vocabulary"), std::string::npos) << e.what();
  }
}

}  // namespace test_extras
