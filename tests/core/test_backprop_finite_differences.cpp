// Finite differences on the values the traced backward binds (core/backprop/), in double: each ∇ of a
// forward quantity is compared with the change of the loss when that quantity is perturbed in a re-run
// of the forward (the experiments' patch points: everything downstream recomputed), or, for a value no
// patch point reaches (inside layer_norm, the MLP, the softmax of Algorithm 7, the loss itself), in a
// re-run of that line alone with the downstream gradient the trace bound.
//
// Tolerance, absolute, against the bound matrix's largest entry s: the trace stores ∇ in float (u·s),
// the edited cells are floats (the step is taken as the difference of the two stored values, so it is
// exact, and the centre moves by u·|v|: f″·u·|v| ≈ 1e-7·s), the central difference's truncation with
// h = 1e-3 is h²·|f‴|/6 ≲ 2e-6 (|f‴| ≲ 10 in these tiny models), the loss's rounding u_double·|f|/h
// ≈ 1e-12: 1e-5·max(s, 1) holds them all. A wrong adjoint (a missing path, a transposed index, a lost
// 1/√d_attn) is off by O(s).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "core/algorithms/algorithms.hpp"
#include "core/experiments/interventions.hpp"
#include "core/trace/value_keys.hpp"
#include "test_backprop_support.hpp"

namespace test_backprop_finite_differences {

using namespace sf;
using namespace sf::test;

namespace {

const double kStep = 1e-3;
const double kTolerance = 1e-5;

// A model, x, its batch, the traced backward (double) and a traced forward (for forward values).
struct BackwardRun {
  Model m;
  Tokens x = sample_x();
  Batch batch;
  Trace back, fwd;
  explicit BackwardRun(const ModelConfig& c) : m(spread_model(c, 11)), batch(dtraining_batch(x, c)) {
    Tracer tb(back), tf(fwd);
    traced_backward<double>(m, batch, &tb);
    std::vector<double> theta(m.theta.begin(), m.theta.end());
    dtransformer<double>(x, m.config, bind_gpt<const double>(m.table, theta.data()), &tf);
  }
  // The loss of the forward with `list` in force: −Σ_t log P[y_t, t] over the batch's targets.
  double loss(const std::vector<Intervention>& list) const {
    std::vector<double> theta(m.theta.begin(), m.theta.end());
    const Patches p(list);
    const Mat<double> P = dtransformer<double>(x, m.config, bind_gpt<const double>(m.table, theta.data()), nullptr, {},
                                               list.empty() ? nullptr : &p);
    double f = 0;
    for (size_t t = 0; t < batch.targets.size(); ++t)
      if (batch.targets[t]) f -= std::log(P(batch.targets[t] - 1, t));
    return f;
  }
  // ∂loss/∂value[r, c] (0-based) by central differences at patch point `at`, around the value v.
  double numeric(const PatchPoint& at, int r, int c, double v) const {
    const float up = static_cast<float>(v + kStep), down = static_cast<float>(v - kStep);
    return (loss({edit_cell(at, r + 1, c + 1, up)}) - loss({edit_cell(at, r + 1, c + 1, down)})) /
           (static_cast<double>(up) - static_cast<double>(down));
  }
};

// The forward value at `at` in the forward trace (a Line or SubStep binding it).
const Value& forward_value(const BackwardRun& s, const PatchPoint& at) {
  const Value* v = value_at(s.fwd, at);
  if (!v) throw std::runtime_error("no forward value " + at.name);
  return *v;
}

void expect_close(double numeric, double bound, const TraceMat& m, const std::string& what) {
  const double s = std::max(1.0, static_cast<double>(m.cwiseAbs().maxCoeff()));
  EXPECT_NEAR(bound, numeric, kTolerance * s) << what;
}

// Compares the bound gradient `grad` (at backward event k) with finite differences of the loss on the
// value at `at`, at the cells listed.
void check_patch(const BackwardRun& s, const PatchPoint& at, size_t k, const std::string& grad,
                 const std::vector<std::pair<int, int>>& cells) {
  SCOPED_TRACE(describe(at) + " vs " + grad);
  const Value* g = bound(s.back, k, grad);
  ASSERT_NE(g, nullptr) << grad;
  const Value& v = forward_value(s, at);
  for (auto [r, c] : cells)
    expect_close(s.numeric(at, r, c, v.m(r, c)), g->m(r, c), g->m, grad + "[" + std::to_string(r + 1) + ", " +
                                                                       std::to_string(c + 1) + "]");
}

void check_attention_head(const BackwardRun& s, int l, int h) {
  const Trace& b = s.back;
  // The line that calls MHAttention: 6 (pre-LN, the paper), 5 (post-LN: X ← X + MHAttention(X) comes first)
  const LineRef kCall{10, s.m.config.norm_pos() == NormPosition::Pre ? 6 : 5};
  auto head_event = [&](LineRef line, EventKind kind = EventKind::Line) { return find_event(b, line.adjoint(), kind, l, h); };
  // S before masking: an unmasked cell (t_z = 2 ≤ t_x = 4) and a masked one (t_z = 5 > t_x = 2): 0
  check_patch(s, {kCall, 4, 4, l, h, "S"}, head_event(lines::attention::mask), "∇S", {{1, 3}, {4, 1}, {0, 6}});
  check_patch(s, {kCall, 4, 6, l, h, keys::attention_weights.symbol}, head_event(lines::attention::V_tilde), "∇A",
              {{0, 0}, {2, 5}});
  check_patch(s, {kCall, 4, 1, l, h, "Q"}, head_event(lines::attention::S), "∇Q", {{0, 2}, {3, 6}});
  check_patch(s, {kCall, 4, 2, l, h, "K"}, head_event(lines::attention::S), "∇K", {{1, 0}, {2, 4}});
  check_patch(s, {kCall, 4, 3, l, h, "V"}, head_event(lines::attention::V_tilde), "∇V", {{0, 1}, {2, 6}});
  check_patch(s, {kCall, 4, 6, l, h, "Ṽ"}, find_event(b, LineRef{4, 0, Pass::Backward}, EventKind::Enter, l, h), "∇Ṽ",
              {{0, 3}, {1, 6}});
}

void check_stream(const BackwardRun& s, int L) {
  const Trace& b = s.back;
  const LineRef n1 = lines::d_transformer::norm1, n2 = lines::d_transformer::norm2;
  for (int l = 1; l <= L; ++l) {
    check_patch(s, {{}, 10, n1.line, l, 0, "X̃"}, find_event(b, lines::d_transformer::attention.adjoint(), EventKind::Line, l),
                "∇X̃", {{0, 0}, {5, 4}});
    check_patch(s, {{}, 10, n2.line, l, 0, "X̃"}, find_event(b, lines::d_transformer::mlp.adjoint(), EventKind::Line, l),
                "∇X̃", {{2, 1}, {7, 6}});
    check_patch(s, {{}, 10, 6, l, 0, "X"}, find_event(b, n2.adjoint(), EventKind::Line, l), "∇X", {{1, 2}, {6, 5}});
  }
  check_patch(s, {{}, 10, 10, 0, 0, "X"}, find_event(b, lines::d_transformer::P.adjoint()), "∇X", {{3, 0}, {4, 5}});
}

}  // namespace

TEST(BackpropFiniteDifferences, AttentionHeadsAndTheStream) {
  for (const Mix& mix : gpt_mixes()) {
    if (mix.name != "paper" && mix.name != "rms_rope_swiglu_tied_hkv1" && mix.name != "postln_alibi_gelutanh" &&
        mix.name != "prefix_relu")
      continue;
    SCOPED_TRACE(mix.name);
    const BackwardRun s(mix.c);
    for (int h = 1; h <= 2; ++h) check_attention_head(s, 2, h);
    check_attention_head(s, 1, 1);
    if (mix.c.norm_pos() == NormPosition::Pre) check_stream(s, mix.c.L);
  }
}

// Algorithm 13 line 5's adjoint: ∇P[y, t] = −1/P[y, t], against the loss as a function of P.
TEST(BackpropFiniteDifferences, LossLine) {
  const BackwardRun s(small_gpt());
  const size_t k = find_event(s.back, lines::d_training::loss.adjoint());
  const Value* P = bound(s.back, 0, "P");
  const Value* dP = bound(s.back, k, "∇P");
  ASSERT_TRUE(P && dP);
  for (size_t t = 0; t < s.batch.targets.size(); ++t) {
    const int y = s.batch.targets[t] - 1;
    for (int i : {0, 3, y}) {
      if (i < 0) continue;
      auto f = [&](double d) {  // the loss with P[i, t] moved by d
        double sum = 0;
        for (size_t u = 0; u < s.batch.targets.size(); ++u)
          if (s.batch.targets[u]) sum -= std::log(P->m(s.batch.targets[u] - 1, u) + (u == t && s.batch.targets[u] - 1 == i ? d : 0));
        return sum;
      };
      expect_close((f(1e-6) - f(-1e-6)) / 2e-6, dP->m(i, t), dP->m, "∇P");
    }
  }
}

// Algorithm 7's adjoint per column: ∇(W_u e) against −log softmax(z)[y] with z = log p (softmax(log p) = p).
TEST(BackpropFiniteDifferences, UnembeddingSoftmax) {
  const BackwardRun s(small_gpt());
  for (int t = 1; t <= 6; ++t) {
    const size_t enter = find_event(s.back, LineRef{7, 0, Pass::Backward}, EventKind::Enter, 0, 0, t);
    const size_t line = find_event(s.back, lines::unembedding::p.adjoint(), EventKind::Line, 0, 0, t);
    const Value *p = bound(s.back, enter, "p"), *g = bound(s.back, line, "∇(W_u e)");
    ASSERT_TRUE(p && g);
    const int y = s.batch.targets[t - 1] - 1;
    const Vec<double> z = p->m.col(0).cast<double>().array().log().matrix();
    for (Eigen::Index i = 0; i < z.size(); ++i) {
      auto f = [&](double d) {
        Vec<double> zz = z;
        zz(i) += d;
        return -(zz(y) - std::log(zz.array().exp().sum()));
      };
      expect_close((f(kStep) - f(-kStep)) / (2 * kStep), g->m(i, 0), g->m, "∇(W_u e)");
    }
  }
}

// Algorithm 6's adjoint per column: ∇m, ∇v (line 3, holding the other fixed) and ∇e (complete, line 1)
// against g(e) = ∇êᵀ layer_norm(e | γ, β), with e, γ, ε and ∇ê as the frame's Enter binds them.
TEST(BackpropFiniteDifferences, LayerNormColumn) {
  const BackwardRun s(small_gpt());
  for (const size_t enter : {find_event(s.back, LineRef{6, 0, Pass::Backward}, EventKind::Enter, 2, 0, 3),
                             find_event(s.back, LineRef{6, 0, Pass::Backward}, EventKind::Enter, 1, 0, 5)}) {
    ASSERT_LT(enter, s.back.size());
    const Vec<double> e = bound(s.back, enter, "e")->m.cast<double>(), dhat = bound(s.back, enter, "∇ê")->m.cast<double>();
    const Vec<double> gamma = bound(s.back, enter, "γ")->m.cast<double>();
    const double eps = bound(s.back, enter, "ε")->m(0, 0);
    const Eigen::Index d = e.size();
    // β adds dhatᵀβ, a constant: left out
    auto g = [&](const Vec<double>& ee, double dm, double dv, bool free_mv) {
      const double m = free_mv ? ee.mean() : e.mean() + dm;
      const double v = free_mv ? (ee.array() - m).square().sum() / d : (e.array() - e.mean()).square().sum() / d + dv;
      return dhat.dot(((ee.array() - m) / std::sqrt(v + eps) * gamma.array()).matrix());
    };
    const size_t l3 = s.back.step_over(enter);  // adjoint of line 3 (over its sub-steps)
    ASSERT_EQ(s.back.events[l3].ref(), lines::layer_norm::e_hat.adjoint());
    const Value *dm = bound(s.back, l3, "∇m"), *dv = bound(s.back, l3, "∇v");
    expect_close((g(e, kStep, 0, false) - g(e, -kStep, 0, false)) / (2 * kStep), dm->m(0, 0), dm->m, "∇m");
    expect_close((g(e, 0, kStep, false) - g(e, 0, -kStep, false)) / (2 * kStep), dv->m(0, 0), dv->m, "∇v");
    const Value* de = bound(s.back, l3 + 2, "∇e");  // adjoint of line 1: ∇e complete
    ASSERT_EQ(s.back.events[l3 + 2].ref(), lines::layer_norm::m.adjoint());
    for (Eigen::Index i = 0; i < d; ++i) {
      Vec<double> up = e, down = e;
      up(i) += kStep;
      down(i) -= kStep;
      expect_close((g(up, 0, 0, true) - g(down, 0, 0, true)) / (2 * kStep), de->m(i, 0), de->m, "∇e");
    }
  }
}

// The MLP line's hidden layer: ∇(W_mlp1 X̃ + b_mlp1 1ᵀ) against k(H) = Σ ∇X ⊙ (W_mlp2 GELU(H)), ∇X the
// gradient the line receives (layer L: bound at the adjoint of line 10) and H from the forward trace.
TEST(BackpropFiniteDifferences, MlpHiddenLayer) {
  const BackwardRun s(small_gpt());
  const int L = s.m.config.L;
  const Mat<double> dX = bound(s.back, find_event(s.back, lines::d_transformer::final_norm.adjoint()), "∇X")->m.cast<double>();
  const std::string pre = "W_mlp1 X̃ + b_mlp1 1ᵀ";
  const size_t fwd8 = find_event(s.fwd, lines::d_transformer::mlp, EventKind::SubStep, L);
  size_t k = fwd8;
  while (k < s.fwd.size() && !bound(s.fwd, k, pre)) ++k;
  ASSERT_LT(k, s.fwd.size());
  const Mat<double> H = bound(s.fwd, k, pre)->m.cast<double>();
  std::vector<double> theta(s.m.theta.begin(), s.m.theta.end());
  const GptW<const double> W = bind_gpt<const double>(s.m.table, theta.data());
  const Mat<double> W2 = W.layers[L - 1].W_mlp2;
  size_t b8 = find_event(s.back, lines::d_transformer::mlp.adjoint(), EventKind::SubStep, L);
  while (b8 < s.back.size() && !bound(s.back, b8, "∇(" + pre + ")")) ++b8;
  const Value* g = bound(s.back, b8, "∇(" + pre + ")");
  ASSERT_NE(g, nullptr);
  for (const std::pair<int, int>& rc : std::vector<std::pair<int, int>>{{0, 0}, {4, 3}, {9, 6}}) {
    const int r = rc.first, c = rc.second;  // not a structured binding: clang 14 cannot capture one in a lambda
    auto f = [&](double d) {
      Mat<double> HH = H;
      HH(r, c) += d;
      return dX.cwiseProduct(W2 * gelu<double>(HH)).sum();
    };
    expect_close((f(kStep) - f(-kStep)) / (2 * kStep), g->m(r, c), g->m, "∇(W_mlp1 X̃ + b_mlp1 1ᵀ)");
  }
}

}  // namespace test_backprop_finite_differences
