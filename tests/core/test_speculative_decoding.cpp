// Algorithm 14-S, speculative decoding (not in the paper; core/algorithms/speculative.hpp): at τ = 0
// exactly Algorithm 14's greedy output; at τ > 0 the first token distributed as the target's
// Algorithm 14 q (a chi-square test over 20,000 seeded runs); a draft identical to the target
// accepts everything; a draft with another vocabulary is refused, saying what differs.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/sampling.hpp"
#include "core/algorithms/speculative.hpp"
#include "core/model/config.hpp"
#include "core/model/error.hpp"
#include "core/model/params.hpp"
#include "core/pseudocode/explanations.hpp"
#include "core/pseudocode/notations.hpp"
#include "core/pseudocode/pseudocode.hpp"
#include "core/trace/trace.hpp"
#include "core/trace/vocabulary.hpp"

namespace test_speculative_decoding {

using namespace sf;

namespace {

// A small GPT with a 5-token vocabulary (N_V = 8), its weights scaled up 5× so that its next-token
// distributions are far from uniform and differ between seeds (GPT-2's N(0, 0.02²) initialisation
// gives nearly uniform p, where target and draft would hardly differ and the test could not tell a
// wrong acceptance rule from the right one), yet not one-hot: seeds 3 and 4 below give a target p
// with every entry ≥ 0.02 and a draft q at total-variation distance 0.73 from it.
Model model(uint64_t seed, int L = 1, int d_e = 8, float scale = 5.0f) {
  ModelConfig c;
  c.L = L;
  c.H = 2;
  c.d_e = d_e;
  c.d_attn = 4;
  c.d_mid = 4;
  c.d_mlp = 16;
  c.l_max = 12;
  c.vocab = {"a", "b", "c", "d", "e"};
  Model m = Model::initialised(c, seed);
  for (float& w : m.theta) w *= scale;
  return m;
}

// ln Γ-based regularised lower incomplete gamma P(a, x), by its series for x < a + 1 and by the
// continued fraction for Q = 1 − P otherwise (Numerical Recipes §6.2); both to 1e-14 relative.
double gamma_p(double a, double x) {
  if (x <= 0) return 0;
  const double gln = std::lgamma(a);
  if (x < a + 1) {
    double ap = a, sum = 1.0 / a, del = sum;
    for (int n = 0; n < 1000 && std::abs(del) > std::abs(sum) * 1e-15; ++n) sum += del *= x / ++ap;
    return sum * std::exp(-x + a * std::log(x) - gln);
  }
  double b = x + 1 - a, c = 1e300, d = 1 / b, h = d;
  for (int i = 1; i < 1000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    c = b + an / c;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::abs(del - 1) < 1e-15) break;
  }
  return 1 - std::exp(-x + a * std::log(x) - gln) * h;
}

// The chi-square critical value for `df` degrees of freedom at significance alpha: the x with
// P(χ²_df > x) = alpha, i.e. gamma_p(df/2, x/2) = 1 − alpha, by bisection (the CDF is increasing).
double chi_square_critical(int df, double alpha) {
  double lo = 0, hi = 1000;
  for (int it = 0; it < 200; ++it) {
    const double mid = (lo + hi) / 2;
    (gamma_p(df / 2.0, mid / 2) < 1 - alpha ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

struct ChiSquare {
  double statistic = 0;
  int df = 0;
};

// Pearson's statistic of observed counts against probabilities `expected_p` (n draws). Bins with an
// expected count below 5 (Cochran's rule) are pooled into one bin; if that pool is still below 5 it
// joins the smallest remaining bin. df = bins after merging − 1 (the probabilities are given, not fitted).
ChiSquare chi_square(const std::vector<int>& observed, const VecF& expected_p, int n) {
  std::vector<std::pair<double, double>> bins;  // (expected, observed)
  std::pair<double, double> pool{0, 0};
  for (size_t k = 0; k < observed.size(); ++k) {
    const double expected = expected_p(static_cast<Eigen::Index>(k)) * static_cast<double>(n);
    std::pair<double, double>& bin = expected < 5 ? pool : bins.emplace_back(0.0, 0.0);
    bin.first += expected;
    bin.second += observed[k];
  }
  if (pool.first > 0 || pool.second > 0) {
    if (pool.first >= 5 || bins.empty()) {
      bins.push_back(pool);
    } else {
      auto smallest = std::min_element(bins.begin(), bins.end());
      smallest->first += pool.first;
      smallest->second += pool.second;
    }
  }
  ChiSquare r;
  for (const auto& [e, o] : bins) r.statistic += (o - e) * (o - e) / e;
  r.df = static_cast<int>(bins.size()) - 1;
  return r;
}

}  // namespace

TEST(SpeculativeDecoding, ChiSquareCriticalValuesMatchTheTables) {
  // Standard table values at p = 0.001 (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.4), to their 3 decimals.
  EXPECT_NEAR(chi_square_critical(1, 0.001), 10.828, 5e-4);
  EXPECT_NEAR(chi_square_critical(4, 0.001), 18.467, 5e-4);
  EXPECT_NEAR(chi_square_critical(7, 0.001), 24.322, 5e-4);
  EXPECT_NEAR(chi_square_critical(30, 0.001), 59.703, 5e-4);
}

TEST(SpeculativeDecoding, GreedyIsExactlyAlgorithm14sGreedyOutput) {
  const Model target = model(1, 2);
  const Model draft = model(2, 1);  // another model: it agrees with the target only sometimes
  const int bos = target.config.bos_token();
  const std::vector<Tokens> prompts{{bos}, {bos, 1, 2}, {bos, 3, 3, 5}, {bos, 5, 4, 2, 1, 2}};
  int proposed = 0, accepted = 0;
  for (const Tokens& x : prompts) {
    InferenceOptions plain;
    plain.tau = 0;
    plain.l_gen = 9;
    plain.trim_context = false;  // Algorithm 14-S stops at ℓ_max too
    const InferenceResult expected = dinference(x, target, plain);
    for (int K = 1; K <= 4; ++K) {
      SpeculativeOptions opt;
      opt.K = K;
      opt.tau = 0;
      opt.l_gen = plain.l_gen;
      const SpeculativeResult r = speculative_decoding(x, target, draft, opt);
      EXPECT_EQ(r.y, expected.y) << "prompt length " << x.size() << ", K = " << K;
      EXPECT_EQ(r.stopped.empty(), expected.stopped.empty()) << r.stopped << " | " << expected.stopped;
      EXPECT_EQ(r.target_passes, static_cast<int>(r.rounds.size()));
      EXPECT_EQ(r.plain_passes(), static_cast<int>(expected.y.size()));
      proposed += r.proposed();
      accepted += r.accepted();
    }
  }
  // Both branches ran: some proposals accepted, some replaced by the target's argmax.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, proposed);
}

TEST(SpeculativeDecoding, FirstTokenIsDistributedAsTheTargetsAlgorithm14Q) {
  const auto t0 = std::chrono::steady_clock::now();
  const Model target = model(3, 2);
  const Model draft = model(4, 1);
  const Tokens x{target.config.bos_token(), 2, 4};
  const double tau = 0.8;
  // The target's q of Algorithm 14 (line 5) for the first token, computed exactly once.
  const MatF P = dtransformer<float>(x, target.config, target.weights());
  const VecF expected = temperature(P.col(P.cols() - 1), tau);
  SpeculativeOptions opt;
  opt.K = 3;
  opt.tau = tau;
  opt.l_gen = 1 + opt.K;  // K′ = K in the first round; only its first token is counted
  const int n = 20000;
  std::vector<int> counts(static_cast<size_t>(target.config.N_V()), 0);
  int rejected_first = 0;
  for (int s = 0; s < n; ++s) {
    opt.seed = static_cast<uint64_t>(s) + 1;
    const SpeculativeResult r = speculative_decoding(x, target, draft, opt);
    ++counts[static_cast<size_t>(r.y.front() - 1)];
    rejected_first += r.rounds.front().accepted == 0;
  }
  // The test means something only if the draft's first proposals are often rejected (the residual
  // then decides the token): the draft's q differs from the target's p.
  EXPECT_GT(rejected_first, n / 10);
  const ChiSquare c = chi_square(counts, expected, n);
  EXPECT_GE(c.df, 4) << "too few bins left after merging: the test would say little";
  const double critical = chi_square_critical(c.df, 0.001);
  EXPECT_LT(c.statistic, critical) << "df = " << c.df;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  RecordProperty("seconds", std::to_string(seconds));
  std::printf("chi-square %.2f, df %d, critical %.3f, first proposals rejected %d of %d, %.2f s\n", c.statistic,
              c.df, critical, rejected_first, n, seconds);
}

TEST(SpeculativeDecoding, ADraftIdenticalToTheTargetAcceptsEveryProposal) {
  const Model target = model(5, 2);
  const Model draft = target;
  const Tokens x{target.config.bos_token(), 1, 3};
  for (double tau : {0.0, 1.0}) {
    SpeculativeOptions opt;
    opt.K = 3;
    opt.tau = tau;
    opt.l_gen = 8;
    opt.seed = 7;
    const SpeculativeResult r = speculative_decoding(x, target, draft, opt);
    EXPECT_EQ(r.accepted(), r.proposed()) << "τ = " << tau;
    EXPECT_GT(r.proposed(), 0);
    // 8 tokens in rounds of K′ + 1 = 4, 4: two target passes where Algorithm 14 takes 8.
    EXPECT_EQ(r.target_passes, 2);
    EXPECT_EQ(r.plain_passes(), 8);
    // τ = 0: p_i and q_i are the same one-hot, r = 1 exactly. τ > 0: r = 1 only up to float rounding,
    // because the target's column comes from a pass over more tokens than the draft's (other matrix
    // shapes, so Eigen may sum the same products in another order). r − 1 ≈ δ(x̃) − Σ_v p(v) δ(v), δ the
    // logits' difference between the two passes; each logit here is some 50 float roundings (ε = 2⁻²⁴)
    // of terms of size ≲ 10, so |r − 1| ≲ 50 · 6e-8 · 10 = 3e-5 (measured over 200 seeds: 7e-7).
    // Rejection then has probability 1 − r ≤ 3e-5 per proposal: the seeded run below accepts all.
    for (const SpeculativeRound& round : r.rounds)
      for (double ratio : round.ratio) {
        if (tau == 0.0) EXPECT_EQ(ratio, 1.0);
        else EXPECT_NEAR(ratio, 1.0, 3e-5);
      }
  }
}

TEST(SpeculativeDecoding, ADraftWithAnotherVocabularyIsRefusedSayingWhatDiffers) {
  const Model target = model(1);
  Model other_token = model(2);
  other_token.config.vocab[2] = "x";
  const Tokens x{target.config.bos_token()};
  try {
    speculative_decoding(x, target, other_token, {});
    ADD_FAILURE() << "a draft with another vocabulary ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("token 3 differs: the target's is \"c\", the draft's \"x\""), std::string::npos)
        << e.what();
  }
  ModelConfig bigger = target.config;
  bigger.vocab.push_back("f");
  const Model more_tokens = Model::initialised(bigger, 2);
  try {
    speculative_decoding(x, target, more_tokens, {});
    ADD_FAILURE() << "a draft with more tokens ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("N_V differs: the target's is 8, the draft's 9"), std::string::npos) << e.what();
  }
}

TEST(SpeculativeDecoding, ProposesFewerTokensNearTheContextLimitAndStopsThere) {
  const Model target = model(1, 2);  // ℓ_max = 12
  const Model draft = model(2);
  const Tokens x{target.config.bos_token(), 1, 2, 3, 4, 5, 1, 2, 3};  // 9 tokens: room for 3 more in a pass
  SpeculativeOptions opt;
  opt.K = 4;
  opt.tau = 0;
  opt.l_gen = 20;
  const SpeculativeResult r = speculative_decoding(x, target, draft, opt);
  ASSERT_FALSE(r.rounds.empty());
  EXPECT_EQ(r.rounds.front().K, 3);  // K′ = min(4, 20 − 1, ℓ_max − 9)
  for (const SpeculativeRound& round : r.rounds) EXPECT_LE(round.fed + round.K, target.config.l_max);
  EXPECT_NE(r.stopped.find("ℓ_max = 12"), std::string::npos) << r.stopped;
  EXPECT_EQ(static_cast<int>(x.size() + r.y.size()), target.config.l_max + 1);  // as Algorithm 14 without trimming
}

TEST(SpeculativeDecoding, ResidualKeepsOnlyWhereTheTargetExceedsTheDraft) {
  VecF p(4), q(4);
  p << 0.5f, 0.2f, 0.2f, 0.1f;
  q << 0.1f, 0.6f, 0.2f, 0.1f;
  const VecF r = residual_distribution(p, q);
  // max(0, p − q) = (0.4, 0, 0, 0): all the mass on token 1 (float rounding of 0.5 − 0.1 cancels in the norm).
  EXPECT_FLOAT_EQ(r(0), 1.0f);
  EXPECT_EQ(r(1), 0.0f);
  EXPECT_EQ(r(2), 0.0f);
  EXPECT_EQ(r(3), 0.0f);
}

TEST(SpeculativeDecoding, ListingExplanationsAndNotations) {
  namespace L = lines::speculative_decoding;
  const PseudoAlgorithm* a = pseudocode(algs::speculative_decoding);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(algorithm_label(algs::speculative_decoding), "14-S");
  EXPECT_TRUE(not_in_paper(algs::speculative_decoding));
  EXPECT_EQ(a->signature, "y ← SpeculativeDecoding(x, θ_target, θ_draft; K, τ, ℓ_gen)");
  EXPECT_NE(a->header.front().find("Not in the paper"), std::string::npos);
  EXPECT_NE(a->header[3].find("p is the TARGET's distribution after τ (Algorithm 14's q) and q the DRAFT's"),
            std::string::npos);
  EXPECT_EQ(pseudocode_all().size(), 15u);  // the paper's table is unchanged
  for (const LineRef r : L::kAll) {
    ASSERT_NE(pseudocode_line(r.alg, r.line), nullptr) << r.line;
    EXPECT_STRNE(explain_line(r.alg, r.line), "") << r.line;
  }
  for (const PseudoLine& line : a->lines)  // every numbered line: a text or why there is none
    for (Notation n : {Notation::Carpenter, Notation::DinanYaidaZhang}) {
      const NotationText t = notation_text(n, algs::speculative_decoding, line.number);
      EXPECT_NE(t.text.empty(), t.no_counterpart.empty()) << line.number;
    }
  EXPECT_EQ(pseudocode_line(algs::speculative_decoding, 13)->text.rfind("p′ ← norm(max(0, p_i − q_i))", 0), 0u);
}

// The value named `name` bound at the first event of `line` in round `round`; null when none.
const Value* bound(const Trace& t, LineRef line, int round, const std::string& name) {
  for (const Event& e : t.events)
    if (e.ref() == line && e.idx.i == round)
      for (const Value& v : e.values)
        if (v.name == name) return &v;
  return nullptr;
}

TEST(SpeculativeDecoding, TraceBindsProposalsDrawsRatiosAndTheResidual) {
  namespace L = lines::speculative_decoding;
  const Model target = model(3, 2);
  const Model draft = model(4, 1);
  const Tokens x{target.config.bos_token(), 2, 4};
  SpeculativeOptions opt;
  opt.K = 3;
  opt.tau = 0.8;
  opt.l_gen = 8;
  opt.seed = 2;
  Trace t;
  Tracer tr(t);
  const SpeculativeResult r = speculative_decoding(x, target, draft, opt, &tr);
  EXPECT_EQ(r.y, speculative_decoding(x, target, draft, opt).y);  // tracing changes nothing
  ASSERT_FALSE(r.rounds.empty());
  for (size_t k = 0; k < r.rounds.size(); ++k) {
    const SpeculativeRound& round = r.rounds[k];
    const int i = static_cast<int>(k) + 1;
    if (round.K > 0) {
      const Value* q = bound(t, L::draft, i, "q_i");
      ASSERT_NE(q, nullptr) << i;
      EXPECT_EQ(q->m(round.proposals[0] - 1, 0), round.q[0](round.proposals[0] - 1));
      const Value* u = bound(t, L::ratio, i, "u");
      ASSERT_NE(u, nullptr) << i;
      EXPECT_EQ(u->m(0, 0), static_cast<float>(round.u[0]));
    }
    const Value* p = bound(t, L::target, i, "p");
    ASSERT_NE(p, nullptr) << i;
    EXPECT_EQ(p->m.cols(), round.K + 1);  // p_1 … p_{K′+1}: one pass
    if (round.accepted < round.K) {
      const Value* residual = bound(t, L::residual, i, "p′");
      ASSERT_NE(residual, nullptr) << i;
      EXPECT_NEAR(residual->m.sum(), 1.0f, 1e-6f);  // a distribution over N_V = 8 floats: 8 roundings of ≤ 1
      EXPECT_GT(residual->m(round.y - 1, 0), 0.0f);  // y was drawn from it
    } else {
      EXPECT_NE(bound(t, L::bonus, i, "p_{K′+1}"), nullptr) << i;
    }
  }
  const Value* passes = bound(t, L::result, 0, "target passes");
  ASSERT_NE(passes, nullptr);
  EXPECT_EQ(passes->m(0, 0), static_cast<float>(r.target_passes));
  EXPECT_EQ(bound(t, L::result, 0, "Algorithm 14's passes")->m(0, 0), 8.0f);
}

}  // namespace test_speculative_decoding
