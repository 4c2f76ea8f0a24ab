// Dependencies on hover for gradient cells (core/trace/backward_dependencies.cpp; Stepformer's
// backward listings, not in the paper): every value a traced backward binds has a rule, and the
// rules name exactly the cells that change a gradient cell (perturbation, in double).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/arch/architecture.hpp"
#include "core/backprop/adjoints.hpp"
#include "core/trace/dependencies.hpp"
#include "core/training/training.hpp"
#include "test_backprop_support.hpp"
#include "test_bert_support.hpp"
#include "test_ed_support.hpp"
#include "dependency_closure.hpp"

namespace test_backward_dependencies {

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

namespace {

using Cell = DependencyCell;  // an input of the frame (its Enter binds it) and a 0-based cell

// Algorithm 6's adjoint for one column in double, traced, from its inputs ∇ê, e, γ (the forward's
// x̂ and 1/√(v + ε) computed here from e, as the forward's LayerNormCache holds them).
struct NormAdjoint {
  Norm norm;
  std::map<std::string, Vec<double>> in{{"∇ê", Vec<double>(5)}, {"e", Vec<double>(5)}, {"γ", Vec<double>(5)}};
  double eps = 1e-5;
  explicit NormAdjoint(Norm n) : norm(n) {
    in["∇ê"] << 0.7, -1.2, 0.4, 2.0, -0.3;
    in["e"] << 1.5, -0.4, 0.9, -2.2, 0.6;
    in["γ"] << 1.1, 0.8, -0.6, 1.3, 0.9;
  }
  Trace run() const {
    const Vec<double>& e = in.at("e");
    const double m = norm == Norm::RmsNorm ? 0.0 : e.mean();
    const double v = (e.array() - m).square().mean();
    const double rstd = 1 / std::sqrt(v + eps);
    const Vec<double> x_hat = (e.array() - m) * rstd;
    const MapV<const double> gamma(in.at("γ").data(), 5);
    Vec<double> dgamma = Vec<double>::Zero(5), dbeta = Vec<double>::Zero(5), de = Vec<double>::Zero(5);
    Trace t;
    Tracer tr(t);
    if (norm == Norm::RmsNorm)
      adjoint_rms_norm<double>(e, x_hat, rstd, gamma, eps, in.at("∇ê"), dgamma, de, &tr);
    else
      adjoint_layer_norm<double>(e, x_hat, rstd, gamma, eps, in.at("∇ê"), dgamma, dbeta, de, &tr);
    return t;
  }
};

}  // namespace

// Every cell of every value Algorithm 6's adjoint binds (sub-steps and lines 3, 2, 1; layer norm
// and RMSNorm): changing an input cell the rules name changes it, changing any other does not.
TEST(BackwardDependencies, LayerNormAdjointByPerturbation) {
  for (Norm norm : {Norm::LayerNorm, Norm::RmsNorm}) {
    NormAdjoint f(norm);
    const Trace base = f.run();
    ASSERT_EQ(base.events.front().kind, EventKind::Enter);
    for (size_t k = 1; k < base.size(); ++k)
      for (const Value& v : base.events[k].values)
        for (int r = 0; r < v.m.rows(); ++r) {
          const std::set<Cell> named = dependency_inputs(base, k, v.name, r, 0, 0);  // event 0: the frame's Enter
          for (auto& [name, x] : f.in)
            for (int i = 0; i < x.size(); ++i) {
              const double old = x(i);
              x(i) += 0.25 + 0.1 * i;
              const double now = f.run().events[k].values[&v - base.events[k].values.data()].m(r, 0);
              x(i) = old;
              // A cell that does not read x(i) is computed by the same operations on the same
              // numbers: bit for bit equal. One that reads it moves by about 0.25 × its
              // derivative, far above 1e-12 relative (∇m's Σ_i (e[i] − m) term, 0 up to rounding,
              // is the exception the rules name anyway: ∇m reads all of e through ∇v).
              const bool changed = std::abs(now - v.m(r, 0)) > 1e-12 * (1 + std::abs(v.m(r, 0)));
              EXPECT_EQ(changed, named.count({name, i, 0}) > 0)
                  << (norm == Norm::RmsNorm ? "RMSNorm " : "layer norm ") << v.name << "[" << r + 1 << "] at line "
                  << base.events[k].line << (base.events[k].kind == EventKind::SubStep ? " (sub-step)" : "")
                  << ": changing " << name << "[" << i + 1 << "] "
                  << (changed ? "changed it, but the rules do not name it" : "did not change it, but the rules name it");
            }
        }
  }
}

namespace {

// The first backward event at (alg, line) of kind `kind` with layer l (0: any) binding `name`.
size_t backward_event(const Trace& t, int alg, int line, const std::string& name, int l = 0,
                      EventKind kind = EventKind::Line) {
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.pass == Pass::Backward && e.kind == kind && e.alg == alg && e.line == line && (!l || e.idx.l == l) &&
        bound(t, k, name))
      return k;
  }
  return t.size();
}

std::string summary(const Trace& t, size_t k, const std::string& name, int r, int c) {
  if (k >= t.size()) return "no event binds " + name;
  const CellDependencies d = cell_dependencies(t, k, name, r, c);
  return d.rule ? d.summary() : "no rule: " + d.reason;
}

}  // namespace

// The lines whose sources are sums over whole models (the stream's lines, the loss, the embedding
// gather) cannot be re-run alone from a perturbed input: their exact sources are asserted on small
// known cases instead, each chosen so that a wrong rule names different cells.
TEST(BackwardDependencies, ArchitectureLinesNameTheirExactSources) {
  const Trace t = traced_update(small_gpt(), {{}, sample_x()});  // x = 1 2 5 3 1 4 2, pre-LN, L = 2
  // Loss line (Algorithm 13's line 5): column 2's target is x[3] = 5; other rows are 0.
  const size_t loss = backward_event(t, 13, 5, "∇P");
  EXPECT_EQ(summary(t, loss, "∇P", 4, 1), "← P[5, 2] and x[3]");
  EXPECT_NE(cell_dependencies(t, loss, "∇P", 3, 1).reason.find("not column 2's target"), std::string::npos);
  // Pre-LN line 7 of layer 2: the residual's ∇X plus column 3's Algorithm 6 adjoint.
  EXPECT_EQ(summary(t, backward_event(t, 10, 7, "∇X", 2), "∇X", 1, 2), "← ∇X[2, 3] and ∇e[2] (t = 3)");
  // Line 6: ∇X̃ is Algorithm 5's ∇X (both paths); the residual's partial ∇X passes unchanged.
  EXPECT_EQ(summary(t, backward_event(t, 10, 6, "∇X̃", 2), "∇X̃", 0, 4), "← ∇X[1, 5]");
  // Algorithm 5's line 3: head 2's ∇Y^2 is rows d_mid + 1 … 2 d_mid of ∇Y (d_mid = 3).
  EXPECT_EQ(summary(t, backward_event(t, 5, 3, "∇Y^2", 2), "∇Y^2", 0, 1), "← ∇Y[4, 2]");
  // Line 2: token 1 is at positions 1 and 5, so ∇W_e[:, 1] gathers both.
  EXPECT_EQ(summary(t, backward_event(t, 10, 2, "∇W_e"), "∇W_e", 2, 0),
            "← ∇W_e[:, v][3] (t = 1) and ∇W_e[:, v][3] (t = 5)");
  // Line 11: ∇W_u sums column t's ∇(W_u e) times X[:, t] over the 7 columns.
  const CellDependencies wu = cell_dependencies(t, backward_event(t, 10, 11, "∇W_u"), "∇W_u", 1, 2);
  ASSERT_EQ(wu.sources.size(), 8u) << wu.summary();
  EXPECT_EQ(wu.sources.back().text, "X[3, :]");
  EXPECT_EQ(t.events[wu.sources.back().event].pass, Pass::Forward);

  // Algorithm 7's ∇e reads the unembedding line's W_u (the forward pass's), column i.
  EXPECT_EQ(summary(t, backward_event(t, 7, 1, "∇e", 0), "∇e", 1, 0), "← W_u[:, 2] and ∇(W_u e)");

  // BERT: only masked positions (2 and 4) carry loss.
  const Trace b = traced_update(bert_test_config(1, 2, 8, 4, 3, 10, 6, 12, {"a", "b", "c", "d"}), {{}, {1, 2, 3, 4, 2}}, {{2, 4}});
  const size_t bl = backward_event(b, 12, 9, "∇P");
  EXPECT_EQ(summary(b, bl, "∇P", 1, 1), "← P[2, 2] and x[2]");
  EXPECT_NE(cell_dependencies(b, bl, "∇P", 1, 2).reason.find("carries no loss term"), std::string::npos);

  // Encoder-decoder: line 9's ∇Z sums line 16's ∇Z over the 2 decoder layers.
  const Trace ed = traced_update(ed_test_config(1, 2, 2, 8, 4, 3, 10, 12, {"a", "b", "c", "d"}), {{1, 2, 3}, {4, 1, 2, 5}});
  EXPECT_EQ(summary(ed, backward_event(ed, 8, 9, "∇Z"), "∇Z", 0, 1), "← ∇Z[1, 2] (l = 2) and ∇Z[1, 2] (l = 1)");
  EXPECT_EQ(summary(ed, backward_event(ed, 8, 16, "∇Z", 1), "∇Z", 0, 1), "← ∇Z[1, 2]");
  // Pre-LN: the encoder's final norm (line 9) receives that sum (the cross-attention is line 17
  // there, after its norm), column t per Algorithm 6 frame.
  ModelConfig pre = ed_test_config(1, 2, 2, 8, 4, 3, 10, 12, {"a", "b", "c", "d"});
  pre.norm_position = NormPosition::Pre;
  const Trace edp = traced_update(pre, {{1, 2, 3}, {4, 1, 2, 5}});
  size_t enter = edp.size();
  for (size_t k = 0; k < edp.size() && enter == edp.size(); ++k)
    if (edp.events[k].pass == Pass::Backward && edp.events[k].kind == EventKind::Enter && edp.events[k].alg == 6 &&
        edp.events[k].idx.t == 2 && edp.events[edp.caller_line(k)].ref() == lines::ed_transformer::enc_end.adjoint())
      enter = k;
  EXPECT_EQ(summary(edp, enter, "∇ê", 0, 0), "← ∇Z[1, 2] (l = 2) and ∇Z[1, 2] (l = 1)");
}

namespace {

// A line whose rule is a sum of single cells (a copy, a residual, a per-column or per-head or
// per-token sum): every frame's incoming gradient, Algorithm 5's lines 3 and 2, Algorithms 1 and 2,
// and the lines of 8, 9, 10 whose sources are all single cells (norm, attention, unembedding's ∇X,
// embedding, Algorithm 8's ∇Z). The loss line is −1/P, not a sum.
bool sum_rule(const Event& e, const Value& v, const CellDependencies& d) {
  if (v.name == "∇P" || v.name == "loss" || gradient_of(v.name).empty()) return false;
  for (const CellSource& s : d.sources)
    for (const CellBlock& b : s.blocks)
      if (b.rows != 1 || b.cols != 1) return false;
  if (e.kind == EventKind::Enter || e.alg == 1 || e.alg == 2) return true;
  if (e.alg == 5) return e.line == 2 || e.line == 3;
  return e.alg >= 8 && e.alg <= 10;
}

// Every cell of every such value equals the sum of the cells its rule names, within float's
// rounding of that sum: the traced values are float, and a sum of n terms in any order is within
// n · ε_float · Σ|terms| of the exact one (a copy, n = 1, is exact). A rule that named a wrong cell
// or left a term out would miss by a whole term.
void expect_sums(const Trace& t, const std::string& what) {
  int checked = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.pass != Pass::Backward) continue;
    for (const Value& v : e.values) {
      if (v.kind != ValueKind::Matrix) continue;
      for (int c = 0; c < v.m.cols(); ++c)
        for (int r = 0; r < v.m.rows(); ++r) {
          const CellDependencies d = cell_dependencies(t, k, v.name, r, c);
          if (!d.rule || !sum_rule(e, v, d)) continue;
          double sum = 0, size = 0;
          for (const CellSource& s : d.sources) {
            const Value* x = bound(t, s.event, s.value);
            ASSERT_NE(x, nullptr) << s.value;
            const double term = x->m(s.blocks[0].row0, s.blocks[0].col0);
            sum += term, size += std::abs(term);
          }
          const double tol = std::max<size_t>(d.sources.size(), 1) * std::numeric_limits<float>::epsilon() * size;
          ASSERT_NEAR(v.m(r, c), sum, tol) << what << ": " << v.name << "[" << r + 1 << ", " << c + 1 << "] at Algorithm "
                                           << e.alg << " adjoint of line " << e.line << " " << d.summary();
          ++checked;
        }
    }
  }
  EXPECT_GT(checked, 1000) << what;
}

}  // namespace

TEST(BackwardDependencies, SumLinesEqualTheSumOfTheCellsTheirRulesName) {
  expect_sums(traced_update(small_gpt(), {{}, sample_x()}), "GPT pre-LN");
  expect_sums(traced_update(gpt_variant_mix(NormPosition::Post), {{}, sample_x()}), "GPT post-LN, RMSNorm, H_kv = 1, tied");
  ModelConfig extras = small_gpt();
  extras.token_types = 2, extras.embedding_norm = true, extras.unembedding_bias = true;
  expect_sums(traced_update(extras, {{}, sample_x()}), "GPT with the ecosystem extras");
  expect_sums(traced_update(bert_test_config(2, 2, 8, 4, 3, 10, 6, 12, {"a", "b", "c", "d"}), {{}, {1, 2, 3, 4, 2}}, {{2, 4}}), "BERT");
  ModelConfig ed = ed_test_config(2, 2, 2, 8, 4, 3, 10, 12, {"a", "b", "c", "d"});
  expect_sums(traced_update(ed, {{1, 2, 3}, {4, 1, 2, 5}}), "encoder-decoder post-LN");
  ed.norm_position = NormPosition::Pre;
  expect_sums(traced_update(ed, {{1, 2, 3}, {4, 1, 2, 5}}), "encoder-decoder pre-LN");
}

namespace {

// ∇W_u[v, i] (untied) or ∇W_e[i, v] (tied: with the gather of ∇e_t) recomputed from the cells its
// rule names: the Algorithm 1 frames' ∇W_e[:, v][i] plus Σ_t ∇(W_u e)[v] (column t) · X[i, t].
void expect_unembedding_products(const Trace& t, size_t k, const std::string& name, bool transposed) {
  ASSERT_LT(k, t.size()) << name;
  const Value* g = bound(t, k, name);
  int checked = 0;
  for (int r = 0; r < g->m.rows(); ++r)
    for (int c = 0; c < g->m.cols(); ++c) {
      const int v = transposed ? c : r, i = transposed ? r : c;
      const CellDependencies d = cell_dependencies(t, k, name, r, c);
      double sum = 0, size = 0;
      std::vector<std::pair<int, double>> logits;  // (t, ∇(W_u e)[v] of column t)
      const Value* X = nullptr;
      for (const CellSource& s : d.sources) {
        const Value* x = bound(t, s.event, s.value);
        ASSERT_NE(x, nullptr) << s.value;
        if (s.value == "X") X = x;
        else if (s.value.rfind("∇(W_u e", 0) == 0) logits.push_back({t.events[s.event].idx.t, x->m(v, 0)});
        else sum += x->m(i, 0), size += std::abs(x->m(i, 0));  // ∇W_e[:, v] of a position with token v
      }
      ASSERT_NE(X, nullptr) << d.summary();
      for (auto [col, l] : logits) sum += l * X->m(i, col - 1), size += std::abs(l * X->m(i, col - 1));
      // Float: a sum of at most 2ℓ terms within 2ℓ · ε_float · Σ|terms| (the products' own
      // roundings are within that too).
      const double n = 2.0 * X->m.cols() + 1;
      ASSERT_NEAR(g->m(r, c), sum, n * std::numeric_limits<float>::epsilon() * size) << name << "[" << r + 1 << ", " << c + 1 << "] " << d.summary();
      ++checked;
    }
  EXPECT_EQ(checked, g->m.size());
}

}  // namespace

TEST(BackwardDependencies, UnembeddingGradientsEqualTheProductsTheirRulesName) {
  const Trace untied = traced_update(small_gpt(), {{}, sample_x()});
  expect_unembedding_products(untied, backward_event(untied, 10, 11, "∇W_u"), "∇W_u", false);
  ModelConfig c = small_gpt();
  c.tied_unembedding = true;
  const Trace tied = traced_update(c, {{}, sample_x()});
  expect_unembedding_products(tied, backward_event(tied, 10, 2, "∇W_e"), "∇W_e", true);
}

}  // namespace test_backward_dependencies
