// Training BERT: the masking of Algorithm 12 lines 4–7 in the minibatch (the paper's rule and
// BERT's 80/10/10 rule), Algorithm 12 as printed (one SGD update with given masks, matched against
// θ − η·∇loss computed here; its trace), the errors of given masks, and the Trainer learning a
// task in practical mode.
#include <gtest/gtest.h>

#include <cmath>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/bert.hpp"
#include "core/gradients/grad_etransformer.hpp"
#include "core/model/error.hpp"
#include "core/training/training.hpp"
#include "float_bounds.hpp"
#include "test_bert_support.hpp"

namespace test_bert_training {

using namespace sf;
using namespace sf::test;

namespace {

ModelConfig bert(const std::vector<std::string>& vocab) { return bert_test_config(1, 2, 16, 8, 8, 32, 12, 20, vocab); }

const std::vector<std::string> kVocab{"a", "b", "c", "="};  // N_V = 7: mask_token 5, bos 6, eos 7

// Sequences [bos, …, eos] of the vocabulary, of lengths 5 to 12.
std::vector<Example> random_examples(const ModelConfig& c, int n, uint64_t seed) {
  Rng rng(seed);
  std::vector<Example> out(n);
  for (Example& ex : out) {
    ex.x.push_back(c.bos_token());
    const int len = 3 + static_cast<int>(rng.below(8));
    for (int k = 0; k < len; ++k) ex.x.push_back(1 + static_cast<int>(rng.below(c.N_V() - 3)));
    ex.x.push_back(c.eos_token());
  }
  return out;
}

const Value* find(const Event& e, const std::string& name) { return find_value(e, name); }

}  // namespace

TEST(BertTraining, PaperRuleMasksOnlyWithMaskTokenAtAboutPMask) {
  const ModelConfig c = bert(kVocab);
  const std::vector<Example> data = random_examples(c, 64, 1);
  std::vector<size_t> pick(data.size());
  for (size_t i = 0; i < pick.size(); ++i) pick[i] = i;
  TrainOptions opt;
  opt.p_mask = 0.25;
  Rng rng(7);
  Batch b;
  int positions = 0, masked = 0;
  for (int round = 0; round < 50; ++round) {
    architecture(c).make_batch(c, data, pick, 14, 0, opt, rng, b);
    ASSERT_EQ(b.B, 64);
    ASSERT_EQ(b.l, 14);
    for (int s = 0; s < b.B; ++s) {
      const Tokens& x = data[s].x;
      ASSERT_EQ(b.lengths[s], static_cast<int>(x.size()));
      for (int t = 0; t < b.l; ++t) {
        const size_t k = static_cast<size_t>(s) * b.l + t;
        if (t >= b.lengths[s]) {
          EXPECT_EQ(b.targets[k], 0);  // padding carries no loss
          continue;
        }
        ++positions;
        if (b.tokens[k] != x[t]) {
          EXPECT_EQ(b.tokens[k], c.mask_token());  // the paper's rule: only mask_token
        }
        // Targets exactly at the masked positions, x[t] there.
        EXPECT_EQ(b.targets[k], b.tokens[k] == c.mask_token() ? x[t] : 0);
        masked += b.tokens[k] == c.mask_token();
      }
    }
  }
  const double rate = static_cast<double>(masked) / positions;
  RecordProperty("mask_rate", std::to_string(rate));
  // Each position is chosen independently with probability p_mask (draw_mask): 5σ of Binomial.
  EXPECT_NEAR(rate, 0.25, binomial_tolerance(0.25, positions)) << positions << " positions";
  // bos_token and eos_token are masked like every other position (the paper masks every t).
  int ends = 0;
  for (int round = 0; round < 20; ++round) {
    architecture(c).make_batch(c, data, pick, 14, 0, opt, rng, b);
    for (int s = 0; s < b.B; ++s) ends += b.tokens[static_cast<size_t>(s) * b.l] == c.mask_token();
  }
  EXPECT_GT(ends, 0);
}

TEST(BertTraining, BertRuleIs80PercentMask10Random10Unchanged) {
  const ModelConfig c = bert(kVocab);
  TrainOptions opt;
  opt.p_mask = 0.5;
  opt.bert_80_10_10 = true;
  Rng rng(3);
  int chosen = 0, mask = 0, random = 0, kept = 0;
  const int n = 40000;
  for (int k = 0; k < n; ++k) {
    const int x_t = 1 + k % 4;
    const MaskDraw d = draw_mask(x_t, c, opt, rng);
    if (!d.chosen) {
      EXPECT_EQ(d.token, x_t);
      continue;
    }
    ++chosen;
    if (d.token == c.mask_token())
      ++mask;
    else if (d.token == x_t)
      ++kept;  // (includes random draws that hit x[t])
    else
      ++random;
    EXPECT_GE(d.token, 1);
    EXPECT_LE(d.token, c.mask_token());  // never bos_token or eos_token
  }
  // A random ordinary token equals x[t] with probability 1/(N_V − 3) = 1/4: kept ≈ 0.1 + 0.1/4.
  // Every draw independent: each share within 5σ of its Binomial (of n draws, then of `chosen`).
  EXPECT_NEAR(static_cast<double>(chosen) / n, 0.5, binomial_tolerance(0.5, n));
  EXPECT_NEAR(static_cast<double>(mask) / chosen, 0.8, binomial_tolerance(0.8, chosen));
  EXPECT_NEAR(static_cast<double>(random) / chosen, 0.1 * 3 / 4, binomial_tolerance(0.1 * 3 / 4, chosen));
  EXPECT_NEAR(static_cast<double>(kept) / chosen, 0.1 + 0.1 / 4, binomial_tolerance(0.1 + 0.1 / 4, chosen));
  // In a batch every chosen position is scored, whatever it became.
  const std::vector<Example> data = random_examples(c, 32, 2);
  std::vector<size_t> pick{0, 1, 2, 3, 4, 5, 6, 7};
  Batch b;
  Rng rng2(5);
  architecture(c).make_batch(c, data, pick, 12, 0, opt, rng2, b);
  int scored_unmasked = 0;
  for (int s = 0; s < b.B; ++s)
    for (int t = 0; t < b.lengths[s]; ++t) {
      const size_t k = static_cast<size_t>(s) * b.l + t;
      if (b.targets[k]) {
        EXPECT_EQ(b.targets[k], data[pick[s]].x[t]);
        scored_unmasked += b.tokens[k] != c.mask_token();
      } else {
        EXPECT_EQ(b.tokens[k], data[pick[s]].x[t]);  // not chosen: unchanged
      }
    }
  RecordProperty("scored_unmasked", std::to_string(scored_unmasked));
}

TEST(BertTraining, MakeBatchRefusesAModelWithoutMaskToken) {
  ModelConfig c = bert(kVocab);
  c.mask_id = -1;  // no [MASK] (as GPT-2's vocabulary): Algorithm 12 cannot mask
  const std::vector<Example> data{{{}, {6, 1, 2, 7}}};
  Batch b;
  Rng rng(1);
  try {
    architecture(c).make_batch(c, data, {0}, 4, 0, TrainOptions{}, rng, b);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no mask token"), std::string::npos) << e.what();
  }
}

// Algorithm 12 with given masks: one update θ ← θ − η·∇loss(θ) of the summed loss over T̃,
// computed here with BertGradient on x̃ (mask_token at the given positions).
TEST(BertTraining, Algorithm12WithGivenMasksIsOneSgdStepByHand) {
  const ModelConfig c = bert(kVocab);
  Model model = Model::initialised(c, 3);
  const std::vector<Example> data{{{}, {6, 3, 1, 2, 4, 1, 2, 3, 7}}, {{}, {6, 2, 4, 2, 7}}};
  TrainOptions opt;
  opt.given_masks = {{3, 5}, {1, 4}, {2}};  // updates k = 1, 2, 3: (i, n) = (1, 1), (1, 2), (2, 1)
  const float eta = 0.05f;
  ETraining alg(2, 2);
  const std::unique_ptr<ModelGradient> g = architecture(c).gradient(model.table);
  Rng rng(1);
  for (int k = 1; k <= 3; ++k) {
    const Example& ex = data[(k - 1) % 2];
    // By hand: x̃ has mask_token at the given positions; targets x[t] there.
    Batch b;
    b.B = 1;
    b.l = static_cast<int>(ex.x.size());
    b.tokens = ex.x;
    b.lengths = {b.l};
    b.targets.assign(ex.x.size(), 0);
    for (int p : opt.given_masks[k - 1]) {
      b.tokens[p - 1] = c.mask_token();
      b.targets[p - 1] = ex.x[p - 1];
    }
    BertGradient<float> by_hand(model.table);
    const float loss = by_hand.loss_and_gradient(c, bind_bert<const float>(model.table, model.theta.data()), b, 1.0f);
    std::vector<float> want = model.theta;
    for (size_t j = 0; j < want.size(); ++j) want[j] -= eta * by_hand.grad[j];
    const double norm = Eigen::Map<const VecF>(by_hand.grad.data(), by_hand.grad.size()).cast<double>().norm();

    const PaperTraining::Update u = alg.step(data, model, eta, opt, *g, rng);
    ASSERT_TRUE(u.finite);
    EXPECT_EQ(u.loss, loss) << "update " << k;
    EXPECT_EQ(u.terms, static_cast<int>(opt.given_masks[k - 1].size()));
    EXPECT_EQ(u.l, b.l);
    // Both norms are of the same float gradient, its squares summed in double in another order:
    // 2·γ_n in double relative (n = the gradient's size).
    EXPECT_NEAR(u.grad_norm, norm, 2 * double_gamma(static_cast<double>(want.size())) * norm);
    EXPECT_GT(norm, 0.0);
    // θ − η·g in float both ways, but the update rounds η·g and then the difference while the loop
    // above may be contracted into one FMA (one rounding, on a CPU with FMA): the two differ by at
    // most u·|η·g| + 2u·|θ| (u = 2⁻²⁴), i.e. an ulp of θ, which for a γ ≈ 1 is 1.2e-7.
    double worst = 0;
    for (size_t j = 0; j < want.size(); ++j) {
      const double bound = kFloatU * (2 * std::abs(double(want[j])) + std::abs(double(eta) * by_hand.grad[j]));
      worst = std::max(worst, std::abs(double(model.theta[j]) - want[j]) / std::max(bound, 1e-30));
    }
    EXPECT_LE(worst, 1.0) << "update " << k << ": |θ − want| in units of u·(2|θ| + |η·g|)";
    // The loss is −Σ_{t∈T̃} log P[x[t], t] of Algorithm 9 on x̃ (before the update).
  }
  EXPECT_EQ(alg.i(), 2);
  EXPECT_EQ(alg.n(), 2);
  // Update 4 has no line in --masks.
  try {
    alg.step(data, model, eta, opt, *g, rng);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--masks has no line 4");
  }
  ETraining other(1, 1);
  TrainOptions bad;
  bad.given_masks = {{2, 10}};
  try {
    other.step({data[1]}, model, eta, bad, *g, rng);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--masks line 1: position 10 is outside the sequence (ℓ = 5)");
  }
}

TEST(BertTraining, Algorithm12EmptyMaskLeavesThetaUnchanged) {
  const ModelConfig c = bert(kVocab);
  Model model = Model::initialised(c, 4);
  const std::vector<float> before = model.theta;
  TrainOptions opt;
  opt.given_masks = {{}};
  ETraining alg(1, 1);
  const std::unique_ptr<ModelGradient> g = architecture(c).gradient(model.table);
  Rng rng(1);
  const PaperTraining::Update u = alg.step({{{}, {6, 1, 2, 7}}}, model, 0.1f, opt, *g, rng);
  EXPECT_TRUE(u.finite);
  EXPECT_EQ(u.loss, 0.0f);
  EXPECT_EQ(u.terms, 0);
  EXPECT_EQ(model.theta, before);
}

TEST(BertTraining, Algorithm12TraceBindsItsLinesWithETransformerNestedUnderLine8) {
  const ModelConfig c = bert(kVocab);
  Model model = Model::initialised(c, 2);
  const std::vector<Example> data{{{}, {6, 1, 2, 4, 7}}};
  ETraining alg(1, 1);
  const std::unique_ptr<ModelGradient> g = architecture(c).gradient(model.table);
  TrainOptions opt;
  opt.p_mask = 0.5;
  Rng rng(11);
  Trace trace;
  Tracer tracer(trace);
  const PaperTraining::Update u = alg.step(data, model, 0.1f, opt, *g, rng, &tracer);
  ASSERT_TRUE(u.finite);
  ASSERT_FALSE(trace.events.empty());
  EXPECT_EQ(trace.events[0].kind, EventKind::Enter);
  EXPECT_EQ(trace.events[0].alg, 12);
  std::vector<int> lines;
  size_t line8 = 0, alg9_enter = 0;
  const Event* line7 = nullptr;
  const Event* line9 = nullptr;
  const Event* last5 = nullptr;
  for (size_t k = 0; k < trace.size(); ++k) {
    const Event& e = trace.events[k];
    if (e.pass == Pass::Backward) continue;  // line 10's traced backward (tests/core/test_backprop_arch.cpp)
    if (e.alg == 12 && e.kind == EventKind::Line) {
      lines.push_back(e.line);
      EXPECT_EQ(e.idx.i, 1);
      EXPECT_EQ(e.depth, 0);
      if (e.line == 4 || e.line == 5) {
        EXPECT_GE(e.idx.t, 1);
      }
      if (e.line == 5) last5 = &e;
      if (e.line == 7) line7 = &e;
      if (e.line == 8) line8 = k;
      if (e.line == 9) line9 = &e;
    }
    if (e.alg == 9 && e.kind == EventKind::Enter) {
      EXPECT_EQ(alg9_enter, 0u);  // one ETransformer pass
      alg9_enter = k;
      EXPECT_EQ(e.depth, 1);  // nested under Algorithm 12
    }
  }
  EXPECT_EQ(lines, (std::vector<int>{1, 2, 3, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 7, 8, 9, 10}));
  EXPECT_GT(alg9_enter, 0u);
  EXPECT_LT(alg9_enter, line8);  // ETransformer's events come before the line that called it
  ASSERT_TRUE(line7 && line9 && last5);
  // x̃_n as line 5 left it is what ETransformer saw; T̃ marks its mask_token positions.
  const Tokens& x_tilde = find(*last5, "x̃_n")->tokens;
  EXPECT_EQ(find(trace.events[alg9_enter], "x")->tokens, x_tilde);
  const MatF& T = find(*line7, "T̃")->m;
  ASSERT_EQ(T.cols(), 5);
  int terms = 0;
  for (int t = 0; t < 5; ++t) {
    EXPECT_EQ(T(0, t), x_tilde[t] == c.mask_token() ? 1.0f : 0.0f);
    terms += T(0, t) != 0;
  }
  EXPECT_EQ(terms, u.terms);
  EXPECT_GT(terms, 0);  // this seed masks something
  // Line 9: the terms −log P[x_n[t], t] for t ∈ T̃ of line 8's P, and their sum.
  const MatF& P = find(trace.events[line8], "P")->m;
  const MatF& row = find(*line9, "−log P[x_n[t], t]")->m;
  ASSERT_EQ(row.cols(), terms);
  // The terms are line 8's P as line 9 takes its log: the same float P, so only the log's rounding
  // differs (k·u·|log P| each); the loss and u.loss sum the same positive terms, maybe in another
  // order: 2·γ_n·Σ.
  for (int t = 0, j = 0; t < 5; ++t)
    if (T(0, t) != 0) {
      const double log_p = std::log(P(data[0].x[t] - 1, t));
      EXPECT_NEAR(row(0, j++), -log_p, kFunctionRoundings * kFloatU * std::abs(log_p));
    }
  const double sum_error = 2 * float_gamma(terms) * row.sum();
  EXPECT_NEAR(row.sum(), find(*line9, "loss")->m(0, 0), sum_error);
  EXPECT_NEAR(row.sum(), u.loss, sum_error);
}

TEST(BertTraining, TrainerLearnsMaskedSortInPracticalMode) {
  // Masked language modelling on the sorting task ("dcab=abcd"): a masked letter of the sorted
  // half is predictable from the other half. A uniform guess scores ln N_V = 3.40 per masked
  // token (a unigram guess about 3.3); 200 Adam steps take the masked validation loss from 3.42
  // to about 2.28 (about 1 s).
  TaskOptions t;
  t.seed = 1;
  t.train_size = 2000;
  t.val_size = 200;
  t.max_chars = 18;
  const Dataset d = make_task("sort", t);
  ModelConfig c = bert(d.vocab);
  c.L = 2;
  c.d_e = 32;
  c.d_mlp = 64;
  c.d_f = 32;
  TrainOptions opt;
  opt.lr = 1e-2;
  opt.min_lr = 1e-3;
  opt.steps = 200;
  opt.warmup = 20;
  opt.batch = 64;
  opt.p_mask = 0.15;
  Trainer trainer(Model::initialised(c, 1), d, opt);
  EXPECT_EQ(trainer.arch().name(), "bert");
  const double initial = trainer.evaluate();
  // Untrained, P is near uniform: ln N_V up to the initial logits' spread (0.02 measured), 0.3 a
  // margin; the drop below is the learning, about 1.1.
  EXPECT_NEAR(initial, std::log(c.N_V()), 0.3);
  while (!trainer.finished()) ASSERT_TRUE(trainer.step().finite);
  const double val = trainer.evaluate();
  RecordProperty("initial_validation_loss", std::to_string(initial));
  RecordProperty("validation_loss", std::to_string(val));
  EXPECT_LT(val, initial - 1.0);
}

TEST(BertTraining, TrainerPaperModeRunsAlgorithm12) {
  Dataset d;
  d.name = "two sequences";
  d.train = {"cab=abc", "ba=ab"};
  d.vocab = kVocab;
  TrainOptions opt;
  opt.mode = TrainMode::Paper;
  opt.lr = 0.05;
  opt.given_masks = {{2, 3}, {4}};
  Trainer trainer(Model::initialised(bert(kVocab), 1), d, opt);
  const StepInfo s1 = trainer.step();
  EXPECT_TRUE(s1.finite);
  EXPECT_EQ(s1.tokens, 9);
  EXPECT_GT(s1.loss, 0);
  // The same loss over its 2 targets: one float division on either side, u·|loss/2| each.
  EXPECT_NEAR(s1.token_loss, s1.loss / 2, 2 * kFloatU * std::abs(s1.loss / 2));
  trainer.step();
  EXPECT_TRUE(trainer.finished());
}

}  // namespace test_bert_training
