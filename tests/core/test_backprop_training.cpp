// Algorithm 13 line 6 stepped (core/algorithms/alg13_dtraining.cpp): with a tracer, DTraining nests the
// traced backward's frames before line 6's event; the update still uses the batched gradient, and the
// traced ∇θ equals it, so stepping shows the gradient training applies.
#include <gtest/gtest.h>

#include <memory>

#include "core/arch/architecture.hpp"
#include "core/training/training.hpp"
#include "grad_check.hpp"
#include "test_backprop_support.hpp"

namespace test_backprop_training {

using namespace sf;
using namespace sf::test;

namespace {

// One traced step of Algorithm 13 on x = sample_x(), from the same θ as `model`.
struct TracedStep {
  Model model;
  Trace trace;
  explicit TracedStep(const Model& start, bool traced) : model(start) {
    DTraining alg(1, 1);
    const std::unique_ptr<ModelGradient> g = architecture(model.config).gradient(model.table);
    Rng rng(1);
    Tracer tracer(trace);
    alg.step({Example{{}, sample_x()}}, model, 0.1f, TrainOptions{}, *g, rng, traced ? &tracer : nullptr);
  }
};

const Value* value_of(const Trace& tr, LineRef ref, const std::string& name, int l = 0) {
  return bound(tr, find_event(tr, ref, EventKind::Line, l), name);
}

}  // namespace

TEST(BackpropTraining, Algorithm13Line6NestsTheBackwardBeforeItsEvent) {
  const TracedStep s(spread_model(small_gpt(), 2), true);
  const Trace& tr = s.trace;
  const size_t line5 = find_event(tr, lines::d_training::loss);
  const size_t enter = find_event(tr, LineRef{10, 0, Pass::Backward}, EventKind::Enter);
  const size_t line6 = find_event(tr, lines::d_training::update);
  ASSERT_LT(line6, tr.size());
  EXPECT_EQ(enter, line5 + 1);  // right after the loss line, the backward listings of Algorithm 10
  EXPECT_EQ(tr.events[enter].depth, 1);
  EXPECT_EQ(tr.caller_line(enter), line6);  // … called from line 6
  EXPECT_EQ(tr.step_over(line5), line6);    // stepping over line 5 skips nothing of line 6's own
  EXPECT_EQ(tr.step_into(line5), enter);    // and "step into" reaches the backward
  // The first backward line is the loss line's adjoint, inside the frame
  EXPECT_EQ(tr.events[enter + 1].ref(), lines::d_training::loss.adjoint());
  // Every event between the Enter and line 6 is a backward one
  for (size_t k = enter; k < line6; ++k) EXPECT_EQ(tr.events[k].pass, Pass::Backward) << k;
}

TEST(BackpropTraining, TracingLeavesTrainingUnchanged) {
  const Model start = spread_model(small_gpt(), 2);
  const TracedStep traced(start, true), plain(start, false);
  EXPECT_EQ(traced.model.theta, plain.model.theta);  // bitwise: the update uses the batched gradient either way
}

TEST(BackpropTraining, TheSteppedGradientIsTheOneLine6Applies) {
  const TracedStep s(spread_model(small_gpt(), 2), true);
  const Trace& tr = s.trace;
  // Line 6 binds ∇NAME for every tensor (the batched gradient, float); the backward listings bind the
  // same gradients where their lines complete them. Float against float, two implementations: within
  // 1e-6 relative (test_backprop_gradient.cpp derives it).
  auto expect_same = [&](const Value* stepped, const std::string& tensor) {
    const Value* applied = value_of(tr, lines::d_training::update, "∇" + tensor);
    ASSERT_TRUE(stepped && applied) << tensor;
    ASSERT_EQ(stepped->m.rows(), applied->m.rows()) << tensor;
    ASSERT_EQ(stepped->m.cols(), applied->m.cols()) << tensor;
    EXPECT_LT(relative_error(MatF(stepped->m), MatF(applied->m)), 1e-6) << tensor;
  };
  expect_same(value_of(tr, lines::d_transformer::embed.adjoint(), "∇W_e"), "W_e");
  expect_same(value_of(tr, lines::d_transformer::embed.adjoint(), "∇W_p"), "W_p");
  expect_same(value_of(tr, lines::d_transformer::P.adjoint(), "∇W_u"), "W_u");
  expect_same(value_of(tr, lines::d_transformer::final_norm.adjoint(), "∇γ"), "gamma");
  for (int l = 1; l <= 2; ++l) {
    const std::string p = "layer" + std::to_string(l) + ".";
    expect_same(value_of(tr, lines::d_transformer::mlp.adjoint(), "∇W_mlp1", l), p + "W_mlp1");
    expect_same(value_of(tr, lines::d_transformer::mlp.adjoint(), "∇W_mlp2", l), p + "W_mlp2");
    expect_same(value_of(tr, lines::d_transformer::norm1.adjoint(), "∇γ¹_l", l), p + "gamma1");
    expect_same(value_of(tr, lines::d_transformer::norm2.adjoint(), "∇β²_l", l), p + "beta2");
    expect_same(value_of(tr, lines::mh_attention::V_tilde.adjoint(), "∇W_o", l), p + "attn.W_o");
  }
}

}  // namespace test_backprop_training
