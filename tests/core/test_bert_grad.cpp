// The training forward/backward of BERT (core/gradients/grad_etransformer.cpp):
//  - its batched forward gives, column by column, the P of core's traced Algorithm 9 on each
//    unpadded sequence (float and double; padded columns are never seen by real ones);
//  - its gradient of the summed and of the mean masked-LM loss agrees with central differences
//    of the loss computed by core's etransformer (an independent forward), every tensor, double;
//  - a batch's gradient is the sum of its sequences' gradients (padding changes nothing).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/bert.hpp"
#include "core/gradients/grad_etransformer.hpp"
#include "core/model/error.hpp"
#include "grad_check.hpp"
#include "test_bert_support.hpp"

namespace test_bert_grad {

using namespace sf;
using namespace sf::test;

namespace {

// d_mid = 3 ≠ d_attn = 4, d_f = 5 ≠ d_e = 8; N_V = 8: mask_token 6, bos_token 7, eos_token 8.
ModelConfig small_config() { return bert_test_config(2, 2, 8, 4, 3, 12, 5, 9, {"a", "b", "c", "d", "e"}); }

std::vector<double> random_theta(const ParamTable& table, uint64_t seed) { return spread_theta(table, seed, 0.4); }

// Masked inputs x̃ and their targets (x[t] at the masked positions, 0 elsewhere).
const std::vector<Tokens> kMasked{{7, 1, 6, 2, 5, 8}, {7, 6, 8}, {7, 2, 5, 6, 1, 3, 6, 4, 8}};
const std::vector<std::vector<int>> kTargets{{0, 0, 3, 0, 0, 0}, {0, 4, 0}, {0, 0, 0, 1, 0, 0, 2, 0, 0}};

Batch masked_batch(const std::vector<Tokens>& xs, const std::vector<std::vector<int>>& targets, int l) {
  Batch b;
  b.B = static_cast<int>(xs.size());
  b.l = l;
  std::vector<const Tokens*> ptrs;
  for (const Tokens& x : xs) ptrs.push_back(&x);
  pad_sequences(ptrs, l, 1, "a sequence", b.tokens, b.lengths);
  b.targets.assign(b.tokens.size(), 0);
  for (size_t s = 0; s < xs.size(); ++s)
    for (size_t t = 0; t < xs[s].size(); ++t) b.targets[s * l + t] = targets[s][t];
  return b;
}

// −Σ_{t ∈ T̃} log P[x[t], t] by core's Algorithm 9.
double summed_loss(const Tokens& x, const std::vector<int>& y, const ModelConfig& c, const BertW<const double>& W) {
  const MatD P = etransformer<double>(x, c, W);
  double loss = 0;
  for (size_t t = 0; t < x.size(); ++t)
    if (y[t]) loss -= std::log(P(y[t] - 1, t));
  return loss;
}

}  // namespace

TEST(BertGrad, BatchedForwardEqualsTracedAlgorithm9ColumnByColumn) {
  const ModelConfig c = small_config();
  const ParamTable table(c);
  const std::vector<double> theta = random_theta(table, 1);
  const BertW<const double> W = bind_bert<const double>(table, theta.data());
  const Batch batch = masked_batch(kMasked, kTargets, c.l_max);  // padded to ℓ_max = 9
  ASSERT_EQ(batch.n_targets(), 4);
  BertCache<double> cache;
  const double loss = etransformer_forward<double>(c, W, batch, 1.0, cache);
  double want = 0;
  for (size_t b = 0; b < kMasked.size(); ++b) {
    const MatD P = etransformer<double>(kMasked[b], c, W);  // (N_V, ℓ_b), unpadded
    const MatD got = cache.loss.P.middleCols(static_cast<Eigen::Index>(b) * c.l_max, kMasked[b].size());
    EXPECT_LT((got - P).cwiseAbs().maxCoeff(), kReorderedDouble) << "sequence " << b + 1;
    want += summed_loss(kMasked[b], kTargets[b], c, W);
  }
  EXPECT_NEAR(loss, want, kReorderedDouble * want);
  // Without key padding the short sequences would see their padding: the columns would differ.
  BertCache<double> unpadded;
  Batch no_keys = batch;
  no_keys.lengths.assign(batch.B, c.l_max);
  etransformer_forward<double>(c, W, no_keys, 1.0, unpadded);
  // A real difference: 10⁵ times kReorderedDouble, the rounding two equal computations may differ by.
  EXPECT_GT((unpadded.loss.P.leftCols(6) - cache.loss.P.leftCols(6)).cwiseAbs().maxCoeff(), 1e-6);

  // Float, against the TRACED Algorithm 9.
  Model m(c);
  for (size_t k = 0; k < theta.size(); ++k) m.theta[k] = static_cast<float>(theta[k]);
  BertCache<float> cf;
  etransformer_forward<float>(c, bind_bert<const float>(m.table, m.theta.data()), batch, 1.0f, cf);
  for (size_t b = 0; b < kMasked.size(); ++b) {
    Trace trace;
    Tracer tr(trace);
    const MatF P = architecture(c).forward(m, {}, kMasked[b], &tr);
    const MatF got = cf.loss.P.middleCols(static_cast<Eigen::Index>(b) * c.l_max, kMasked[b].size());
    // Batched against one sequence at a time: the same sums in another order (test_grad_model.cpp's
    // bound for a model of this size).
    EXPECT_LT((got - P).cwiseAbs().maxCoeff(), 2e-6) << "sequence " << b + 1;
  }
}

// ∇loss(θ) against central differences of a loss computed by core's etransformer.
void check_model_gradient(bool mean) {
  const ModelConfig c = small_config();
  const ParamTable table(c);
  std::vector<double> theta = random_theta(table, 2);
  const Batch batch = masked_batch(kMasked, kTargets, c.l_max);
  const double w = mean ? 1.0 / batch.n_targets() : 1.0;
  BertGradient<double> g(table);
  const BertW<const double> W = bind_bert<const double>(table, theta.data());
  const double loss = g.loss_and_gradient(c, W, batch, w);
  auto f = [&] {
    double s = 0;
    for (size_t b = 0; b < kMasked.size(); ++b) s += summed_loss(kMasked[b], kTargets[b], c, W);
    return w * s;
  };
  EXPECT_NEAR(loss, f(), kReorderedDouble * std::abs(loss));
  const double worst = check_every_tensor(table, theta.data(), g.grad.data(), f, 1e-300);
  char text[32];
  std::snprintf(text, sizeof text, "%.2e", worst);
  ::testing::Test::RecordProperty("worst_relative_error", text);
}

TEST(BertGrad, SummedLossGradientMatchesFiniteDifferences) { check_model_gradient(false); }
TEST(BertGrad, MeanLossGradientMatchesFiniteDifferences) { check_model_gradient(true); }

TEST(BertGrad, OneSequenceAloneEqualsItsShareOfABatch) {
  const ModelConfig c = small_config();
  const ParamTable table(c);
  const std::vector<double> theta = random_theta(table, 3);
  const BertW<const double> W = bind_bert<const double>(table, theta.data());
  BertGradient<double> all(table), one(table);
  all.loss_and_gradient(c, W, masked_batch(kMasked, kTargets, c.l_max), 1.0);
  std::vector<double> sum(table.total(), 0.0);
  for (size_t b = 0; b < kMasked.size(); ++b) {
    one.loss_and_gradient(c, W, masked_batch({kMasked[b]}, {kTargets[b]}, static_cast<int>(kMasked[b].size())), 1.0);
    for (size_t k = 0; k < sum.size(); ++k) sum[k] += one.grad[k];
  }
  const Eigen::Map<const Vec<double>> a(all.grad.data(), sum.size()), b(sum.data(), sum.size());
  EXPECT_LT(relative_error(a, b), kReorderedDouble);
  // Padded columns carry no gradient: two sequences of lengths 6 and 3 padded to ℓ_max = 9 leave
  // W_p[:, 7 … 9] with exactly zero gradient (a padded key seen by a real query would not).
  BertGradient<double> two(table);
  two.loss_and_gradient(c, W, masked_batch({kMasked[0], kMasked[1]}, {kTargets[0], kTargets[1]}, c.l_max), 1.0);
  const ParamEntry& Wp = table.at("W_p");
  const Eigen::Map<const MatD> dW_p(two.grad.data() + Wp.offset, c.d_e, c.l_max);
  EXPECT_GT(dW_p.col(5).norm(), 0.0);
  EXPECT_EQ(dW_p.rightCols(3).norm(), 0.0);
}

TEST(BertGrad, NoMaskedPositionMeansZeroLossAndZeroGradient) {
  const ModelConfig c = small_config();
  const ParamTable table(c);
  const std::vector<double> theta = random_theta(table, 4);
  BertGradient<double> g(table);
  const double loss = g.loss_and_gradient(c, bind_bert<const double>(table, theta.data()),
                                          masked_batch({{7, 1, 2, 8}}, {{0, 0, 0, 0}}, 4), 1.0);
  EXPECT_EQ(loss, 0.0);
  for (double v : g.grad) ASSERT_EQ(v, 0.0);
}

TEST(BertGrad, BatchesAreCheckedAgainstTheModel) {
  const ModelConfig c = small_config();
  const ParamTable table(c);
  const std::vector<double> theta = random_theta(table, 5);
  const BertW<const double> W = bind_bert<const double>(table, theta.data());
  BertCache<double> cache;
  EXPECT_THROW(etransformer_forward<double>(c, W, masked_batch({{7, 9}}, {{0, 0}}, 2), 1.0, cache), Error);
  EXPECT_THROW(etransformer_forward<double>(c, W, masked_batch({{7, 1}}, {{0, 1}}, c.l_max + 1), 1.0, cache), Error);
  Batch b = masked_batch({{7, 1}}, {{0, 1}}, 2);
  b.targets.pop_back();
  EXPECT_THROW(etransformer_forward<double>(c, W, b, 1.0, cache), Error);
}

}  // namespace test_bert_grad
