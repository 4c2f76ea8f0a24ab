// Properties of Algorithms 10 (DTransformer) and 14 (DInference) that hold for any parameters:
// P's columns are distributions, masked attention weights are exactly 0, the unidirectional
// mask makes column t independent of later tokens, tracing does not change the numbers,
// inputs are checked, sampling is seeded, and the context is trimmed (or not) at ℓ_max.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"
#include "core/model/rng.hpp"
#include "core/algorithms/sampling.hpp"
#include "float_bounds.hpp"

namespace test_properties {

using namespace sf;
using sf::test::kFloatU;

namespace {

using MatD = Mat<double>;

ModelConfig small_config(int L, int H, int d_e, int d_attn, int d_mid, int d_mlp, int l_max, const char* vocab) {
  ModelConfig c;
  c.L = L;
  c.H = H;
  c.d_e = d_e;
  c.d_attn = d_attn;
  c.d_mid = d_mid;
  c.d_mlp = d_mlp;
  c.l_max = l_max;
  c.vocab.clear();
  for (const char* p = vocab; *p; ++p) c.vocab.emplace_back(1, *p);
  return c;
}

std::vector<ModelConfig> configs() {
  return {small_config(2, 2, 8, 4, 3, 16, 8, "abcde"),    // N_V = 8
          small_config(1, 3, 6, 2, 2, 12, 10, "xyz"),     // N_V = 6
          small_config(3, 1, 4, 4, 5, 8, 12, "0123456")};  // N_V = 10
}

// Model::initialised has weights of size 0.02, which make every P nearly uniform: a leak of
// future tokens would then hide below 1e-6. `sharp` re-draws every parameter (γ and β too)
// from N(0, 1) so that each token visibly moves every later column.
Model random_model(const ModelConfig& c, uint64_t seed, bool sharp) {
  Model m = Model::initialised(c, seed);
  if (sharp) {
    Rng rng(seed * 7919 + 13);
    for (float& x : m.theta) x = static_cast<float>(rng.normal());
  }
  return m;
}

// Columns that must be equal (a column of P does not depend on later tokens) are computed in double
// from the same θ, by matrix products of different sizes that may sum in another order (and another
// order at each SIMD width). A logit is ≤ 2L + 1 = 7 chained sums of ≤ d_mlp = 16 terms each, of
// size Σ|terms| ≲ 16·3·3 ≈ 150 in the `sharp` models (weights N(0, 1), normalised inputs ≲ 3): its
// error is ≲ 7·γ_16·150 ≈ 1.9e-12 with double's u = 2⁻⁵³, and p = softmax moves by at most twice
// that. kSameColumn = 1e-10 leaves a factor 25; a leak of a later token moves a column by ≥ 1e-4
// (checked below, so that the comparison can see one). In float the same bound would be 1e-3,
// too coarse to see a small leak, which is why these tests run in double.
constexpr double kSameColumn = 1e-10;

// The float forward against the double one of the same θ: only float rounds (u = 2⁻²⁴). The worst
// case (the bound above at float's u, 1e-3) is not approached: each addition rounds by ≤ u of its
// partial sum, independently and with either sign (Higham & Mary 2019), so a sum of n ≤ 16 terms is
// off by σ ≈ u·√(n/3)·Σ|terms| ≲ 6e-8·2.3·150 ≈ 2.1e-5, a logit (7 sums in quadrature) by √7 times
// that, 5.5e-5, and p by ≤ 2·max|δlogit|: 6σ is 6.6e-4, at the scale of the `sharp` models' terms.
const double kFloatAgainstDouble = 6 * 2 * std::sqrt(7.0) * kFloatU * std::sqrt(16.0 / 3) * 150;

Tokens random_tokens(Rng& rng, int n, int N_V) {
  Tokens x(n);
  for (int& v : x) v = 1 + static_cast<int>(rng.below(N_V));
  return x;
}

}  // namespace

TEST(Properties, ColumnsOfPSumToOne) {
  for (const auto& c : configs())
    for (uint64_t seed : {1, 2, 3})
      for (bool sharp : {false, true}) {
        const Model m = random_model(c, seed, sharp);
        Rng rng(seed + 100);
        for (int n : {1, 2, c.l_max}) {
          const Tokens x = random_tokens(rng, n, c.N_V());
          const MatF P = dtransformer<float>(x, c, m.weights());
          ASSERT_EQ(P.rows(), c.N_V());
          ASSERT_EQ(P.cols(), n);
          for (int t = 0; t < n; ++t) {
            // Σ_v p_v − 1: each p = e/Σe is within (N_V + 2)·u of exact relative to p and the float
            // sum adds γ_N_V: |Σp − 1| ≤ (2N_V + 2)·u ≈ 1.3e-6 for N_V ≤ 10 (u = 2⁻²⁴).
            EXPECT_NEAR(P.col(t).sum(), 1.0f, 1e-5f) << "seed " << seed << " column " << t + 1;
            EXPECT_TRUE((P.col(t).array() >= 0.0f).all());
            EXPECT_TRUE(P.col(t).allFinite());
          }
        }
      }
}

TEST(Properties, MaskedAttentionWeightsAreExactlyZero) {
  for (const auto& c : configs())
    for (uint64_t seed : {4, 5}) {
      const Model m = random_model(c, seed, true);
      Rng rng(seed);
      const int n = c.l_max - 1;
      const Tokens x = random_tokens(rng, n, c.N_V());
      // (a) through the trace: every Attention line 5 has −∞ exactly below the diagonal, every
      // line 6 has weight exactly 0 there (and > 0 is allowed only on or above it).
      Trace trace;
      Tracer tr(trace);
      dtransformer<float>(x, c, m.weights(), &tr);
      int lines5 = 0, lines6 = 0;
      for (const auto& e : trace.events) {
        if (e.alg != 4 || e.kind != EventKind::Line) continue;
        if (e.line == 5) {
          ++lines5;
          const MatF& S = e.values.at(0).m;
          ASSERT_EQ(S.rows(), n);
          for (int tz = 0; tz < n; ++tz)
            for (int tx = 0; tx < n; ++tx)
              if (tz > tx) {
                EXPECT_TRUE(std::isinf(S(tz, tx)) && std::signbit(S(tz, tx)));
              } else {
                EXPECT_TRUE(std::isfinite(S(tz, tx)));
              }
        }
        if (e.line == 6) {
          ++lines6;
          const Value& A = e.values.at(0);
          ASSERT_EQ(A.name, "softmax(S/√d_attn)");
          for (int tx = 0; tx < n; ++tx) {
            EXPECT_NEAR(A.m.col(tx).sum(), 1.0f, 1e-5f);  // ≤ (2ℓ_z + 2)·u ≈ 1.6e-6, ℓ_z ≤ 12
            for (int tz = tx + 1; tz < n; ++tz) EXPECT_EQ(A.m(tz, tx), 0.0f);
          }
        }
      }
      EXPECT_EQ(lines5, c.L * c.H);
      EXPECT_EQ(lines6, c.L * c.H);
      // (b) through mh_attention's records on a random X̃ (float and double).
      MatF X = MatF::Random(c.d_e, n) * 3.0f;
      std::vector<AttentionRecord<float>> recs;
      mh_attention<float>(X, X, m.weights().layers[0].attn, unidirectional_mask(n, n), nullptr, &recs);
      ASSERT_EQ(static_cast<int>(recs.size()), c.H);
      for (const auto& r : recs)
        for (int tx = 0; tx < n; ++tx)
          for (int tz = tx + 1; tz < n; ++tz) {
            EXPECT_EQ(r.A(tz, tx), 0.0f);
            EXPECT_TRUE(std::isinf(r.S_masked(tz, tx)) && std::signbit(r.S_masked(tz, tx)));
            EXPECT_FALSE(std::isinf(r.S(tz, tx)));  // line 4's S is kept unmasked
          }
    }
}

TEST(Properties, UnidirectionalMaskMakesColumnTIndependentOfLaterTokens) {
  for (const auto& c : configs())
    for (uint64_t seed : {1, 2, 3}) {
      const Model m = random_model(c, seed, true);
      Rng rng(seed * 31);
      const int n = c.l_max;
      const Tokens x = random_tokens(rng, n, c.N_V());
      const std::vector<double> theta(m.theta.begin(), m.theta.end());
      const auto W = bind_gpt<const double>(m.table, theta.data());
      const MatD P = dtransformer<double>(x, c, W);
      for (int t = 1; t < n; ++t) {  // change every token after t
        Tokens y = x;
        for (int u = t; u < n; ++u) y[u] = x[u] % c.N_V() + 1;  // a different id in [1, N_V]
        const MatD Q = dtransformer<double>(y, c, W);
        for (int s = 0; s < t; ++s)
          for (int v = 0; v < c.N_V(); ++v)
            EXPECT_NEAR(Q(v, s), P(v, s), kSameColumn) << "column " << s + 1 << " moved when tokens after " << t
                                                       << " changed";
        // …and the test can see a change: column t (the first changed token) moves.
        EXPECT_GT((Q.col(t) - P.col(t)).cwiseAbs().maxCoeff(), 1e-4) << "the check would not see a leak";
      }
      // Changing an earlier token does move later columns (attention does look back).
      Tokens y = x;
      y[0] = x[0] % c.N_V() + 1;
      const MatD Q = dtransformer<double>(y, c, W);
      EXPECT_GT((Q.col(n - 1) - P.col(n - 1)).cwiseAbs().maxCoeff(), 1e-6);  // 10⁴·kSameColumn: a real change
    }
}

TEST(Properties, PrefixGivesTheSameColumns) {
  // Column t of P depends on x[1:t] only: running the prefix x[1:t] gives the same column.
  const ModelConfig c = configs()[0];
  const Model m = random_model(c, 9, true);
  Rng rng(9);
  const Tokens x = random_tokens(rng, c.l_max, c.N_V());
  const std::vector<double> theta(m.theta.begin(), m.theta.end());
  const auto W = bind_gpt<const double>(m.table, theta.data());
  const MatD P = dtransformer<double>(x, c, W);
  for (int t = 1; t <= c.l_max; ++t) {
    const MatD Pt = dtransformer<double>(Tokens(x.begin(), x.begin() + t), c, W);
    for (int s = 0; s < t; ++s)
      for (int v = 0; v < c.N_V(); ++v) EXPECT_NEAR(Pt(v, s), P(v, s), kSameColumn);
  }
}

TEST(Properties, TracedAndUntracedForwardAgree) {
  for (const auto& c : configs())
    for (uint64_t seed : {1, 2}) {
      const Model m = random_model(c, seed, seed == 2);
      Rng rng(seed);
      const Tokens x = random_tokens(rng, c.l_max - 2, c.N_V());
      const MatF P0 = dtransformer<float>(x, c, m.weights());
      Trace trace;
      Tracer tr(trace);
      const MatF P1 = dtransformer<float>(x, c, m.weights(), &tr);
      EXPECT_TRUE(P0 == P1) << "tracing changed P";  // bitwise: tracing only copies
      // The trace's last event binds P, the same P.
      ASSERT_FALSE(trace.events.empty());
      const Event& last = trace.events.back();
      EXPECT_EQ(last.alg, 10);
      EXPECT_EQ(last.line, 11);
      ASSERT_EQ(last.values.at(0).name, "P");
      EXPECT_TRUE(last.values.at(0).m == P0);
      EXPECT_EQ(trace.tokens_x, x);
      // The double instantiation agrees with float.
      std::vector<double> theta(m.theta.begin(), m.theta.end());
      const MatD Pd = dtransformer<double>(x, c, bind_gpt<const double>(m.table, theta.data()));
      EXPECT_LT((Pd - P0.cast<double>()).cwiseAbs().maxCoeff(), kFloatAgainstDouble);
    }
}

TEST(Properties, DTransformerRejectsBadInput) {
  const ModelConfig c = configs()[0];  // ℓ_max = 8, N_V = 8
  const Model m = random_model(c, 1, false);
  const auto W = m.weights();
  auto message = [&](const Tokens& x) -> std::string {
    try {
      dtransformer<float>(x, c, W);
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_THROW(dtransformer<float>({}, c, W), Error);
  EXPECT_NE(message({}).find("empty"), std::string::npos);
  EXPECT_THROW(dtransformer<float>(Tokens(9, 1), c, W), Error);  // ℓ = 9 > ℓ_max = 8
  EXPECT_NE(message(Tokens(9, 1)).find("ℓ_max is 8"), std::string::npos) << message(Tokens(9, 1));
  EXPECT_THROW(dtransformer<float>({1, 0, 2}, c, W), Error);  // id 0 (ids are 1-based)
  EXPECT_NE(message({1, 0, 2}).find("token 2 has id 0"), std::string::npos) << message({1, 0, 2});
  EXPECT_THROW(dtransformer<float>({1, 9}, c, W), Error);  // id N_V + 1
  EXPECT_NE(message({1, 9}).find("id 9"), std::string::npos);
  EXPECT_THROW(dtransformer<float>({-3}, c, W), Error);
  std::vector<double> theta(m.theta.begin(), m.theta.end());
  EXPECT_THROW(dtransformer<double>({}, c, bind_gpt<const double>(m.table, theta.data())), Error);
  // The edges are accepted: ids 1 and N_V (eos_token), length exactly ℓ_max.
  EXPECT_NO_THROW(dtransformer<float>({1, c.N_V()}, c, W));
  EXPECT_NO_THROW(dtransformer<float>(Tokens(8, c.N_V()), c, W));
  EXPECT_NO_THROW(check_tokens(Tokens(8, 1), c));
}

TEST(Properties, DInferenceTauZeroIsRepeatedArgmax) {
  for (const auto& c : configs()) {
    const Model m = random_model(c, 3, true);
    const Tokens prompt{1, 2};
    InferenceOptions opt;
    opt.tau = 0.0;
    opt.l_gen = c.l_max - 2;
    opt.seed = 1;
    const InferenceResult a = dinference(prompt, m, opt);
    opt.seed = 999;  // the seed is irrelevant at τ = 0
    const InferenceResult b = dinference(prompt, m, opt);
    EXPECT_EQ(a.y, b.y);
    EXPECT_TRUE(a.stopped.empty());
    ASSERT_EQ(static_cast<int>(a.y.size()), opt.l_gen);
    // By hand: P ← DTransformer(x), y ← argmax of the last column, x ← [x, y].
    Tokens x = prompt;
    for (int i = 0; i < opt.l_gen; ++i) {
      const MatF P = dtransformer<float>(x, c, m.weights());
      const VecF p = P.col(P.cols() - 1);
      Eigen::Index best = 0;
      p.maxCoeff(&best);
      EXPECT_EQ(a.y[i], static_cast<int>(best) + 1) << "step " << i + 1;
      EXPECT_TRUE(a.steps[i].p == p);
      EXPECT_EQ(a.steps[i].q.maxCoeff(), 1.0f);  // one-hot
      EXPECT_EQ(a.steps[i].q.sum(), 1.0f);
      EXPECT_EQ(a.steps[i].q(best), 1.0f);
      x.push_back(static_cast<int>(best) + 1);
    }
  }
}

TEST(Properties, DInferenceSeeding) {
  // Model::initialised (weights 0.02) gives nearly uniform P: a good test of the sampler.
  const ModelConfig c = small_config(1, 2, 8, 4, 4, 16, 32, "abcdefghij");
  const Model m = random_model(c, 1, false);
  InferenceOptions opt;
  opt.tau = 1.0;
  opt.l_gen = 24;
  opt.seed = 42;
  const InferenceResult a = dinference({1}, m, opt);
  const InferenceResult b = dinference({1}, m, opt);
  EXPECT_EQ(a.y, b.y);  // same seed → same sample
  int differing = 0;
  for (uint64_t s = 1; s <= 5; ++s) {
    opt.seed = 42 + s;
    if (dinference({1}, m, opt).y != a.y) ++differing;
  }
  EXPECT_GE(differing, 4);  // different seed → (with 13^24 outcomes) a different sample
  // Each sampled token is in [1, N_V], and q = p at τ = 1.
  for (const auto& s : a.steps) {
    EXPECT_GE(s.y, 1);
    EXPECT_LE(s.y, c.N_V());
    // q = p^(1/τ)/Σ at τ = 1: a pow and a renormalisation, ≤ (N_V + 3)·u ≈ 1e-6 relative to p ≤ 1.
    EXPECT_LT((s.q - s.p).cwiseAbs().maxCoeff(), 1e-6f);
  }
  // The coins are those of Rng(seed): step i draws with the i-th uniform.
  opt.seed = 42;
  Rng rng(42);
  for (const auto& s : a.steps) EXPECT_EQ(s.y, sample_mult(s.q, rng.uniform()));
}

TEST(Properties, DInferenceTrimsContextAtLMax) {
  const ModelConfig c = configs()[0];  // ℓ_max = 8
  const Model m = random_model(c, 2, true);
  const Tokens prompt{1, 2, 3, 4, 5, 1};  // ℓ = 6
  InferenceOptions opt;
  opt.tau = 0.0;
  opt.l_gen = 5;  // 6 + 5 = 11 > ℓ_max
  opt.trim_context = true;
  const InferenceResult r = dinference(prompt, m, opt);
  ASSERT_EQ(r.y.size(), 5u);
  EXPECT_TRUE(r.stopped.empty());
  // Step i sees x of length 6 + i − 1; the model gets its last min(ℓ_max, that) tokens:
  // lengths 6, 7, 8, 9, 10 → context_start 1, 1, 1, 2, 3.
  const int want_start[5] = {1, 1, 1, 2, 3};
  Tokens x = prompt;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(r.steps[i].context_start, want_start[i]) << "step " << i + 1;
    const Tokens input(x.begin() + (want_start[i] - 1), x.end());
    ASSERT_LE(static_cast<int>(input.size()), c.l_max);
    const MatF P = dtransformer<float>(input, c, m.weights());
    EXPECT_TRUE(r.steps[i].p == VecF(P.col(P.cols() - 1))) << "step " << i + 1;
    x.push_back(r.steps[i].y);
  }
  EXPECT_EQ(Tokens(x.begin() + 6, x.end()), r.y);

  // Without trimming: steps 1–3 feed 6, 7 and 8 tokens; step 4 would feed 9 > ℓ_max: stop
  // after 3 tokens.
  opt.trim_context = false;
  const InferenceResult s = dinference(prompt, m, opt);
  EXPECT_EQ(s.y.size(), 3u);
  EXPECT_EQ(s.steps.size(), 3u);
  EXPECT_FALSE(s.stopped.empty());
  EXPECT_NE(s.stopped.find("ℓ_max"), std::string::npos) << s.stopped;
  EXPECT_NE(s.stopped.find("after 3 tokens"), std::string::npos) << s.stopped;
  EXPECT_EQ(s.y, Tokens(r.y.begin(), r.y.begin() + 3));  // same tokens until the stop
  // A prompt longer than ℓ_max is refused outright without trimming, accepted with it.
  const Tokens long_prompt(10, 2);
  EXPECT_THROW(dinference(long_prompt, m, opt), Error);
  opt.trim_context = true;
  const InferenceResult t = dinference(long_prompt, m, opt);
  EXPECT_EQ(t.y.size(), 5u);
  EXPECT_EQ(t.steps[0].context_start, 3);  // 10 tokens, the last 8 start at position 3
}

TEST(Properties, DInferenceRejectsBadOptions) {
  const ModelConfig c = configs()[1];
  const Model m = random_model(c, 1, false);
  InferenceOptions opt;
  EXPECT_THROW(dinference({}, m, opt), Error);
  opt.tau = -1;
  EXPECT_THROW(dinference({1}, m, opt), Error);
  opt.tau = std::nan("");
  EXPECT_THROW(dinference({1}, m, opt), Error);
  opt.tau = 1;
  opt.l_gen = -1;
  EXPECT_THROW(dinference({1}, m, opt), Error);
  opt.l_gen = 0;
  const InferenceResult r = dinference({1}, m, opt);
  EXPECT_TRUE(r.y.empty());
}

}  // namespace test_properties
