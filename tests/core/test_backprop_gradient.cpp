// The traced backward (core/backprop/) against the batched backward training uses
// (core/gradients/): two implementations of ∇loss(θ), one per head, per column and per line as the
// backward listings say, one fused over the batch. They agree for the paper's GPT and every variant
// mix, in double and in float, so that stepping and training can never disagree.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/arch/architecture.hpp"
#include "core/backprop/traced_backward.hpp"
#include "core/gradients/sequence_gradient.hpp"
#include "core/model/error.hpp"
#include "core/training/training.hpp"
#include "grad_check.hpp"
#include "test_backprop_support.hpp"

namespace test_backprop_gradient {

using namespace sf;
using namespace sf::test;

namespace {

// How far two computations of the same gradient may be apart. Both sum the same terms in other orders
// (per head against all heads stacked, per column against a matrix product): each entry of ∇θ is the
// end of a chain of about 12 sums (6 forward, 6 back through a layer's lines, 2 layers) of at most
// n = 10 terms here (ℓ = 7, d_e = 8, d_mlp = 10), with terms up to κ = 10 times the sum they cancel to.
// The worst case, every rounding the same way on both sides: 2 · 12 · γ_10 · κ ≈ 2400 u.
//  - double (u = 2⁻⁵³): 2.7e-13, so 1e-12 holds every tensor with a margin (measured: 5e-15);
//  - float (u = 2⁻²⁴): the worst case is 1.4e-4. Independent roundings add like a random walk (Higham,
//    §2.8): √(2 · 12 · 10) · u · κ ≈ 9e-6 for one tensor, so 1e-5 a tensor. Issue 24 asks ≤ 1e-6 for ∇θ: the
//    whole vector, whose norm is dominated by the large tensors where nothing cancels (κ ≈ 1):
//    √(2 · 12 · 10) · u ≈ 9e-7, within the 1e-6 (measured: 1.1e-7–1.8e-7 over the mixes). A single small
//    tensor that cancels (∇b_q, whose κ is the largest) measured up to 1.1e-6 when only the order of the
//    sums changed (OpenBLAS's products, the softmax's reciprocal; session 19), so it is held to 1e-5.
const double kDoubleAgreement = 1e-12;
const double kFloatAgreement = 1e-6;        // ∇θ as a whole (issue 24)
const double kFloatTensorAgreement = 1e-5;  // each tensor

// Every tensor of ∇θ: relative error ≤ tol by norm, except a self-attention's b_k without RoPE,
// whose gradient is exactly 0 (softmax ignores the constant shift b_kᵀq of a score column:
// grad_check.hpp) and so is rounding noise on both sides, checked by size: ≤ γ_100 of ‖∇θ‖ (a
// hundred-term sum's rounding in the precision of `noise_u`).
void expect_same_gradient(const ModelConfig& c, const ParamTable& table, const std::vector<double>& traced,
                          const std::vector<double>& batched, double tol, double noise_u) {
  const Eigen::Index n = static_cast<Eigen::Index>(table.total());
  const double scale = Eigen::Map<const Vec<double>>(batched.data(), n).norm();
  const double noise = 100 * noise_u / (1 - 100 * noise_u) * scale;
  for (const ParamEntry& e : table.entries()) {
    const Eigen::Index k = static_cast<Eigen::Index>(e.size());
    const Eigen::Map<const Vec<double>> a(traced.data() + e.offset, k), b(batched.data() + e.offset, k);
    if (zero_by_softmax_shift(e.name) && c.position != Position::Rope) {
      EXPECT_LT(a.norm(), noise) << e.name;
      EXPECT_LT(b.norm(), noise) << e.name;
      continue;
    }
    EXPECT_LT(relative_error(a, b), tol) << e.name;
  }
}

}  // namespace

TEST(BackpropGradient, TracedEqualsBatchedInDouble) {
  for (const Mix& mix : gpt_mixes()) {
    SCOPED_TRACE(mix.name);
    const Model m = spread_model(mix.c, 7);
    const Batch batch = dtraining_batch(sample_x(), mix.c);
    const SequenceGradient batched = sequence_gradient(m, batch);  // the batched backward, in double
    Trace trace;
    Tracer tracer(trace);
    const TracedGradient<double> traced = traced_backward<double>(m, batch, &tracer);
    EXPECT_NEAR(traced.loss, batched.loss, kDoubleAgreement * batched.loss);
    expect_same_gradient(mix.c, m.table, traced.grad, batched.grad, kDoubleAgreement, kDoubleU);
    ASSERT_EQ(traced.stream.X.size(), static_cast<size_t>(mix.c.L + 1));
    ASSERT_EQ(batched.stream.X.size(), traced.stream.X.size());
    for (size_t l = 0; l < traced.stream.X.size(); ++l)
      EXPECT_LT(relative_error(traced.stream.X[l], batched.stream.X[l]), kDoubleAgreement) << "∇X entering layer " << l + 1;
  }
}

TEST(BackpropGradient, TracedEqualsBatchedInFloat) {
  for (const Mix& mix : gpt_mixes()) {
    SCOPED_TRACE(mix.name);
    const Model m = spread_model(mix.c, 7);
    const Batch batch = dtraining_batch(sample_x(), mix.c);
    const std::unique_ptr<ModelGradient> g = architecture(m.config).gradient(m.table);  // training's, in float
    const float loss = g->loss_and_gradient(m, batch, 1.0f);
    const std::vector<double> batched(g->grad(), g->grad() + g->grad_size());
    const TracedGradient<float> traced = traced_backward<float>(m, batch, nullptr);
    EXPECT_NEAR(traced.loss, loss, kFloatAgreement * loss);
    const std::vector<double> traced_grad(traced.grad.begin(), traced.grad.end());
    const Eigen::Index n = static_cast<Eigen::Index>(traced_grad.size());
    EXPECT_LT(relative_error(Eigen::Map<const Vec<double>>(traced_grad.data(), n),
                             Eigen::Map<const Vec<double>>(batched.data(), n)),
              kFloatAgreement)
        << "∇θ as a whole";
    expect_same_gradient(mix.c, m.table, traced_grad, batched, kFloatTensorAgreement, kFloatU);
  }
}

// The traced backward without a tracer computes the same ∇θ as with one (tracing only records).
TEST(BackpropGradient, TracingDoesNotChangeTheGradient) {
  const Model m = spread_model(gpt_mixes()[1].c, 3);
  const Batch batch = dtraining_batch(sample_x(), m.config);
  Trace trace;
  Tracer tracer(trace);
  const TracedGradient<double> with = traced_backward<double>(m, batch, &tracer);
  const TracedGradient<double> without = traced_backward<double>(m, batch, nullptr);
  EXPECT_EQ(with.grad, without.grad);
  EXPECT_GT(trace.size(), 0u);
}

// The prefix-LM mix scores only the positions after the prefix, as DTraining does.
TEST(BackpropGradient, PrefixBatchHasNoLossInsideThePrefix) {
  ModelConfig c = small_gpt();
  c.mask = MaskKind::Prefix;
  const Batch b = dtraining_batch(sample_x(), c);  // "=" at position 3: p = 3
  EXPECT_EQ(b.targets, (std::vector<int>{0, 0, 3, 1, 4, 2, 0}));
}

TEST(BackpropGradient, OtherArchitecturesAndBatchesGetAClearError) {
  const Model m = spread_model(small_gpt(), 1);
  Batch two = make_batch({sample_x(), sample_x()}, 7, m.config.eos_token());
  try {
    traced_backward<double>(m, two, nullptr);
    FAIL() << "a batch of two was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("B = 1"), std::string::npos) << e.what();
  }
}

}  // namespace test_backprop_gradient
