// The training forward/backward of the encoder-decoder (core/gradients/grad_edtransformer.cpp):
//  - its batched forward gives, column by column, the P of core's Algorithm 8 on each unpadded
//    pair (x padded behind a causal mask, z padded and key-masked in lines 5 and 16);
//  - its gradient of the summed loss agrees with central differences of the loss computed by
//    core's edtransformer (an independent forward), for every tensor, the encoder's included;
//  - a batch's gradient is the sum of its pairs' gradients;
//  - the encoder learns only through the cross-attention's keys and values: with them zero, every
//    encoder gradient is exactly 0; padded context columns get no gradient.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/algorithms/algorithms.hpp"
#include "test_ed_support.hpp"

namespace test_ed_grad {

using namespace sf;
using namespace sf::test;

namespace {

// L_enc = L_dec = 2, H = 2, d_e = 6, d_attn = 3, d_mid = 2 (≠ d_attn), d_mlp = 8, ℓ_max = 7; N_V = 7
// (bos_token 6, eos_token 7).
ModelConfig grad_config() { return ed_test_config(2, 2, 2, 6, 3, 2, 8, 7, {"a", "b", "c", "d"}); }

struct GradModel : SpreadModel {
  GradModel() : SpreadModel(grad_config(), 2, 0.4) {}
};

}  // namespace

TEST(EdGrad, BatchedForwardEqualsAlgorithm8ColumnByColumn) {
  const GradModel s;
  const Batch b = pair_batch(kEdPairs, s.c.l_max, s.c.l_max);  // x and z both padded to ℓ_max = 7
  ASSERT_EQ(b.z_lengths, (std::vector<int>{3, 7, 4}));
  EdCache<double> cache;
  const double loss = edtransformer_forward<double>(s.c, s.W(), b, 1.0, cache);
  for (size_t k = 0; k < kEdPairs.size(); ++k) {
    const MatD P = edtransformer<double>(kEdPairs[k].z, kEdPairs[k].x, s.c, s.W());  // (N_V, ℓ_x), unpadded
    const MatD got = cache.loss.P.middleCols(static_cast<Eigen::Index>(k) * b.l, P.cols());
    EXPECT_LT((got - P).cwiseAbs().maxCoeff(), kReorderedDouble) << "pair " << k + 1;
  }
  EXPECT_NEAR(loss, ed_summed_loss(kEdPairs, s.c, s.W()), kReorderedDouble * loss);
  // Without the key padding, the short contexts' padding would be attended to: P would differ.
  Batch unmasked = b;
  unmasked.z_lengths.assign(b.B, b.l_z);
  EdCache<double> other;
  edtransformer_forward<double>(s.c, s.W(), unmasked, 1.0, other);
  // A real difference: 10⁵ times kReorderedDouble, the rounding two equal computations may differ by.
  EXPECT_GT((other.loss.P.leftCols(4) - cache.loss.P.leftCols(4)).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_LT((other.loss.P.middleCols(7, 3) - cache.loss.P.middleCols(7, 3)).cwiseAbs().maxCoeff(), kReorderedDouble);  // ℓ_z = 7: no padding
}

TEST(EdGrad, GradientMatchesFiniteDifferencesForEveryTensor) {
  GradModel s;
  const Batch b = pair_batch(kEdPairs);
  EdGradient<double> g(s.table);
  const double loss = g.loss_and_gradient(s.c, s.W(), b, 1.0);
  EXPECT_NEAR(loss, ed_summed_loss(kEdPairs, s.c, s.W()), kReorderedDouble * loss);
  // the encoder's tensors too get a gradient of their own (min_share)
  const double worst =
      check_every_tensor(s.table, s.theta.data(), g.grad.data(), [&] { return ed_summed_loss(kEdPairs, s.c, s.W()); }, 1e-4);
  char digits[32];
  std::snprintf(digits, sizeof digits, "%.2e", worst);
  RecordProperty("worst_relative_error", digits);
}

TEST(EdGrad, ABatchsGradientIsTheSumOfItsPairs) {
  const GradModel s;
  EdGradient<double> batch(s.table), one(s.table);
  const double loss = batch.loss_and_gradient(s.c, s.W(), pair_batch(kEdPairs, 7, 7), 1.0);
  Vec<double> sum = Vec<double>::Zero(static_cast<Eigen::Index>(s.table.total()));
  double losses = 0;
  for (const Example& ex : kEdPairs) {
    losses += one.loss_and_gradient(s.c, s.W(), pair_batch({ex}), 1.0);
    sum += Eigen::Map<const Vec<double>>(one.grad.data(), sum.size());
  }
  EXPECT_NEAR(loss, losses, kReorderedDouble * loss);
  EXPECT_LT(relative_error(Eigen::Map<const Vec<double>>(batch.grad.data(), sum.size()), sum), kReorderedDouble);
  // The mean: each term weighs 1/#targets.
  const Batch b = pair_batch(kEdPairs);
  ASSERT_EQ(b.n_targets(), 3 + 2 + 5);
  EXPECT_NEAR(batch.loss_and_gradient(s.c, s.W(), b, 0.1), losses / 10, kReorderedDouble * losses);
}

TEST(EdGrad, AnEarlierBatchOfTheSameShapeLeavesNothingBehind) {
  // The trainer reuses one EdGradient for every step of one shape: a step must not depend on the
  // last one (here, one without padding, then the padded batch).
  const GradModel s;
  const Batch padded = pair_batch(kEdPairs, 7, 7);
  Batch full = padded;
  full.z_lengths.assign(full.B, full.l_z);
  EdGradient<double> reused(s.table), fresh(s.table);
  reused.loss_and_gradient(s.c, s.W(), full, 1.0);
  const double a = reused.loss_and_gradient(s.c, s.W(), padded, 1.0);
  const double b = fresh.loss_and_gradient(s.c, s.W(), padded, 1.0);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(std::equal(reused.grad.begin(), reused.grad.end(), fresh.grad.begin()));
}

TEST(EdGrad, TheEncoderLearnsOnlyThroughTheCrossAttention) {
  GradModel s;
  EdGradient<double> g(s.table);
  const Batch b = pair_batch(kEdPairs, 7, 7);
  // Padded context columns get no gradient (their keys are masked in lines 5 and 16).
  g.loss_and_gradient(s.c, s.W(), b, 1.0);
  for (int k = 0; k < b.B; ++k) {
    const Eigen::Index pad = b.l_z - b.z_lengths[k];
    EXPECT_EQ(g.ws.enc.dX.middleCols(k * b.l_z + b.z_lengths[k], pad).cwiseAbs().sum(), 0.0) << "pair " << k + 1;
    EXPECT_GT(g.ws.enc.dX.middleCols(k * b.l_z, b.z_lengths[k]).cwiseAbs().minCoeff(), 0.0) << "pair " << k + 1;
  }
  // With W_k = W_v = 0 in every cross-attention, P does not depend on Z: every encoder tensor's
  // gradient is exactly 0, while the decoder's are not.
  for (const ParamEntry& e : s.table.entries())
    if (e.name.find("cross_attn.W_k") != std::string::npos || e.name.find("cross_attn.W_v") != std::string::npos)
      std::fill_n(s.theta.begin() + e.offset, e.size(), 0.0);
  g.loss_and_gradient(s.c, s.W(), b, 1.0);
  for (const ParamEntry& e : s.table.entries()) {
    const double norm = Eigen::Map<const Vec<double>>(g.grad.data() + e.offset, e.size()).norm();
    if (e.name.rfind("enc.", 0) == 0) {
      EXPECT_EQ(norm, 0.0) << e.name;
    } else if (e.role == ParamRole::Weight && e.name.find("cross_attn") == std::string::npos) {
      EXPECT_GT(norm, 0.0) << e.name;
    }
  }
}

}  // namespace test_ed_grad
