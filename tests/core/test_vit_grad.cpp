// The vision transformer's training forward/backward (core/gradients/grad_vit.cpp):
//  - its batched forward gives, image by image, the P of core's traced Algorithm 9 on patches
//    (vit_etransformer, an independent forward);
//  - its gradient of the class-token loss agrees with central differences of that forward's loss,
//    every tensor, double, for p = 4 and p = 2;
//  - the patches are cut row by row, each patch's pixels row by row, scaled by 1/16.
#include <gtest/gtest.h>

#include <cmath>

#include "core/arch/vit.hpp"
#include "core/gradients/grad_vit.hpp"
#include "core/model/error.hpp"
#include "grad_check.hpp"
#include "test_vit_support.hpp"

namespace test_vit_grad {

using namespace sf;
using namespace sf::test;

namespace {

const std::vector<int> kIds{3, 10, 1};  // classes 2, 9, 0

std::vector<Tokens> images() { return {random_image(1), random_image(2), random_image(3)}; }

// Σ_b −log P_b[class_b, 1] by vit_etransformer.
double summed_loss(const std::vector<Tokens>& xs, const ModelConfig& c, const VitW<const double>& W) {
  double loss = 0;
  for (size_t b = 0; b < xs.size(); ++b) loss -= std::log(vit_etransformer<double>(xs[b], c, W)(kIds[b] - 1, 0));
  return loss;
}

void check_gradient(int patch) {
  const ModelConfig c = vit_test_config(patch);
  ASSERT_EQ(validate(c), "");
  const ParamTable table(c);
  std::vector<double> theta = spread_theta(table, 5, 0.4);
  const VitW<const double> W = bind_vit<const double>(table, theta.data());
  const std::vector<Tokens> xs = images();
  const Batch batch = image_batch(xs, kIds);
  VitGradient<double> g(table);
  const double loss = g.loss_and_gradient(c, W, batch, 1.0);
  auto f = [&] { return summed_loss(xs, c, W); };
  EXPECT_NEAR(loss, f(), kReorderedDouble * std::abs(loss));
  // Every tensor, W_patch, b_patch, e_cls and W_p among them, has a gradient (min_share > 0).
  check_every_tensor(table, theta.data(), g.grad.data(), f, 1e-300);
}

}  // namespace

TEST(VitGrad, PatchesAreCutRowByRowAndScaled) {
  Tokens img(kImagePixels);
  for (int k = 0; k < kImagePixels; ++k) img[k] = k % 17;
  const MatD P = image_patches<double>(img, 4);  // (16, 4)
  ASSERT_EQ(P.rows(), 16);
  ASSERT_EQ(P.cols(), 4);
  // Patch 2 (top right) starts at pixel (row 1, col 5): index 4; its second row at index 12.
  EXPECT_EQ(P(0, 1), (4 % 17) / 16.0);
  EXPECT_EQ(P(4, 1), (12 % 17) / 16.0);
  // Patch 3 (bottom left): pixel (row 5, col 1), index 32.
  EXPECT_EQ(P(0, 2), (32 % 17) / 16.0);
  EXPECT_EQ(image_patches<double>(img, 2).cols(), 16);
  EXPECT_THROW(image_patches<double>(Tokens(63, 0), 4), Error);
  img[5] = 17;
  EXPECT_THROW(image_patches<double>(img, 4), Error);
}

TEST(VitGrad, BatchedForwardEqualsTracedAlgorithm9) {
  const ModelConfig c = vit_test_config(4);
  const ParamTable table(c);
  const std::vector<double> theta = spread_theta(table, 4, 0.4);
  const VitW<const double> W = bind_vit<const double>(table, theta.data());
  const std::vector<Tokens> xs = images();
  VitCache<double> cache;
  vit_forward<double>(c, W, image_batch(xs, kIds), 1.0, cache);
  const int l = vit_tokens(4);
  for (size_t b = 0; b < xs.size(); ++b) {
    const MatD P = vit_etransformer<double>(xs[b], c, W);  // (10, ℓ_x)
    ASSERT_EQ(P.rows(), 10);
    ASSERT_EQ(P.cols(), l);
    EXPECT_LT((cache.loss.P.middleCols(static_cast<Eigen::Index>(b) * l, l) - P).cwiseAbs().maxCoeff(), kReorderedDouble);
  }
}

TEST(VitGrad, GradientMatchesFiniteDifferencesPatch4) { check_gradient(4); }
TEST(VitGrad, GradientMatchesFiniteDifferencesPatch2) { check_gradient(2); }

TEST(VitGrad, ConfigurationIsChecked) {
  ModelConfig c = vit_test_config(4);
  c.patch = 3;
  EXPECT_NE(validate(c).find("patch must be 2 or 4"), std::string::npos);
  c = vit_test_config(4);
  c.l_max = 20;
  EXPECT_NE(validate(c).find("l_max must be ℓ_x = 1 + (8/p)² = 5"), std::string::npos);
}

}  // namespace test_vit_grad
