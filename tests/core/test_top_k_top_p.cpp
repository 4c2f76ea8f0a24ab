// Top-k and top-p (nucleus) sampling, applied after τ (not in the paper; core/algorithms/sampling.hpp):
// the cut and the renormalised q against numbers computed by hand for a 4-token vocabulary; the
// limits (top-k = 1 is argmax, top-k ≥ N_V and top-p = 1 are plain sampling, seed for seed) in
// Algorithms 14 and 15; the three sub-steps the trace binds on the "sample a token" line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/sampling.hpp"
#include "core/model/config.hpp"
#include "core/model/error.hpp"
#include "core/model/params.hpp"

#include "tiny_config.hpp"

namespace test_top_k_top_p {

using namespace sf;

namespace {

// The hand-computed q below are exact decimals (or fractions) of float inputs. The code computes
// q ∝ p^{1/τ} in double and rounds it to float (≤ ½ ulp, 3e-8 relative), sums ≤ 4 kept entries in
// double and rounds q/Σ to float again: a few ulps of a number ≤ 1, under 3e-7. 1e-6 leaves a
// factor 3; a wrong cut moves some q by ≥ 0.1.
constexpr float kTol = 1e-6f;

// p = (0.1, 0.4, 0.2, 0.3): by decreasing p the ids are 2, 4, 3, 1 with p 0.4, 0.3, 0.2, 0.1.
VecF p4() { return (VecF(4) << 0.1f, 0.4f, 0.2f, 0.3f).finished(); }

TokenCut cut_at(double tau, int k, double p) {
  return cut_top_k_top_p(p4(), temperature(p4(), tau), TopKTopP{k, p});
}

void expect_q(const VecF& q, std::vector<float> want) {
  ASSERT_EQ(q.size(), static_cast<Eigen::Index>(want.size()));
  for (size_t v = 0; v < want.size(); ++v) EXPECT_NEAR(q(static_cast<Eigen::Index>(v)), want[v], kTol) << "token " << v + 1;
}

TEST(TopKTopP, TopKKeepsTheKMostLikelyAndRenormalises) {
  // τ = 1: q = p. k = 2 keeps ids 2 and 4 (0.4 + 0.3 = 0.7): q' = (0, 0.4/0.7, 0, 0.3/0.7) = (0, 4/7, 0, 3/7).
  const TokenCut c = cut_at(1.0, 2, 1.0);
  EXPECT_EQ(c.order, (std::vector<int>{1, 3, 2, 0}));  // 0-based ids 2, 4, 3, 1
  EXPECT_EQ(c.kept, 2);
  EXPECT_NEAR(c.mass, 0.7, kTol);
  expect_q(c.q, {0.0f, 4.0f / 7, 0.0f, 3.0f / 7});
}

TEST(TopKTopP, TopKAfterTemperature) {
  // τ = 2: q ∝ √p = (0.316228, 0.632456, 0.447214, 0.547723), Σ = 1.943621,
  // q = (0.162700, 0.325401, 0.230093, 0.281805). k = 2 keeps ids 2 and 4:
  // q' = (0, 0.632456/1.180179, 0, 0.547723/1.180179) = (0, 0.535898, 0, 0.464102).
  const TokenCut c = cut_at(2.0, 2, 1.0);
  EXPECT_NEAR(c.mass, 0.3254009 + 0.2818055, kTol);
  expect_q(c.q, {0.0f, 0.5358984f, 0.0f, 0.4641016f});
}

TEST(TopKTopP, TopPKeepsTheSmallestSetReachingTheMass) {
  // τ = 1, top-p = 0.75: cumulative 0.4, 0.7 (< 0.75), 0.9 (≥ 0.75): ids 2, 4, 3, mass 0.9;
  // q' = (0, 0.4/0.9, 0.2/0.9, 0.3/0.9) = (0, 4/9, 2/9, 3/9).
  TokenCut c = cut_at(1.0, 0, 0.75);
  EXPECT_EQ(c.kept, 3);
  EXPECT_NEAR(c.mass, 0.9, kTol);
  expect_q(c.q, {0.0f, 4.0f / 9, 2.0f / 9, 3.0f / 9});
  // top-p = 0.3: 0.4 ≥ 0.3 already: the most likely token alone.
  c = cut_at(1.0, 0, 0.3);
  EXPECT_EQ(c.kept, 1);
  expect_q(c.q, {0.0f, 1.0f, 0.0f, 0.0f});
  // A tiny p still keeps one token (the argmax).
  EXPECT_EQ(cut_at(1.0, 0, 1e-9).kept, 1);
  // τ = 2 (q as in TopKAfterTemperature), top-p = 0.8: cumulative 0.325401, 0.607206, 0.837300 ≥ 0.8:
  // ids 2, 4, 3, mass 0.837300; q' = (0, 0.388631, 0.274804, 0.336565).
  c = cut_at(2.0, 0, 0.8);
  EXPECT_EQ(c.kept, 3);
  expect_q(c.q, {0.0f, 0.3886314f, 0.2748039f, 0.3365647f});
}

TEST(TopKTopP, TopPIsMeasuredAfterTheTopKCut) {
  // k = 2 keeps ids 2, 4 (mass 0.7); top-p = 0.55 of that is 0.385, and id 2 alone has 0.4 ≥ 0.385:
  // one token. (Measured on the uncut q, 0.4 < 0.55 would keep two: this is the rule that differs.)
  const TokenCut c = cut_at(1.0, 2, 0.55);
  EXPECT_EQ(c.kept, 1);
  expect_q(c.q, {0.0f, 1.0f, 0.0f, 0.0f});
}

TEST(TopKTopP, EqualProbabilitiesKeepTheSmallerIdsFirst) {
  const VecF u = VecF::Constant(4, 0.25f);
  const TokenCut c = cut_top_k_top_p(u, temperature(u, 1.0), TopKTopP{2, 1.0});
  EXPECT_EQ(c.order, (std::vector<int>{0, 1, 2, 3}));
  expect_q(c.q, {0.5f, 0.5f, 0.0f, 0.0f});
}

TEST(TopKTopP, NoCutLeavesQBitForBit) {
  const VecF q = temperature(p4(), 0.7);
  for (const TopKTopP cut : {TopKTopP{4, 1.0}, TopKTopP{100, 1.0}, TopKTopP{0, 1.0}}) {
    const TokenCut c = cut_top_k_top_p(p4(), q, cut);
    EXPECT_EQ(c.kept, 4);
    EXPECT_TRUE(c.q == q) << "k = " << cut.k;
  }
}

TEST(TopKTopP, BadKOrPIsRefusedWithAClearMessage) {
  auto message = [](TopKTopP cut) {
    try {
      check_top_k_top_p(cut);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message({-1, 1.0}).find("top-k must be a whole number ≥ 1"), std::string::npos);
  EXPECT_NE(message({0, 0.0}).find("top-p must be a number in (0, 1]"), std::string::npos);
  EXPECT_NE(message({0, 1.5}).find("top-p must be a number in (0, 1]"), std::string::npos);
  EXPECT_NE(message({0, std::nan("")}).find("top-p"), std::string::npos);
  EXPECT_EQ(message({3, 0.9}), "");
}

ModelConfig small_gpt() {
  return test::tiny_gpt_config(24);
}

Tokens prompt_of(const ModelConfig& c) { return {c.bos_token(), 5, 6, 7}; }

// Weights scaled up so that p is far from uniform (the default init gives p ≈ 1/N_V) but not one-hot:
// sampling at τ = 2 still leaves the greedy path for some seed (checked in TopK1IsGreedyForManySeeds).
constexpr float kScale = 6.0f;
Model peaked(const ModelConfig& c, uint64_t seed) {
  Model m = Model::initialised(c, seed);
  for (float& w : m.theta) w *= kScale;
  return m;
}

InferenceResult generate(const Model& m, double tau, uint64_t seed, TopKTopP cut) {
  InferenceOptions opt;
  opt.l_gen = 8;
  opt.tau = tau;
  opt.seed = seed;
  opt.cut = cut;
  return dinference(prompt_of(m.config), m, opt);
}

TEST(TopKTopP, TopK1IsGreedyForManySeeds) {
  const Model m = peaked(small_gpt(), 11);
  const Tokens greedy = generate(m, 0.0, 1, {}).y;
  for (uint64_t seed = 1; seed <= 30; ++seed)
    for (const double tau : {0.8, 2.0}) EXPECT_EQ(generate(m, tau, seed, {1, 1.0}).y, greedy) << "seed " << seed;
  // Sampling without the cut does leave the greedy path for some seed (so the check above can fail).
  bool differs = false;
  for (uint64_t seed = 1; seed <= 30 && !differs; ++seed) differs = generate(m, 2.0, seed, {}).y != greedy;
  EXPECT_TRUE(differs);
}

TEST(TopKTopP, TopPOneAndTopKAtLeastNVAreUncutSampling) {
  const Model m = peaked(small_gpt(), 12);
  const int N = m.config.N_V();
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const InferenceResult plain = generate(m, 1.0, seed, {});
    for (const TopKTopP cut : {TopKTopP{N, 1.0}, TopKTopP{N + 7, 1.0}}) {
      const InferenceResult r = generate(m, 1.0, seed, cut);
      EXPECT_EQ(r.y, plain.y) << "seed " << seed << " k = " << cut.k;
      for (size_t i = 0; i < r.steps.size(); ++i) EXPECT_TRUE(r.steps[i].q == plain.steps[i].q);
    }
  }
}

TEST(TopKTopP, DrawsOnlyFromTheKeptSet) {
  const Model m = peaked(small_gpt(), 13);
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const InferenceResult r = generate(m, 1.5, seed, {3, 0.9});
    for (const InferenceStep& s : r.steps) {
      const std::vector<int> order = order_by_decreasing(s.p);
      ASSERT_GE(s.kept, 1);
      ASSERT_LE(s.kept, 3);
      const auto kept_end = order.begin() + s.kept;
      EXPECT_NE(std::find(order.begin(), kept_end, s.y - 1), kept_end) << "seed " << seed;
      EXPECT_NEAR(s.q.sum(), 1.0f, kTol);
      for (auto it = kept_end; it != order.end(); ++it) EXPECT_EQ(s.q(*it), 0.0f);
    }
  }
}

TEST(TopKTopP, EncoderDecoderTopK1IsGreedy) {
  ModelConfig c = small_gpt();
  c.arch = "ed";
  c.L_enc = 1;
  c.L_dec = 1;
  c.l_max = 12;
  const Model m = peaked(c, 14);
  const Tokens z{c.bos_token(), 5, 6, 7, c.eos_token()};
  EdInferenceOptions opt;
  opt.tau = 0.0;
  const Tokens greedy = edinference(z, m, opt).x_hat;
  opt.tau = 1.5;
  opt.cut = {1, 1.0};
  for (uint64_t seed = 1; seed <= 15; ++seed) {
    opt.seed = seed;
    EXPECT_EQ(edinference(z, m, opt).x_hat, greedy) << "seed " << seed;
  }
}

const Value* value_named(const Event& e, const std::string& name) {
  for (const Value& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}

TEST(TopKTopP, TheTraceBindsTheSortedPTheCutAndTheRenormalisedQ) {
  const Model m = peaked(small_gpt(), 15);
  InferenceOptions opt;
  opt.l_gen = 3;
  opt.tau = 1.2;
  opt.cut = {4, 0.8};
  Trace t;
  Tracer tr(t);
  const InferenceResult r = dinference(prompt_of(m.config), m, opt, &tr);
  int line_events = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.kind != EventKind::Line || e.ref() != lines::d_inference::sample) continue;
    const InferenceStep& s = r.steps[line_events++];
    ASSERT_GE(k, 3u);
    const Event& sorted = t.events[k - 3];
    const Event& cut = t.events[k - 2];
    const Event& renorm = t.events[k - 1];
    for (const Event* sub : {&sorted, &cut, &renorm}) {
      EXPECT_EQ(sub->kind, EventKind::SubStep);
      EXPECT_EQ(sub->ref(), lines::d_inference::sample);
      EXPECT_NE(sub->label.find("not in the paper"), std::string::npos) << sub->label;
    }
    const Value* ps = value_named(sorted, "p (sorted)");
    ASSERT_NE(ps, nullptr);
    const std::vector<int> order = order_by_decreasing(s.p);
    for (int j = 0; j < m.config.N_V(); ++j) EXPECT_EQ(ps->m(j, 0), s.p(order[j]));
    ASSERT_NE(value_named(cut, "n"), nullptr);
    EXPECT_EQ(value_named(cut, "n")->m(0, 0), s.kept);
    EXPECT_EQ(value_named(cut, "k")->m(0, 0), 4.0f);
    EXPECT_NEAR(value_named(cut, "Σ q kept")->m(0, 0), s.kept_mass, 1e-6);
    EXPECT_TRUE(MatF(value_named(renorm, "q")->m) == MatF(s.q));
    EXPECT_TRUE(MatF(value_named(e, "q")->m) == MatF(s.q));
  }
  EXPECT_EQ(line_events, 3);
  // Without a cut the line has no sub-steps.
  opt.cut = {};
  Trace plain;
  Tracer tp(plain);
  dinference(prompt_of(m.config), m, opt, &tp);
  for (const Event& e : plain.events)
    EXPECT_FALSE(e.kind == EventKind::SubStep && e.ref() == lines::d_inference::sample);
}

}  // namespace

}  // namespace test_top_k_top_p
