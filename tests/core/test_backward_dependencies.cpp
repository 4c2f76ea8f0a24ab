// Dependencies on hover for gradient cells (core/trace/backward_dependencies.cpp; Stepformer's
// backward listings, not in the paper): every value a traced backward binds has a rule, and the
// rules name exactly the cells that change a gradient cell (perturbation, in double).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "core/arch/architecture.hpp"
#include "core/trace/dependencies.hpp"
#include "core/training/training.hpp"
#include "test_backprop_support.hpp"
#include "test_bert_support.hpp"
#include "test_ed_support.hpp"

using namespace sf;
using namespace sf::test;

namespace {

// One traced update of the architecture's training algorithm (13, 12 or 11) on one example: the
// forward pass nested in its loss line, the backward pass nested in its update line.
Trace traced_update(const ModelConfig& c, const Example& ex, std::vector<std::vector<int>> masks = {}) {
  Model m = spread_model(c, 3);
  const Architecture& a = architecture(c);
  const std::unique_ptr<ModelGradient> g = a.gradient(m.table);
  const std::unique_ptr<PaperTraining> alg = a.paper_training(1, 1);
  TrainOptions opt;
  opt.given_masks = std::move(masks);
  Rng rng(1);
  Trace t;
  Tracer tr(t);
  alg->step({ex}, m, 0.1f, opt, *g, rng, &tr);
  return t;
}

}  // namespace

// Every value every backward event binds, with a sample cell each (its last cell: the deepest
// position, where masks and sums matter most): the rule must exist.
void expect_every_backward_value_has_a_rule(const Trace& t, const std::string& what) {
  std::set<std::tuple<int, int, int, std::string>> seen;
  int checked = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.pass != Pass::Backward) continue;
    for (const Value& v : e.values) {
      if (v.kind == ValueKind::Mask || v.kind == ValueKind::Tokens) continue;  // forward inputs read as they are
      const int rows = static_cast<int>(v.m.rows()), cols = static_cast<int>(v.m.cols());
      for (auto [r, c] : {std::pair{0, 0}, std::pair{rows - 1, cols - 1}}) {
        const CellDependencies d = cell_dependencies(t, k, v.name, r, c);
        ++checked;
        if (!d.rule && seen.insert({e.alg, e.line, static_cast<int>(e.kind), v.name}).second)
          ADD_FAILURE() << what << ": no rule for " << v.name << " at Algorithm " << e.alg << " adjoint of line "
                        << e.line << (e.kind == EventKind::SubStep ? " (sub-step)" : "") << ": " << d.reason;
      }
    }
  }
  EXPECT_GT(checked, 100) << what;
}

ModelConfig gpt_variant_mix(NormPosition p) {
  ModelConfig c = small_gpt();
  c.norm = Norm::RmsNorm;
  c.activation = Activation::SwiGLU;
  c.position = Position::Rope;
  c.H_kv = 1;
  c.tied_unembedding = true;
  c.norm_position = p;
  return c;
}

}  // namespace

TEST(BackwardDependencies, EveryValueOfAGptBackwardHasARule) {
  for (const Mix& m : gpt_mixes()) expect_every_backward_value_has_a_rule(traced_update(m.c, {{}, sample_x()}), m.name);
  for (NormPosition p : {NormPosition::Pre, NormPosition::Post})
    expect_every_backward_value_has_a_rule(traced_update(gpt_variant_mix(p), {{}, sample_x()}),
                                           p == NormPosition::Pre ? "RMSNorm+SwiGLU+RoPE+H_kv=1+tied, pre-LN"
                                                                  : "RMSNorm+SwiGLU+RoPE+H_kv=1+tied, post-LN");
}

TEST(BackwardDependencies, EveryValueOfABertBackwardHasARule) {
  ModelConfig c = bert_test_config(2, 2, 8, 4, 3, 10, 6, 12, {"a", "b", "c", "d"});
  expect_every_backward_value_has_a_rule(traced_update(c, {{}, {1, 2, 3, 4, 2}}, {{2, 4}}), "BERT post-LN");
  c.norm_position = NormPosition::Pre;
  expect_every_backward_value_has_a_rule(traced_update(c, {{}, {1, 2, 3, 4, 2}}, {{2, 4}}), "BERT pre-LN");
}

TEST(BackwardDependencies, EveryValueOfAnEncoderDecoderBackwardHasARule) {
  ModelConfig c = ed_test_config(2, 2, 2, 8, 4, 3, 10, 12, {"a", "b", "c", "d"});
  expect_every_backward_value_has_a_rule(traced_update(c, {{1, 2, 3}, {4, 1, 2, 5}}), "encoder-decoder post-LN");
  c.norm_position = NormPosition::Pre;
  c.position = Position::Rope;
  expect_every_backward_value_has_a_rule(traced_update(c, {{1, 2, 3}, {4, 1, 2, 5}}), "encoder-decoder pre-LN, RoPE");
}
