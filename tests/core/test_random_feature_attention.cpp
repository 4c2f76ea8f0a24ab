// Algorithm 4-R, random-feature attention (not in the paper; core/algorithms/alg04r_random_feature_attention.cpp,
// random_features.cpp, core/gradients/grad_random_features.cpp): the estimate converges to Algorithm 4
// as D grows, within a Monte-Carlo bound; the kernel estimate is unbiased (a CLT bound over many seeds,
// with a check that the test could tell the article's N(0, σ²I) from N(0, σ⁻²I)); the linear-time
// prefix sums equal the masked quadratic computation of the same estimate; orthogonal features are
// orthogonal; masks, the denominator guard, the trace, a model, the gradients against finite
// differences, the configuration keys, and the listing.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/kv_cache.hpp"
#include "core/algorithms/random_features.hpp"
#include "core/gradients/grad.hpp"
#include "core/model/config.hpp"
#include "core/model/error.hpp"
#include "core/model/params.hpp"
#include "core/pseudocode/explanations.hpp"
#include "core/pseudocode/notations.hpp"
#include "core/pseudocode/pseudocode.hpp"
#include "grad_check.hpp"
#include "reference_json.hpp"
#include "test_backprop_support.hpp"

namespace test_random_feature_attention {

using namespace sf;

namespace {

namespace L = lines::random_feature_attention;

Mat<double> normal(int r, int c, unsigned seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, scale);
  return Mat<double>::NullaryExpr(r, c, [&] { return n(rng); });
}

// The estimate written the quadratic way, straight from the article's formula: every pair's
// e^{‖k‖²/2σ²} φ(k)ᵀφ(q) (no shift c), masked, each column normalised (with the same guard).
// Independent of random_features.cpp except for ω.
Mat<double> quadratic_estimate(const Mat<double>& Q, const Mat<double>& K, const Mat<double>& V, const Mask& M,
                               const Mat<double>& omega) {
  const double s2 = std::sqrt(static_cast<double>(Q.rows()));  // σ² = √d_attn
  const Mat<double> W = omega / std::sqrt(s2);                  // w_i = ω_i/σ
  const auto phi = [&](const Mat<double>& X) {
    const Mat<double> U = W * X;
    Mat<double> f(2 * W.rows(), X.cols());
    for (Eigen::Index i = 0; i < W.rows(); ++i)
      f.row(2 * i) = U.row(i).array().cos(), f.row(2 * i + 1) = U.row(i).array().sin();
    return Mat<double>(f / std::sqrt(static_cast<double>(W.rows())));
  };
  const Mat<double> phiK = phi(K), phiQ = phi(Q);
  Mat<double> A = Mat<double>::Zero(K.cols(), Q.cols());
  for (Eigen::Index tx = 0; tx < Q.cols(); ++tx) {
    double g = 0;
    for (Eigen::Index tz = 0; tz < K.cols(); ++tz)
      if (M(tz, tx)) {
        const double kappa = std::exp(K.col(tz).squaredNorm() / (2 * s2));
        A(tz, tx) = kappa * phiK.col(tz).dot(phiQ.col(tx));
        g += kappa;
      }
    if (g > 0) A.col(tx) /= std::max(A.col(tx).sum(), kRfGuard * g);
  }
  return V * A;
}

// Algorithm 4's weights softmax(S/√d_attn), masked.
Mat<double> softmax_weights(const Mat<double>& Q, const Mat<double>& K, const Mask& M) {
  const Mat<double> S = K.transpose() * Q / std::sqrt(static_cast<double>(Q.rows()));
  return softmax_columns<double>((M.array() != 0).select(S, neg_inf<double>()));
}

struct MaskCase {
  std::string name;
  int l_z, l_x;
  Mask mask;
};

std::vector<MaskCase> mask_cases(int l) {
  Mask padded = unidirectional_mask(l, l);
  padded.bottomRows(2).setZero();  // the last two keys are padding
  Mask first_padded = unidirectional_mask(l, l);
  first_padded.row(0).setZero();  // query 1's only key is padding: a query with no key
  return {{"causal", l, l, unidirectional_mask(l, l)},
          {"bidirectional", l, l, bidirectional_mask(l, l)},
          {"cross", l + 3, l, bidirectional_mask(l + 3, l)},
          {"prefix", l, l, prefix_mask(l, 3)},
          {"causal_padding", l, l, padded},
          {"no_key_for_query_1", l, l, first_padded}};
}

const Value* find(const Event& e, const std::string& name) {
  for (const Value& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace

// The error at D = 4096 (and 2¹⁶) against Algorithm 4, within a bound derived from the Monte-Carlo
// variance. Each pair's φ(k)ᵀφ(q) = (1/D)Σ_i cos⟨w_i, k − q⟩ has variance ≤ 1/(2D) (a cosine's variance
// is at most 1/2), so the κ-weighted sums a/g and b/g (weights κ_j/g summing to 1) have standard
// deviations ≤ max|v|/√(2D) and ≤ 1/√(2D). To first order Ṽ_rfa − Ṽ = (δa − Ṽ·δb)/(b/g), so each entry
// is within z·(max|v| + |Ṽ|)/(√(2D)·β_t) with β_t = the exact b/g of the query (computed below) and
// z = 6 (a six-sigma bound: with 40 entries per run the chance of a false failure is below 10⁻⁷).
// The bound is loose (the cosines' variance, the triangle inequality), so at D = 4096 it could not
// tell the estimate without the κ factor (the issue's formula, a Gaussian-kernel attention); at
// D = 2¹⁶ it can, and the test checks that it does (the power check at the end).
TEST(RandomFeatureAttention, ConvergesToSoftmaxAttentionAsDGrows) {
  const int d = 8, l = 10;
  // Keys of unequal norms (column j scaled by 0.3 + 0.15·j), so that κ = e^{‖k‖²/2σ²} matters.
  const Mat<double> Q = normal(d, l, 1, 0.7), V = normal(4, l, 3);
  const Mat<double> K = normal(d, l, 2, 0.7) * Eigen::VectorXd::LinSpaced(l, 0.3, 1.65).asDiagonal();
  const Mask M = unidirectional_mask(l, l);
  const Mat<double> exact = V * softmax_weights(Q, K, M);
  const double s2 = std::sqrt(static_cast<double>(d)), max_v = V.cwiseAbs().maxCoeff();
  // β_t and, for the power check, the D → ∞ limit without κ: Σ_j e^{−‖q−k_j‖²/2σ²} v_j / Σ_j e^{−‖q−k_j‖²/2σ²}.
  std::vector<double> beta(l);
  Mat<double> no_kappa(4, l);
  for (int tx = 0; tx < l; ++tx) {
    double num = 0, g = 0, z = 0;
    Vec<double> y = Vec<double>::Zero(4);
    for (int j = 0; j <= tx; ++j) {
      const double kappa = std::exp(K.col(j).squaredNorm() / (2 * s2));
      const double kernel = std::exp(-(Q.col(tx) - K.col(j)).squaredNorm() / (2 * s2));
      num += kappa * kernel, g += kappa, z += kernel, y += kernel * V.col(j);
    }
    beta[tx] = num / g;
    no_kappa.col(tx) = y / z;
  }
  const auto bound = [&](int D, int tx) {
    return 6 * (max_v + exact.col(tx).cwiseAbs().maxCoeff()) / (std::sqrt(2.0 * D) * beta[tx]);
  };
  for (const int D : {4096, 1 << 16})
    for (const bool orthogonal : {false, true}) {
      SCOPED_TRACE("D = " + std::to_string(D) + (orthogonal ? " orthogonal" : " iid"));
      const Mat<double> rfa = rf_attention_qkv<double>(Q, K, V, M, rf_omega(D, d, 7, 1, orthogonal));
      for (int tx = 0; tx < l; ++tx)
        EXPECT_LE((rfa.col(tx) - exact.col(tx)).cwiseAbs().maxCoeff(), bound(D, tx)) << "t_x = " << tx + 1;
    }
  double power = 0;  // the power check: dropping κ would fail the D = 2¹⁶ bound (by this factor)
  for (int tx = 0; tx < l; ++tx)
    power = std::max(power, (no_kappa.col(tx) - exact.col(tx)).cwiseAbs().maxCoeff() / bound(1 << 16, tx));
  EXPECT_GT(power, 1.5);
}

// The error falls like 1/√D: the mean over 24 seeds of max |Ṽ_rfa − Ṽ| at D = 64 over that at
// D = 1024 is near √16 = 4. The mean of 24 maxima has a relative spread of ~0.4/√24 ≈ 8% each, so
// the ratio is within 4·(1 ± 0.3) with a wide margin; a constant (biased) error would give ~1.
TEST(RandomFeatureAttention, ErrorFallsLikeOneOverRootD) {
  const int d = 8, l = 10;
  const Mat<double> Q = normal(d, l, 4, 0.7), K = normal(d, l, 5, 0.7), V = normal(4, l, 6);
  const Mask M = unidirectional_mask(l, l);
  const std::vector<RfaErrorPoint> curve =
      rf_error_curve<double>(Q, K, V, M, {64, 1024}, 24, 100, 1, false);
  ASSERT_EQ(curve.size(), 2u);
  const double ratio = curve[0].v_mean / curve[1].v_mean;
  EXPECT_GT(ratio, 4 * 0.7);
  EXPECT_LT(ratio, 4 * 1.3);
  EXPECT_GT(curve[0].v_sd, 0);
  EXPECT_GT(curve[0].weights_mean, curve[1].weights_mean);
}

// E_w[e^{‖q‖²/2σ²}φ(q)ᵀφ(k)e^{‖k‖²/2σ²}] = exp(qᵀk/√d_attn): the mean over M = 20000 seeds (D = 2
// each) is within 5 standard errors (s/√M, the sample s; p ≈ 6·10⁻⁷ under the CLT). The test can tell
// the variance right from the article's: with w_i ~ N(0, σ²I) the mean would tend to
// e^{(‖q‖²+‖k‖²)/2σ²}e^{−σ²‖q−k‖²/2}, checked to lie outside the interval.
TEST(RandomFeatureAttention, KernelEstimateIsUnbiasedOverW) {
  const int d = 4, D = 2, M = 20000;
  const double s2 = std::sqrt(static_cast<double>(d));
  const Mat<double> q = normal(d, 1, 8, 0.8), k = normal(d, 1, 9, 0.8);
  const double scale = std::exp((q.squaredNorm() + k.squaredNorm()) / (2 * s2));
  const double truth = std::exp(q.col(0).dot(k.col(0)) / s2);
  const double wrong_variance = scale * std::exp(-s2 * (q - k).squaredNorm() / 2);
  for (const bool orthogonal : {false, true}) {
    SCOPED_TRACE(orthogonal ? "orthogonal" : "iid");
    double sum = 0, sum2 = 0;
    for (int m = 0; m < M; ++m) {
      const Mat<double> W = rf_directions<double>(rf_omega(D, d, 1000 + m, 1, orthogonal));
      const double x = scale * rf_phi<double>(q, W).col(0).dot(rf_phi<double>(k, W).col(0));
      sum += x, sum2 += x * x;
    }
    const double mean = sum / M, se = std::sqrt((sum2 / M - mean * mean) / (M - 1));
    EXPECT_LE(std::abs(mean - truth), 5 * se) << "mean " << mean << " truth " << truth;
    EXPECT_GT(std::abs(wrong_variance - truth), 10 * se) << "the test could not tell N(0, σ²I) from N(0, σ⁻²I)";
  }
}

// The prefix sums (one pass over the keys) equal the masked quadratic computation of the same estimate,
// in double to 1e-12: both sum ≤ ℓ·2D = 5120 terms of size ≤ max κ·max|v| (≈ 10 here), rounding
// to ~5120·2⁻⁵³·10 ≈ 6·10⁻¹², divided by b/g ≥ 0.3 for these inputs: 1e-12 relative to max|Ṽ| + 1.
TEST(RandomFeatureAttention, LinearPrefixSumsEqualTheQuadraticEstimateForEveryMask) {
  const int d = 6, l = 9;
  for (const bool orthogonal : {false, true})
    for (const MaskCase& mc : mask_cases(l)) {
      SCOPED_TRACE(mc.name + (orthogonal ? " orthogonal" : ""));
      const Mat<double> Q = normal(d, mc.l_x, 11, 0.6), K = normal(d, mc.l_z, 12, 0.6), V = normal(3, mc.l_z, 13);
      const Mat<double> omega = rf_omega(256, d, 3, 2, orthogonal);
      RfaStats<double> st;
      const Mat<double> lin = rf_attention_qkv<double>(Q, K, V, mc.mask, omega, &st);
      const Mat<double> quad = quadratic_estimate(Q, K, V, mc.mask, omega);
      EXPECT_EQ(st.guarded, 0);
      EXPECT_LE((lin - quad).cwiseAbs().maxCoeff(), 1e-12 * (1 + quad.cwiseAbs().maxCoeff()));
      EXPECT_LE((lin - V * rf_implied_weights<double>(Q, K, mc.mask, omega)).cwiseAbs().maxCoeff(),
                1e-12 * (1 + quad.cwiseAbs().maxCoeff()));  // Ṽ = V·Â, the view's matrix
      if (mc.name == "no_key_for_query_1") EXPECT_EQ(lin.col(0).cwiseAbs().maxCoeff(), 0.0);
    }
}

// Orthogonal features: within each block of d_attn rows ω_iᵀω_j = 0 (to rounding, 1e-12 of the
// norms: Gram–Schmidt in double on 8-vectors), across blocks not; the rows keep chi-distributed norms
// (not all equal, as Gram–Schmidt alone would leave them at 1). The iid rows are not orthogonal.
TEST(RandomFeatureAttention, OrthogonalFeaturesAreOrthogonalInBlocksOfDAttn) {
  const int d = 8, D = 2 * d + 3;
  const Mat<double> o = rf_omega(D, d, 5, 1, true), iid = rf_omega(D, d, 5, 1, false);
  double cross_block = 0, iid_max = 0;
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < i; ++j) {
      const double c = o.row(i).dot(o.row(j)) / (o.row(i).norm() * o.row(j).norm());
      if (i / d == j / d) EXPECT_LE(std::abs(c), 1e-12) << i << ", " << j;
      else cross_block = std::max(cross_block, std::abs(c));
      iid_max = std::max(iid_max, std::abs(iid.row(i).dot(iid.row(j)) / (iid.row(i).norm() * iid.row(j).norm())));
    }
  EXPECT_GT(cross_block, 1e-3);
  EXPECT_GT(iid_max, 1e-3);
  const Eigen::VectorXd norms = o.rowwise().norm();
  EXPECT_GT(norms.maxCoeff() - norms.minCoeff(), 0.1);
  EXPECT_EQ(rf_omega(D, d, 5, 1, true), o);      // seeded: the same ω every time
  EXPECT_NE(rf_omega(D, d, 5, 2, true), o);      // another head, other directions
  EXPECT_NE(rf_omega(D, d, 6, 1, false), iid);   // another seed
}

// A mask that is not a prefix of the keys per query (a sliding window) is refused with the reason.
TEST(RandomFeatureAttention, RefusesMasksThatAreNotKeyPrefixes) {
  Mask window = unidirectional_mask(5, 5);
  window(0, 4) = 0;  // query 5 does not see key 1, but sees keys 2 … 5
  try {
    rf_attention_qkv<double>(normal(2, 5, 1), normal(2, 5, 2), normal(2, 5, 3), window, rf_omega(4, 2, 1, 1, false));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("prefix"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("t_x = 5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rf_omega(0, 4, 1, 1, false), Error);
}

// With sin/cos features the denominator can be negative: one key, one feature, ⟨w, q − k⟩ = π gives
// φ(k)ᵀφ(q) = cos π = −1, b = −κ. The guard divides by ε·g = 10⁻³·κ: Ṽ = a/(εκ) = −v/ε, finite, counted,
// and the trace says why.
TEST(RandomFeatureAttention, NegativeDenominatorIsGuardedCountedAndExplained) {
  const Mat<double> omega = rf_omega(1, 1, 1, 1, false);  // d_attn = 1: σ = 1, w = ω
  Mat<double> K(1, 1), Q(1, 1), V(1, 1);
  K << 0.3;
  Q << 0.3 + std::numbers::pi / omega(0, 0);
  V << 2.0;
  RfaStats<double> st;
  const Mat<double> Vt = rf_attention_qkv<double>(Q, K, V, bidirectional_mask(1, 1), omega, &st);
  EXPECT_EQ(st.guarded, 1);
  EXPECT_NEAR(st.b(0) / st.g(0), -1.0, 1e-12);
  EXPECT_NEAR(Vt(0, 0), -2.0 / kRfGuard, 1e-9);
  Trace trace;
  Tracer tr(trace);
  rf_attention_qkv<double>(Q, K, V, bidirectional_mask(1, 1), omega, nullptr, &tr);
  bool noted = false;
  for (const Event& e : trace.events)
    if (e.ref() == L::num) noted = find(e, "b")->note.find("b ≤ 0") != std::string::npos;
  EXPECT_TRUE(noted);
}

// The trace binds φ(Q), φ(K), κ, the running S_φ and s_φ at each query, a and b, Ṽ, and on the last
// line max |Ṽ_rfa − Ṽ| and the implied weights against softmax's.
TEST(RandomFeatureAttention, TraceBindsTheFeaturesRunningSumsAndComparison) {
  const int d = 4, l = 5, D = 16;
  const Mat<double> X = normal(d, l, 21);
  const Mat<double> Wq = normal(d, d, 22, 0.5), Wk = normal(d, d, 23, 0.5), Wv = normal(3, d, 24);
  const Vec<double> zero_a = Vec<double>::Zero(d), zero_v = Vec<double>::Zero(3);
  const AttentionHeadW<const double> W{MapM<const double>(Wq.data(), d, d), MapV<const double>(zero_a.data(), d),
                                       MapM<const double>(Wk.data(), d, d), MapV<const double>(zero_a.data(), d),
                                       MapM<const double>(Wv.data(), 3, d), MapV<const double>(zero_v.data(), 3)};
  const Mask M = unidirectional_mask(l, l);
  const Mat<double> omega = rf_omega(D, d, 9, 1, false);
  Trace trace;
  Tracer tr(trace);
  const Mat<double> Vt = random_feature_attention<double>(X, X, W, M, omega, &tr);
  const Mat<double> Q = Wq * X, K = Wk * X, V = Wv * X;
  const Mat<double> phiK = rf_phi<double>(K, rf_directions<double>(omega));
  EXPECT_EQ(trace.events.front().alg, algs::random_feature_attention);
  int t = 0, adds = 0;
  for (const Event& e : trace.events) {
    if (e.kind != EventKind::Line) continue;
    if (e.ref() == L::phi_Q) EXPECT_EQ(find(e, "φ(Q)")->m.rows(), 2 * D);
    if (e.ref() == L::for_t) t = static_cast<int>(find(e, "t_x")->m(0, 0));
    if (e.ref() == L::add) {  // the running s_φ after query t's keys 1 … t, against a direct sum (float-bound: 1e-5)
      ++adds;
      const Eigen::RowVectorXd kappa = rf_key_weights<double>(K, std::vector<char>(l, 1));
      const Vec<double> want = phiK.leftCols(t) * kappa.head(t).transpose();
      EXPECT_LE((find(e, "s_φ")->m.cast<double>() - want).cwiseAbs().maxCoeff(), 1e-5) << t;
    }
  }
  EXPECT_EQ(adds, l);
  const Event& ret = trace.events.back();
  ASSERT_EQ(ret.ref(), L::V_tilde);
  const Mat<double> exact = V * softmax_weights(Q, K, M);
  EXPECT_NEAR(find(ret, "max |Ṽ_rfa − Ṽ|")->m(0, 0), (Vt - exact).cwiseAbs().maxCoeff(), 1e-5);
  ASSERT_NE(find(ret, "Â"), nullptr);
  EXPECT_NE(find(ret, "Â")->note.find("NOT PART OF THE ALGORITHM"), std::string::npos);
  EXPECT_NEAR(find(ret, "max |Â − softmax|")->m(0, 0),
              (rf_implied_weights<double>(Q, K, M, omega) - softmax_weights(Q, K, M)).cwiseAbs().maxCoeff(), 1e-5);
}

// ∂ of lines 4–13 against central differences in double, for every mask (padding, a query with no
// key, cross), iid and orthogonal. h = 10⁻⁵: truncation ~h²·|f'''| ≈ 10⁻¹⁰, rounding ~10⁻¹⁶/h ≈ 10⁻¹¹,
// so 10⁻⁶ relative to the largest gradient entry is a wide bound that a wrong term would exceed.
TEST(RandomFeatureAttention, GradientsMatchFiniteDifferences) {
  const int d = 4, l = 6;
  int guarded = 0;
  // D = 16 on small inputs: healthy denominators; D = 2 on larger ones: some are guarded (b < ε·g),
  // and the guard's branch (b̂ = ε·g, whose gradient flows into κ through g) is checked too.
  for (const auto& [D, scale] : {std::pair{16, 0.6}, {2, 1.5}})
    for (const bool orthogonal : {false, true})
      for (const MaskCase& mc : mask_cases(l)) {
        SCOPED_TRACE(mc.name + (orthogonal ? " orthogonal" : "") + " D = " + std::to_string(D));
        Mat<double> Q = normal(d, mc.l_x, 31, scale), K = normal(d, mc.l_z, 32, scale), V = normal(3, mc.l_z, 33);
        const Mat<double> R = normal(3, mc.l_x, 34), mask = mc.mask.cast<double>();
        const Mat<double> omega = rf_omega(D, d, 4, 1, orthogonal);
        RfaStats<double> st;
        rf_attention_qkv<double>(Q, K, V, mc.mask, omega, &st);
        guarded += st.guarded;
        const auto loss = [&] {
          Mat<double> Vt(3, mc.l_x);
          rf_attention_forward<double>(Q, K, V, mask, omega, Vt);
          return (R.array() * Vt.array()).sum();
        };
        Mat<double> dQ(d, mc.l_x), dK(d, mc.l_z), dV(3, mc.l_z);
        rf_attention_backward<double>(R, Q, K, V, mask, omega, dQ, dK, dV);
        for (const auto& [X, dX] : {std::pair{&Q, &dQ}, {&K, &dK}, {&V, &dV}}) {
          const double tol = 1e-6 * std::max(1.0, dX->cwiseAbs().maxCoeff());
          for (Eigen::Index i = 0; i < X->size(); ++i) {
            const double x0 = (*X)(i), h = 1e-5;
            (*X)(i) = x0 + h;
            const double up = loss();
            (*X)(i) = x0 - h;
            const double down = loss();
            (*X)(i) = x0;
            EXPECT_NEAR((*dX)(i), (up - down) / (2 * h), tol) << "entry " << i;
          }
        }
      }
  EXPECT_GT(guarded, 0);  // the guard's branch was exercised
}

// A GPT whose config says "attention": "random_features" runs Algorithm 4-R in every head of every
// layer (and no Algorithm 4), and its P differs from the exact model's (it is an estimate).
TEST(RandomFeatureAttention, ModelRunsAlgorithm4RInEveryHead) {
  ModelConfig exact_c = sf::test::small_gpt(), rf_c = sf::test::small_gpt();
  rf_c.attention = AttentionKind::RandomFeatures, rf_c.rf_features = 32;
  const Model m = Model::initialised(exact_c, 5);
  const std::vector<double> theta(m.theta.begin(), m.theta.end());
  const GptW<const double> W = bind_gpt<const double>(m.table, theta.data());
  const Tokens x{1, 2, 3, 4, 5, 6, 7};
  const Mat<double> P_exact = dtransformer<double>(x, exact_c, W);
  Trace trace;
  Tracer tr(trace);
  const Mat<double> P_rf = dtransformer<double>(x, rf_c, W, &tr);
  EXPECT_TRUE(P_rf.allFinite());
  EXPECT_GT((P_rf - P_exact).cwiseAbs().maxCoeff(), 1e-9);
  int rf_calls = 0, exact_calls = 0;
  for (const Event& e : trace.events) {
    rf_calls += e.kind == EventKind::Enter && e.alg == algs::random_feature_attention;
    exact_calls += e.kind == EventKind::Enter && e.alg == 4;
  }
  EXPECT_EQ(rf_calls, rf_c.L * rf_c.H);
  EXPECT_EQ(exact_calls, 0);
  EXPECT_EQ(P_rf, dtransformer<double>(x, rf_c, W));  // ω is regenerated from rf_seed: the same P again
}

// Generation with the KV cache (Algorithm 14's step, kv_cache.cpp) runs Algorithm 4-R on the cached K, V
// too: each step's p equals the uncached forward's last column. Both sum the same keys in the same order
// in float; P ≤ 1, so 1e-5 (≈ 100 float ulps of 1) allows only reordering in the products, while
// running exact attention instead (what the cache did before) differs by ≥ 10⁻³ here.
TEST(RandomFeatureAttention, KvCachedGenerationRunsAlgorithm4RToo) {
  ModelConfig c = sf::test::small_gpt();
  c.attention = AttentionKind::RandomFeatures, c.rf_features = 16;
  const Model m = sf::test::spread_model(c, 3, 0.4);  // weights large enough that attention is not uniform
  const GptW<const float> W = bind_gpt<const float>(m.table, m.theta.data());
  const Tokens all{3, 1, 4, 1, 5, 2};  // ids within N_V = 8
  GptKvCache cache;
  ModelConfig exact = c;
  exact.attention = AttentionKind::Exact;
  double from_exact = 0;
  for (size_t n = 1; n <= all.size(); ++n) {
    const Tokens x(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
    const VecF p = dtransformer_cached(x, c, W, cache);
    EXPECT_LT((p - dtransformer<float>(x, c, W).col(n - 1)).cwiseAbs().maxCoeff(), 1e-5) << "step " << n;
    from_exact = std::max(from_exact, static_cast<double>((p - dtransformer<float>(x, exact, W).col(n - 1)).cwiseAbs().maxCoeff()));
  }
  EXPECT_GT(from_exact, 1e-3);
}

TEST(RandomFeatureAttention, ConfigKeysParseValidateAndRoundTrip) {
  const ModelConfig c =
      config_from_json(R"({"attention": "random_features", "rf_features": 32, "rf_seed": 7, "rf_orthogonal": true})");
  EXPECT_EQ(c.attention, AttentionKind::RandomFeatures);
  EXPECT_EQ(c.rf_features, 32);
  EXPECT_EQ(c.rf_seed, 7);
  EXPECT_TRUE(c.rf_orthogonal);
  const ModelConfig back = config_from_json(to_json(c));
  EXPECT_EQ(back.attention, AttentionKind::RandomFeatures);
  EXPECT_EQ(back.rf_features, 32);
  EXPECT_EQ(back.rf_seed, 7);
  EXPECT_TRUE(back.rf_orthogonal);
  EXPECT_EQ(config_from_json("{}").rf_features, 64);  // the default D
  EXPECT_EQ(to_json(config_from_json("{}")).find("rf_features"), std::string::npos);  // exact: no key written
  const auto message = [](const std::string& json) {
    try {
      config_from_json(json);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(R"({"attention": "random"})").find(R"("random_features")"), std::string::npos);
  EXPECT_NE(message(R"({"rf_features": 0})").find("rf_features"), std::string::npos);
  EXPECT_NE(message(R"({"rf_orthogonal": 1})").find("true or false"), std::string::npos);
  EXPECT_NE(message(R"({"attention": "random_features", "position": "alibi"})").find("ALiBi"), std::string::npos);
  EXPECT_NE(variant_summary(c).find("random-feature attention (D = 32, seed 7, orthogonal)"), std::string::npos);
}

// The listing "Algorithm 4-R", its tooltips and its three notations.
TEST(RandomFeatureAttention, ListingExplanationsAndNotations) {
  const PseudoAlgorithm* a = pseudocode(algs::random_feature_attention);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(algorithm_label(algs::random_feature_attention), "4-R");
  EXPECT_TRUE(not_in_paper(algs::random_feature_attention));
  EXPECT_NE(a->header.front().find("Not in the paper"), std::string::npos);
  EXPECT_NE(a->header[1].find("e^{‖k‖²/2σ²}"), std::string::npos);  // the note on the issue's missing factor
  EXPECT_EQ(pseudocode_all().size(), 15u);
  for (const LineRef r : L::kAll) {
    ASSERT_NE(pseudocode_line(r.alg, r.line), nullptr) << r.line;
    EXPECT_STRNE(explain_line(r.alg, r.line), "") << r.line;
    for (Notation n : {Notation::Carpenter, Notation::DinanYaidaZhang}) {
      const NotationText t = notation_text(n, r);
      EXPECT_NE(t.text.empty(), t.no_counterpart.empty()) << r.line;
    }
  }
}

// Against PyTorch in float64 (tests/data/random_features_reference.json, made by
// tests/reference/gen_random_features_reference.py): the script regenerates ω with the same splitmix64
// and Box–Muller (and Gram–Schmidt with chi norms for the orthogonal cases) and computes the estimate the
// quadratic way with autograd. ω must agree to rounding (1e-12: the same double operations; the
// orthogonal rows through ≤ 4 Gram–Schmidt steps); Ṽ and ∂(Σ R ⊙ Ṽ)/∂Q, ∂K, ∂V within
// kRefDouble / kRefDoubleGradient (reference_json.hpp: both sides double, in another order).
TEST(RandomFeatureAttention, MatchesThePyTorchReference) {
  const sf::test::json doc = sf::test::load_test_json("random_features_reference.json");
  ASSERT_GE(doc["cases"].size(), 5u);
  for (const auto& c : doc["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const Mat<double> Q = sf::test::json_matrix(c["Q"]), K = sf::test::json_matrix(c["K"]),
                      V = sf::test::json_matrix(c["V"]), R = sf::test::json_matrix(c["R"]);
    const Mat<double> mask = sf::test::json_matrix(c["mask"]);
    const Mat<double> omega = rf_omega(c["D"].get<int>(), static_cast<int>(Q.rows()), c["seed"].get<int>(),
                                       c["head"].get<int>(), c["orthogonal"].get<bool>());
    EXPECT_LE((omega - sf::test::json_matrix(c["omega"])).cwiseAbs().maxCoeff(), 1e-12);
    Mat<double> Vt(V.rows(), Q.cols()), dQ(Q.rows(), Q.cols()), dK(K.rows(), K.cols()), dV(V.rows(), V.cols());
    rf_attention_forward<double>(Q, K, V, mask, omega, Vt);
    EXPECT_LE((Vt - sf::test::json_matrix(c["Vt"])).cwiseAbs().maxCoeff(), sf::test::kRefDouble);
    rf_attention_backward<double>(R, Q, K, V, mask, omega, dQ, dK, dV);
    for (const auto& [got, key] : {std::pair{&dQ, "dQ"}, {&dK, "dK"}, {&dV, "dV"}}) {
      const Mat<double> want = sf::test::json_matrix(c[key]);
      EXPECT_LE((*got - want).norm(), sf::test::kRefDoubleGradient * std::max(1.0, want.norm())) << key;
    }
  }
}

}  // namespace test_random_feature_attention
