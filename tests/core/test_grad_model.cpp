// The training forward/backward of the whole model (core/grad_dtransformer.cpp):
//  - its forward gives the values of core's Algorithm 10 (dtransformer), per sequence, in double
//    and in float, padded batches included;
//  - its gradient of the summed and of the mean loss agrees with central differences of the loss
//    computed by core's dtransformer (an independent forward), every parameter, double precision.
#include <gtest/gtest.h>

#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"
#include "core/gradients/grad.hpp"
#include "grad_check.hpp"

namespace test_grad_model {

using namespace sf;
using namespace sf::test;

namespace {

ModelConfig small_config() {
  ModelConfig c;
  c.L = 2;
  c.H = 2;
  c.d_e = 8;
  c.d_attn = 4;
  c.d_mid = 3;  // ≠ d_attn: key and value sizes must not be confused
  c.d_mlp = 12;
  c.l_max = 9;
  c.vocab = {"a", "b", "c", "d", "e"};  // N_V = 8
  return c;
}

std::vector<double> random_theta(const ParamTable& table, uint64_t seed) { return spread_theta(table, seed, 0.4); }

const std::vector<Tokens> kSequences{{7, 1, 3, 2, 5, 8}, {7, 4, 4, 8}, {7, 2, 5, 1, 1, 3, 2, 4, 8}};

// −Σ_{t=1}^{ℓ−1} log P[x[t+1], t] by core's Algorithm 10.
double summed_loss(const Tokens& x, const ModelConfig& c, const GptW<const double>& W) {
  const MatD P = dtransformer<double>(x, c, W);
  double loss = 0;
  for (size_t t = 0; t + 1 < x.size(); ++t) loss -= std::log(P(x[t + 1] - 1, t));
  return loss;
}

TEST(GradModel, ForwardEqualsAlgorithm10ForEverySequenceOfAPaddedBatch) {
  const ModelConfig c = small_config();
  const ParamTable table(c);
  const std::vector<double> theta = random_theta(table, 1);
  const GptW<const double> W = bind_gpt<const double>(table, theta.data());
  const Batch batch = make_batch(kSequences, c.l_max, c.eos_token());
  ASSERT_EQ(batch.n_targets(), 5 + 3 + 8);
  GptCache<double> cache;
  const double loss = dtransformer_forward<double>(c, W, batch, 1.0, cache);
  double want = 0;
  for (size_t b = 0; b < kSequences.size(); ++b) {
    const Tokens& x = kSequences[b];
    const MatD P = dtransformer<double>(x, c, W);  // (N_V, ℓ_b)
    const MatD got = cache.loss.P.middleCols(static_cast<Eigen::Index>(b) * c.l_max, x.size());
    EXPECT_LT((got - P).cwiseAbs().maxCoeff(), kReorderedDouble) << "sequence " << b + 1;
    want += summed_loss(x, c, W);
  }
  EXPECT_NEAR(loss, want, kReorderedDouble * want);

  // Float: the same within float rounding.
  Model m(c);
  for (size_t k = 0; k < theta.size(); ++k) m.theta[k] = static_cast<float>(theta[k]);
  GptCache<float> cf;
  const float loss_f = dtransformer_forward<float>(c, m.weights(), batch, 1.0f, cf);
  for (size_t b = 0; b < kSequences.size(); ++b) {
    const MatF P = dtransformer<float>(kSequences[b], c, m.weights());
    const MatF got = cf.loss.P.middleCols(static_cast<Eigen::Index>(b) * c.l_max, kSequences[b].size());
    // Batched (padded, one product over every sequence) against one sequence at a time: the same
    // sums cut in another order. Weights N(0, 0.4²): a sum of ≤ 12 terms has Σ|terms| ≈ 5 and an
    // error σ ≈ u·√(12/3)·5 ≈ 6e-7 (independent roundings, u = 2⁻²⁴); 2L + 1 = 5 of them before a
    // logit give ≈ 1.3e-6, and p = softmax moves by ≤ 2p·max|δlogit| ≲ 1.3e-6 for p ≤ ½.
    EXPECT_LT((got - P).cwiseAbs().maxCoeff(), 2e-6) << "sequence " << b + 1;
  }
  // Float against the double loss: 16 terms −log P, each off by ≲ 1.3e-6 (as above), relative to a
  // loss of ≈ 16·log 8: ≲ 1e-6 relative, 1e-4 leaves a factor 100.
  EXPECT_NEAR(loss_f, want, 1e-4 * want);
}

TEST(GradModel, ForwardEqualsAlgorithm10OnTheReferenceConfiguration) {
  const ModelConfig c;  // d_e = 64, L = 2, H = 4, d_attn = d_mid = 16, d_mlp = 256, ℓ_max = 64
  const Model m = Model::initialised(c, 3);
  Rng rng(9);
  std::vector<Tokens> xs(3);
  for (auto& x : xs) {
    x.push_back(c.bos_token());
    while (static_cast<int>(x.size()) < c.l_max) x.push_back(1 + static_cast<int>(rng.below(c.N_V() - 3)));
  }
  xs[1].resize(20);
  GptCache<float> cache;
  dtransformer_forward<float>(c, m.weights(), make_batch(xs, c.l_max, c.eos_token()), 1.0f, cache);
  for (size_t b = 0; b < xs.size(); ++b) {
    const MatF P = dtransformer<float>(xs[b], c, m.weights());
    const MatF got = cache.loss.P.middleCols(static_cast<Eigen::Index>(b) * c.l_max, xs[b].size());
    // As above, with sums of ≤ 256 terms but weights N(0, 0.02²): Σ|terms| ≲ 1, σ ≈ u·√(256/3) ≈ 5.5e-7
    // per sum, ≈ 1.2e-6 per logit, and p ≈ 1/N_V ≈ 0.03: 2p·max|δlogit| ≈ 7e-8.
    EXPECT_LT((got - P).cwiseAbs().maxCoeff(), 1e-6) << "sequence " << b + 1;
  }
}

// ∇loss(θ) of the whole model against central differences of a loss computed by core's
// dtransformer, every parameter tensor.
void check_model_gradient(bool mean) {
  const ModelConfig c = small_config();
  const ParamTable table(c);
  std::vector<double> theta = random_theta(table, 2);
  const Batch batch = make_batch(kSequences, c.l_max, c.eos_token());
  const double w = mean ? 1.0 / batch.n_targets() : 1.0;
  GptGradient<double> g(table);
  const GptW<const double> W = bind_gpt<const double>(table, theta.data());
  const double loss = g.loss_and_gradient(c, W, batch, w);
  auto f = [&] {
    double s = 0;
    for (const Tokens& x : kSequences) s += summed_loss(x, c, W);
    return w * s;
  };
  EXPECT_NEAR(loss, f(), kReorderedDouble * std::abs(loss));
  const double worst = check_every_tensor(table, theta.data(), g.grad.data(), f);
  ::testing::Test::RecordProperty("worst_relative_error", std::to_string(worst));
  // Positions past ℓ_max of the batch (W_p[:, 10…]) and never-used tokens get exactly 0.
  const Eigen::Map<const MatD> dW_e(g.grad.data() + table.find("W_e")->offset, c.d_e, c.N_V());
  EXPECT_EQ(dW_e.col(c.mask_token() - 1).norm(), 0.0);  // mask_token is in no sequence
}

TEST(GradModel, SummedLossGradientMatchesFiniteDifferences) { check_model_gradient(false); }
TEST(GradModel, MeanLossGradientMatchesFiniteDifferences) { check_model_gradient(true); }

TEST(GradModel, OneSequenceAloneEqualsItsShareOfABatch) {
  // Padding changes nothing: the gradient of a batch is the sum of its sequences' gradients.
  const ModelConfig c = small_config();
  const ParamTable table(c);
  const std::vector<double> theta = random_theta(table, 3);
  const GptW<const double> W = bind_gpt<const double>(table, theta.data());
  GptGradient<double> all(table), one(table);
  all.loss_and_gradient(c, W, make_batch(kSequences, c.l_max, c.eos_token()), 1.0);
  std::vector<double> sum(table.total(), 0.0);
  for (const Tokens& x : kSequences) {
    one.loss_and_gradient(c, W, make_batch({x}, static_cast<int>(x.size()), c.eos_token()), 1.0);
    for (size_t k = 0; k < sum.size(); ++k) sum[k] += one.grad[k];
  }
  const Eigen::Map<const Vec<double>> a(all.grad.data(), sum.size()), b(sum.data(), sum.size());
  EXPECT_LT(relative_error(a, b), kReorderedDouble);
}

TEST(GradModel, BatchesAreCheckedAgainstTheModel) {
  const ModelConfig c = small_config();
  const Model m(c);
  GptCache<float> cache;
  EXPECT_THROW(make_batch({{7, 1}, {}}, 4, c.eos_token()), Error);
  EXPECT_THROW(make_batch({{7, 1, 2, 3, 4}}, 4, c.eos_token()), Error);
  EXPECT_THROW(dtransformer_forward<float>(c, m.weights(), make_batch({{7, 9}}, 2, 1), 1.0f, cache), Error);
  EXPECT_THROW(dtransformer_forward<float>(c, m.weights(), make_batch({{7, 1}}, c.l_max + 1, 1), 1.0f, cache), Error);
}

}  // namespace

}  // namespace test_grad_model
