// Algorithm 4-R in the stepped backward (core/backprop/adjoint_rf_attention.cpp; random-feature
// attention, a variant NOT IN THE PAPER): the traced ∇θ of a 4-R model equals training's untraced
// one, each adjoint it binds for one head equals finite differences in double, and its lines run,
// and can be stepped, in the order of its backward listing.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "core/algorithms/random_features.hpp"
#include "core/backprop/adjoints.hpp"
#include "core/backprop/traced_backward.hpp"
#include "core/gradients/sequence_gradient.hpp"
#include "core/pseudocode/backward_listings.hpp"
#include "core/pseudocode/notations.hpp"
#include "core/trace/dependencies.hpp"
#include "test_backprop_support.hpp"
#include "test_bert_support.hpp"

namespace test_rf_backward {

using namespace sf;
using namespace sf::test;

namespace {

namespace L = lines::random_feature_attention;
constexpr int kRf = algs::random_feature_attention;

ModelConfig with_rf(ModelConfig c) {
  c.attention = AttentionKind::RandomFeatures;
  c.rf_features = 8;  // 2D = 16 features: every sum in 4-R's adjoint has at most 16 terms
  c.rf_seed = 3;
  return c;
}

struct RfCase {
  std::string name;
  Model m;
  Batch batch;
};
// GPT (causal mask: the prefix sums grow by one key per query) and BERT (bidirectional: every query
// sees every key, one suffix sum), 4-R in every head.
std::vector<RfCase> rf_cases() {
  const ModelConfig gpt = with_rf(small_gpt());
  const ModelConfig bert = with_rf(bert_test_config(2, 2, 8, 4, 3, 10, 6, 12, {"a", "b", "c", "d"}));
  std::vector<RfCase> out;
  out.push_back({"gpt", spread_model(gpt, 7), dtraining_batch(sample_x(), gpt)});
  out.push_back({"bert", spread_model(bert, 7), masked_batch({1, 2, 3, 4, 2, 6}, {2, 4}, bert.mask_token())});
  return out;
}

Trace traced(const RfCase& rc) {
  Trace t;
  Tracer tr(t);
  traced_backward<double>(rc.m, rc.batch, &tr);
  return t;
}

}  // namespace

// Both sides run the same batched forward (B = 1) and call the same 4-R steps (rf_backward.hpp) on
// the same Q, K, V: only the projections and the other layers sum in other orders (per head against
// stacked), as for Algorithm 4, so test_backprop_gradient.cpp's bound holds: ≈ 12 sums deep of
// ≤ 16 terms (2D = 16 here), 2·12·γ_16·10 ≈ 4e-13 relative in double; 1e-12 holds it. A wrong
// adjoint (a lost κ path, a prefix sum where a suffix sum belongs) is an O(1) error.
TEST(RfBackward, TracedGradientEqualsTrainingsForGptAndBert) {
  for (const RfCase& rc : rf_cases()) {
    SCOPED_TRACE(rc.name);
    const SequenceGradient untraced = sequence_gradient(rc.m, rc.batch);
    const TracedGradient<double> traced = traced_backward<double>(rc.m, rc.batch, nullptr);
    EXPECT_NEAR(traced.loss, untraced.loss, 1e-12 * untraced.loss);
    for (const ParamEntry& e : rc.m.table.entries()) {
      const Eigen::Index k = static_cast<Eigen::Index>(e.size());
      const Eigen::Map<const Vec<double>> a(traced.grad.data() + e.offset, k), b(untraced.grad.data() + e.offset, k);
      EXPECT_GT(b.norm(), 0.0) << e.name;  // 4-R's b_k is not softmax-shift-invariant: every tensor has a gradient
      EXPECT_LT(relative_error(a, b), 1e-12) << e.name;
    }
  }
}

// ---- one head, finite differences in double ----

namespace {

Mat<double> normal(Eigen::Index r, Eigen::Index c, unsigned seed, double scale = 0.7) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, scale);
  return Mat<double>::NullaryExpr(r, c, [&] { return n(rng); });
}

// One causal head, its weights in one θ vector, run forward the quadratic way (Ṽ = a / b̂, with
// a = V Â_num, b = 1ᵀ Â_num, Â_num[t_z, t_x] = Mask κ_{t_z} φ(k_{t_z})ᵀ φ(q_{t_x})), so that every
// intermediate the adjoint binds (a, b, φ(Q), φ(K), κ, Q, K, V) can be perturbed on its own.
struct Head {
  static constexpr int d = 4, d_attn = 4, d_mid = 3, l = 5, D = 6;
  Mat<double> X = normal(d, l, 1), R = normal(d_mid, l, 2);  // R: ∂loss/∂Ṽ, loss = Σ R ⊙ Ṽ
  std::vector<double> theta;
  Mask mask = unidirectional_mask(l, l);
  Mat<double> omega = rf_omega(D, d_attn, 5, 1, false);
  Mat<double> Wd = rf_directions<double>(omega);
  static constexpr int kThetaSize = 2 * (d_attn * d + d_attn) + d_mid * d + d_mid;  // W_q, b_q, W_k, b_k, W_v, b_v
  Head() {
    const Mat<double> w = normal(kThetaSize, 1, 3);
    theta.assign(w.data(), w.data() + w.size());
  }
  // The head's tensors as views into p, in θ's order.
  template <class T>
  static AttentionHeadW<T> bind(T* p) {
    AttentionHeadW<T> w;
    new (&w.W_q) MapM<T>(p, d_attn, d), p += d_attn * d;
    new (&w.b_q) MapV<T>(p, d_attn), p += d_attn;
    new (&w.W_k) MapM<T>(p, d_attn, d), p += d_attn * d;
    new (&w.b_k) MapV<T>(p, d_attn), p += d_attn;
    new (&w.W_v) MapM<T>(p, d_mid, d), p += d_mid * d;
    new (&w.b_v) MapV<T>(p, d_mid);
    return w;
  }
  AttentionHeadW<const double> W() const { return bind<const double>(theta.data()); }
  Mat<double> Q() const { return (W().W_q * X).colwise() + Vec<double>(W().b_q); }
  Mat<double> K() const { return (W().W_k * X).colwise() + Vec<double>(W().b_k); }
  Mat<double> V() const { return (W().W_v * X).colwise() + Vec<double>(W().b_v); }
  // Lines 11–12 from a and b (the guard: b̂ = max(b, ε g)), g from κ.
  double loss_ab(const Mat<double>& a, const Mat<double>& b, const Mat<double>& kappa) const {
    double f = 0;
    for (int t = 0; t < l; ++t) {
      const double g = kappa.leftCols(t + 1).sum(), bhat = std::max(b(0, t), kRfGuard * g);
      f += R.col(t).dot(a.col(t)) / bhat;
    }
    return f;
  }
  // Â_num[t_z, t_x] = Mask κ_{t_z} φ(k_{t_z})ᵀ φ(q_{t_x}) (ℓ_z, ℓ_x): a = V Â_num, b = 1ᵀ Â_num
  Mat<double> masked_products(const Mat<double>& phiQ, const Mat<double>& phiK, const Mat<double>& kappa) const {
    const Mat<double> m = ((phiK.transpose() * phiQ).array() * mask.cast<double>().array()).matrix();
    return Vec<double>(kappa.transpose()).asDiagonal() * m;
  }
  // Lines 10–12 from φ(Q), φ(K), κ, V (the sums written out, quadratically).
  double loss_phi(const Mat<double>& phiQ, const Mat<double>& phiK, const Mat<double>& kappa, const Mat<double>& Vv) const {
    const Mat<double> num = masked_products(phiQ, phiK, kappa);  // (ℓ_z, ℓ_x)
    return loss_ab(Vv * num, num.colwise().sum(), kappa);
  }
  // Lines 5–12 from Q, K, V.
  double loss_qkv(const Mat<double>& Qm, const Mat<double>& Km, const Mat<double>& Vv) const {
    return loss_phi(rf_phi<double>(Qm, Wd), rf_phi<double>(Km, Wd), rf_key_weights<double>(Km, std::vector<char>(l, 1)), Vv);
  }
  double loss_theta() const { return loss_qkv(Q(), K(), V()); }
};

// Central differences of f over every entry of x, with a step relative to the entry: h = 1e-5·|x|
// (at least 1e-8). A denominator b near 0 makes f = a/b steep (∇b reaches −200 here), and a fixed step
// would leave a truncation h²·|f‴|/6 that grows like 1/b⁴; relative to x it stays (h/x)²·|f′| ≈ 1e-10·|f′|,
// and the rounding u·|f|/h stays ≲ 1e-8·|f′|.
template <class F>
Mat<double> numeric(Mat<double> x, F&& f) {
  Mat<double> g(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double x0 = x(i), h = 1e-5 * std::max(std::abs(x0), 1e-3);
    x(i) = x0 + h;
    const double up = f(x);
    x(i) = x0 - h;
    const double down = f(x);
    x(i) = x0;
    g(i) = (up - down) / (2 * h);
  }
  return g;
}

// The trace stores a bound value as float: 2⁻²⁴ ≈ 6e-8 of its largest entry s; with the differences'
// ≲ 1e-8·s, |bound − numeric| ≤ 1e-6·max(s, 1) holds both with margin, and a wrong term is O(s).
void expect_bound(const Trace& t, LineRef line, const std::string& name, const Mat<double>& want,
                  EventKind kind = EventKind::Line) {
  const Value* v = bound(t, find_event(t, line, kind), name);
  ASSERT_NE(v, nullptr) << name << " at " << adjoint_name(line.line);
  const Mat<double> got = v->m.cast<double>();
  ASSERT_EQ(got.rows(), want.rows()) << name;
  ASSERT_EQ(got.cols(), want.cols()) << name;
  const double s = std::max(1.0, want.cwiseAbs().maxCoeff());
  EXPECT_LT((got - want).cwiseAbs().maxCoeff(), 1e-6 * s) << name << " at " << adjoint_name(line.line) << "\nbound\n"
                                                           << got << "\nnumeric\n" << want;
}

}  // namespace

TEST(RfBackward, HeadAdjointsEqualFiniteDifferencesInDouble) {
  Head h;
  const Mat<double> Q = h.Q(), K = h.K(), V = h.V(), A = Mat<double>::Zero(Head::l, Head::l);
  AttentionOptions av;
  av.rf_D = Head::D;
  const AttentionForward<double> f{h.X, h.X, Q, K, V, A, h.mask, av, h.omega};
  std::vector<double> dtheta(h.theta.size(), 0.0);
  AttentionHeadW<double> dW = Head::bind<double>(dtheta.data());
  Mat<double> dX = Mat<double>::Zero(Head::d, Head::l);
  Trace t;
  Tracer tr(t);
  adjoint_attention<double>(f, h.W(), h.R, dW, dX, dX, &tr);

  const Mat<double> phiQ = rf_phi<double>(Q, h.Wd), phiK = rf_phi<double>(K, h.Wd);
  const Mat<double> kappa = rf_key_weights<double>(K, std::vector<char>(Head::l, 1));
  // a, b of line 11 for every query: the causal prefix sums written as masked products
  const Mat<double> num = h.masked_products(phiQ, phiK, kappa);
  const Mat<double> a = V * num, b = num.colwise().sum();
  expect_bound(t, L::V_col.adjoint(), "∇a", numeric(a, [&](const Mat<double>& x) { return h.loss_ab(x, b, kappa); }));
  expect_bound(t, L::V_col.adjoint(), "∇b", numeric(b, [&](const Mat<double>& x) { return h.loss_ab(a, x, kappa); }));
  expect_bound(t, L::num.adjoint(), "∇φ(Q)", numeric(phiQ, [&](const Mat<double>& x) { return h.loss_phi(x, phiK, kappa, V); }));
  expect_bound(t, L::add.adjoint(), "∇φ(K)", numeric(phiK, [&](const Mat<double>& x) { return h.loss_phi(phiQ, x, kappa, V); }));
  expect_bound(t, L::add.adjoint(), "∇κ", numeric(kappa, [&](const Mat<double>& x) { return h.loss_phi(phiQ, phiK, x, V); }));
  expect_bound(t, L::add.adjoint(), "∇V", numeric(V, [&](const Mat<double>& x) { return h.loss_phi(phiQ, phiK, kappa, x); }));
  expect_bound(t, L::phi_K.adjoint(), "∇K", numeric(K, [&](const Mat<double>& x) { return h.loss_qkv(Q, x, V); }));
  expect_bound(t, L::phi_Q.adjoint(), "∇Q", numeric(Q, [&](const Mat<double>& x) { return h.loss_qkv(x, K, V); }));
  // Lines 3, 2, 1: the weights' gradients and ∇X (self-attention: both paths in one ∇X)
  const Mat<double> theta = Eigen::Map<const Mat<double>>(h.theta.data(), static_cast<Eigen::Index>(h.theta.size()), 1);
  const Mat<double> dtheta_num = numeric(theta, [&](const Mat<double>& x) {
    Head g = h;
    g.theta.assign(x.data(), x.data() + x.size());
    return g.loss_theta();
  });
  const AttentionHeadW<const double> num_W = Head::bind<const double>(dtheta_num.data());
  expect_bound(t, L::Q.adjoint(), "∇W_q", num_W.W_q);
  expect_bound(t, L::Q.adjoint(), "∇b_q", num_W.b_q);
  expect_bound(t, L::K.adjoint(), "∇W_k", num_W.W_k);
  expect_bound(t, L::K.adjoint(), "∇b_k", num_W.b_k);
  expect_bound(t, L::V.adjoint(), "∇W_v", num_W.W_v);
  expect_bound(t, L::V.adjoint(), "∇b_v", num_W.b_v);
  // ∇X: self-attention, so what the adjoint ADDED into ∇X holds lines 1, 2 and 3's paths together
  const Mat<double> dX_num = numeric(h.X, [&](const Mat<double>& x) {
    Head g = h;
    g.X = x;
    return g.loss_theta();
  });
  // (kept in double, not stored: only the differences' ≲ 1e-8 of the largest entry remains, so 1e-7 of it)
  EXPECT_LT((dX - dX_num).cwiseAbs().maxCoeff(), 1e-7 * std::max(1.0, dX_num.cwiseAbs().maxCoeff()));
  // What the adjoint added into ∇θ is what it bound (stored as float: 6e-8 of the largest entry)
  const Mat<double> dW_q = dW.W_q;
  EXPECT_LT((dW_q - bound(t, find_event(t, L::Q.adjoint()), "∇W_q")->m.cast<double>()).cwiseAbs().maxCoeff(),
            1e-6 * std::max(1.0, dW_q.cwiseAbs().maxCoeff()));
}

// ---- the lines, in the listing's order, stepped ----

TEST(RfBackward, LinesRunAndAreSteppedInTheListingsOrder) {
  const RfCase rc = rf_cases()[0];
  const Trace t = traced(rc);
  const size_t enter = find_event(t, LineRef{kRf, 0, Pass::Backward}, EventKind::Enter);
  ASSERT_LT(enter, t.size()) << "no Algorithm 4-R adjoint frame";
  EXPECT_EQ(find_event(t, LineRef{4, 0, Pass::Backward}, EventKind::Enter), t.size()) << "Algorithm 4's adjoint ran";
  // The listing's numbered lines, in order, with line 10's one sub-step
  const PseudoAlgorithm listing = backward_pseudocode_for(kRf, rc.m.config);
  std::vector<int> listed;
  for (const PseudoLine& l : listing.lines)
    if (l.number) listed.push_back(l.number);
  EXPECT_EQ(listed, (std::vector<int>{12, 11, 10, 7, 6, 5, 3, 2, 1}));
  ASSERT_NE(adjoint_line(listing, 10), nullptr);
  EXPECT_EQ(adjoint_line(listing, 10)->steps.size(), 1u);
  // Stepping into the frame visits every adjoint line of the listing, in order, then leaves the frame
  std::vector<int> visited;
  size_t k = t.step_into(enter);
  for (; k < t.size() && t.events[k].alg == kRf && t.events[k].kind != EventKind::Enter; k = t.step_into(k)) {
    const Event& e = t.events[k];
    ASSERT_EQ(e.pass, Pass::Backward);
    if (e.kind == EventKind::SubStep) {
      EXPECT_EQ(e.line, 10) << "only line 10's adjoint has a sub-step";
      EXPECT_EQ(count_substeps(t, k), 0);
      continue;
    }
    visited.push_back(e.line);
    EXPECT_EQ(static_cast<size_t>(count_substeps(t, k)), adjoint_line(listing, e.line)->steps.size()) << adjoint_name(e.line);
    EXPECT_GT(std::string(explain_adjoint(kRf, e.line, rc.m.config)).size(), 30u) << adjoint_name(e.line);
    ASSERT_NE(notation_entry(e.ref()), nullptr) << adjoint_name(e.line);
  }
  EXPECT_EQ(visited, listed);
  // After line 1's adjoint: back in Algorithm 5's adjoint, its line 2 for the same head
  ASSERT_LT(k, t.size());
  EXPECT_EQ(t.events[k].ref(), lines::mh_attention::Y_h.adjoint());
  EXPECT_EQ(t.step_out(t.step_into(enter)), k);
  // Algorithm 5's line 2 names the 4-R adjoint, marked as the variant
  const PseudoAlgorithm mh_listing = backward_pseudocode_for(5, rc.m.config);  // kept: y points into it
  const PseudoLine* y = adjoint_line(mh_listing, 2);
  ASSERT_NE(y, nullptr);
  EXPECT_NE(y->text.find("RFAttention adjoint"), std::string::npos) << y->text;
  EXPECT_NE(y->variant.find("Algorithm 4-R"), std::string::npos) << y->variant;
  // … keeping grouped-query attention's rewrite (W^{g(h)}_k, its label) when both apply
  ModelConfig grouped = rc.m.config;
  grouped.H_kv = 1;
  const PseudoAlgorithm grouped_listing = backward_pseudocode_for(5, grouped);  // kept: yg points into it
  const PseudoLine* yg = adjoint_line(grouped_listing, 2);
  ASSERT_NE(yg, nullptr);
  EXPECT_NE(yg->text.find("RFAttention adjoint(∇Y^h | X, Z, W^h_q, b^h_q, W^{g(h)}_k"), std::string::npos) << yg->text;
  EXPECT_NE(yg->variant.find("Algorithm 4-R"), std::string::npos) << yg->variant;
  EXPECT_NE(yg->variant.find("; "), std::string::npos) << yg->variant;  // two labels
}

// Every value a 4-R adjoint line binds names where its cells come from (hover), for GPT and BERT.
TEST(RfBackward, EveryBoundValueHasADependencyRule) {
  for (const RfCase& rc : rf_cases()) {
    const Trace t = traced(rc);
    std::set<std::pair<int, std::string>> missing;
    int checked = 0;
    for (size_t k = 0; k < t.size(); ++k) {
      const Event& e = t.events[k];
      if (e.alg != kRf) continue;
      for (const Value& v : e.values) {
        if (v.kind == ValueKind::Mask) continue;
        const CellDependencies d = cell_dependencies(t, k, v.name, static_cast<int>(v.m.rows()) - 1, static_cast<int>(v.m.cols()) - 1);
        ++checked;
        if (!d.rule) missing.insert({e.line, v.name + ": " + d.reason});
      }
    }
    EXPECT_GT(checked, 50) << rc.name;
    for (const auto& [line, what] : missing) ADD_FAILURE() << rc.name << ", " << adjoint_name(line) << ": " << what;
  }
}

}  // namespace test_rf_backward
