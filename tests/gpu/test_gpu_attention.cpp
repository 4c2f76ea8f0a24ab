// The compute shaders against core's Eigen attention (the ground truth), on random inputs:
// Algorithm 4 in both forms (every intermediate of the teaching form; Ṽ and the softmax the
// fused form implies) and Algorithm 5 with all heads (whole forward passes: test_gpu_forward.cpp).
// Threshold: max |GPU − CPU| ≤ kTol = 1e-4 on every compared matrix (derived in
// gpu_test_support.hpp: inputs and weights are scaled so that entries are O(1) and scores
// O(√d_attn)); masked scores must be exactly −∞ and their softmax weights exactly 0.
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>

#include "gpu_test_support.hpp"

namespace sf::gpu::test {
namespace {


enum class MaskType { Bidirectional, Unidirectional, Explicit };

struct Case {
  const char* name;
  int d_x, d_z, d_attn, d_mid, l_x, l_z;
  bool self;  // Z = X (then d_z = d_x, ℓ_z = ℓ_x)
  MaskType mask;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name << " (d_x " << c.d_x << ", d_z " << c.d_z << ", d_attn " << c.d_attn << ", d_mid " << c.d_mid
      << ", ℓ_x " << c.l_x << ", ℓ_z " << c.l_z << ")";
}

// Shapes where a swapped dimension shows: ℓ_x ≠ ℓ_z, d_attn ≠ d_mid, sizes that are not
// multiples of the 16×16 tiles or of the fused form's 64-query blocks and 32-key tiles.
const Case kCases[] = {
    {"self_bidirectional", 32, 32, 16, 24, 37, 37, true, MaskType::Bidirectional},
    {"self_unidirectional", 48, 48, 64, 32, 100, 100, true, MaskType::Unidirectional},
    {"cross_explicit", 20, 28, 12, 40, 33, 71, false, MaskType::Explicit},
    {"cross_unidirectional_lz_gt_lx", 24, 16, 8, 8, 30, 50, false, MaskType::Unidirectional},
    {"cross_bidirectional_lz_lt_lx", 16, 40, 32, 16, 65, 9, false, MaskType::Bidirectional},
    {"one_token", 8, 8, 4, 6, 1, 1, true, MaskType::Unidirectional},
    {"long_unidirectional_512", 64, 64, 64, 64, 512, 512, true, MaskType::Unidirectional},
    {"long_explicit_300x512", 32, 32, 64, 48, 300, 512, false, MaskType::Explicit},
};

// A random 0/1 mask (≈ 70% ones) with one column masked everywhere (when ℓ_x > 1): that
// column has no distribution, and both core and the GPU return zeros there.
Mask random_mask(Rng& rng, int l_z, int l_x) {
  Mask m(l_z, l_x);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.uniform() < 0.7 ? 1 : 0;
  if (l_x > 1) m.col(l_x / 2).setZero();
  return m;
}

Mask make_mask(MaskType t, Rng& rng, int l_z, int l_x) {
  switch (t) {
    case MaskType::Bidirectional:
      return bidirectional_mask(l_z, l_x);
    case MaskType::Unidirectional:
      return unidirectional_mask(l_z, l_x);
    case MaskType::Explicit:
      break;
  }
  return random_mask(rng, l_z, l_x);
}

struct Inputs {
  MatF X, Z;
  Mask mask;
  LayerStore W;
  Inputs(const Case& c, uint64_t seed, int H = 1) : Inputs(c, Rng(seed), H) {}

 private:
  Inputs(const Case& c, Rng rng, int H)
      : X(random_matrix(rng, c.d_x, c.l_x, 1.0)),
        Z(c.self ? X : random_matrix(rng, c.d_z, c.l_z, 1.0)),
        mask(make_mask(c.mask, rng, c.l_z, c.l_x)),
        W(rng, H, c.d_x, c.d_z, c.d_attn, c.d_mid, c.d_x) {}
};

// Where ¬Mask, S_masked must be exactly −∞ and A exactly 0; elsewhere within kTol of core.
void expect_masked_right(const MatF& S_masked, const MatF& A, const MatF& S_masked_cpu, const MatF& A_cpu,
                         const Mask& mask, double& err_S_masked, double& err_A) {
  err_S_masked = err_A = 0;
  int wrong_inf = 0, wrong_zero = 0;
  for (Eigen::Index t_x = 0; t_x < mask.cols(); ++t_x)
    for (Eigen::Index t_z = 0; t_z < mask.rows(); ++t_z) {
      if (!mask(t_z, t_x)) {
        wrong_inf += S_masked(t_z, t_x) != -std::numeric_limits<float>::infinity();
        wrong_zero += A(t_z, t_x) != 0.0f;
      } else {
        err_S_masked =
            std::max(err_S_masked, static_cast<double>(std::abs(S_masked(t_z, t_x) - S_masked_cpu(t_z, t_x))));
      }
      err_A = std::max(err_A, static_cast<double>(std::abs(A(t_z, t_x) - A_cpu(t_z, t_x))));
    }
  EXPECT_EQ(wrong_inf, 0) << "masked scores that are not exactly −∞";
  EXPECT_EQ(wrong_zero, 0) << "masked softmax weights that are not exactly 0";
}

class AttentionCase : public ::testing::TestWithParam<Case> {};

TEST_P(AttentionCase, TeachingFormMatchesCoreLineByLine) {
  SF_REQUIRE_GPU(gpu);
  const Case& c = GetParam();
  const Inputs in(c, 11);
  AttentionRecord<float> cpu;
  attention<float>(in.X, in.Z, in.W.head(0), in.mask, nullptr, &cpu);
  const GpuAttentionResult r = gpu->teaching(in.X, c.self ? in.X : in.Z, in.W.head(0), in.mask);
  const AttentionRecord<float>& g = r.record;

  const double eQ = max_abs_diff(g.Q, cpu.Q), eK = max_abs_diff(g.K, cpu.K), eV = max_abs_diff(g.V, cpu.V);
  const double eS = max_abs_diff(g.S, cpu.S), eVt = max_abs_diff(g.Vt, cpu.Vt);
  double eSm = 0, eA = 0;
  ASSERT_EQ(g.S_masked.rows(), c.l_z);
  ASSERT_EQ(g.A.cols(), c.l_x);
  expect_masked_right(g.S_masked, g.A, cpu.S_masked, cpu.A, in.mask, eSm, eA);
  EXPECT_LE(eQ, kTol) << "Q";
  EXPECT_LE(eK, kTol) << "K";
  EXPECT_LE(eV, kTol) << "V";
  EXPECT_LE(eS, kTol) << "S";
  EXPECT_LE(eSm, kTol) << "masked S";
  EXPECT_LE(eA, kTol) << "softmax(S/√d_attn)";
  EXPECT_LE(eVt, kTol) << "Ṽ";
  EXPECT_EQ(r.times.size(), 7u) << "one dispatch per line: L1, L2, L3, L4, L5, L6 softmax, L6 V·A";
  std::printf("[teaching %s] max |Δ|: Q %.2e K %.2e V %.2e S %.2e masked S %.2e A %.2e Ṽ %.2e\n", c.name, eQ, eK, eV,
              eS, eSm, eA, eVt);
}

TEST_P(AttentionCase, FusedFormMatchesCore) {
  SF_REQUIRE_GPU(gpu);
  const Case& c = GetParam();
  const Inputs in(c, 12);
  AttentionRecord<float> cpu;
  attention<float>(in.X, in.Z, in.W.head(0), in.mask, nullptr, &cpu);
  const FusedResult r = gpu->fused(in.X, c.self ? in.X : in.Z, in.W.head(0), in.mask, true);

  // The softmax the fused form used, from its log-normaliser L: exp(S/√d_attn − L) where Mask.
  ASSERT_EQ(r.L.cols(), c.l_x);
  const float sqrt_d = std::sqrt(static_cast<float>(c.d_attn));
  MatF A(c.l_z, c.l_x);
  for (int t_x = 0; t_x < c.l_x; ++t_x)
    for (int t_z = 0; t_z < c.l_z; ++t_z)
      A(t_z, t_x) = in.mask(t_z, t_x) ? std::exp(cpu.S(t_z, t_x) / sqrt_d - r.L(0, t_x)) : 0.0f;
  for (int t_x = 0; t_x < c.l_x; ++t_x) {
    if (!(in.mask.col(t_x).array() != 0).any()) {
      EXPECT_EQ(r.L(0, t_x), -std::numeric_limits<float>::infinity()) << "L of a column masked everywhere";
    }
  }

  const double eVt = max_abs_diff(r.Vt, cpu.Vt), eA = max_abs_diff(A, cpu.A);
  EXPECT_LE(eVt, kTol) << "Ṽ";
  EXPECT_LE(eA, kTol) << "softmax(S/√d_attn) = exp(S/√d_attn − L)";
  EXPECT_EQ(r.times.size(), 4u) << "L1, L2, L3, then L4–L6 fused";
  std::printf("[fused %s] max |Δ|: Ṽ %.2e softmax %.2e\n", c.name, eVt, eA);
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionCase, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// Algorithm 5: every head in each dispatch, then W_o Y + b_o 1ᵀ; the teaching form's per-head
// records equal core's.
TEST(MHAttention, AllHeadsBothFormsMatchCore) {
  SF_REQUIRE_GPU(gpu);
  const Case c{"mh", 40, 40, 8, 12, 45, 45, true, MaskType::Unidirectional};
  const int H = 5;
  const Inputs in(c, 13, H);
  const MHAttentionW<const float> W = in.W.view();
  std::vector<AttentionRecord<float>> cpu_recs;
  const MatF cpu = mh_attention<float>(in.X, in.X, W, in.mask, nullptr, &cpu_recs);

  std::vector<DispatchTime> times;
  std::vector<AttentionRecord<float>> recs;
  const MatF teaching = gpu->mh_attention(in.X, in.X, W, in.mask, Form::Teaching, &times, &recs);
  EXPECT_LE(max_abs_diff(teaching, cpu), kTol);
  EXPECT_EQ(times.size(), 8u) << "7 dispatches for all heads of Algorithm 4, 1 for W_o";
  ASSERT_EQ(recs.size(), static_cast<size_t>(H));
  double worst = 0;
  for (int h = 0; h < H; ++h) {
    worst = std::max({worst, max_abs_diff(recs[h].Q, cpu_recs[h].Q), max_abs_diff(recs[h].K, cpu_recs[h].K),
                      max_abs_diff(recs[h].V, cpu_recs[h].V), max_abs_diff(recs[h].S, cpu_recs[h].S),
                      max_abs_diff(recs[h].A, cpu_recs[h].A), max_abs_diff(recs[h].Vt, cpu_recs[h].Vt)});
    EXPECT_TRUE(((recs[h].S_masked.array() == -std::numeric_limits<float>::infinity()) == (in.mask.array() == 0)).all())
        << "head " << h + 1 << ": −∞ exactly where ¬Mask";
  }
  EXPECT_LE(worst, kTol) << "per-head records";

  const MatF fused = gpu->mh_attention(in.X, in.X, W, in.mask, Form::Fused, &times);
  EXPECT_LE(max_abs_diff(fused, cpu), kTol);
  EXPECT_EQ(times.size(), 5u) << "L1, L2, L3, L4–L6 fused (all heads), W_o";
  std::printf("[mh, H = %d] max |Δ|: Ṽ teaching %.2e, fused %.2e; per-head records %.2e\n", H,
              max_abs_diff(teaching, cpu), max_abs_diff(fused, cpu), worst);
}

TEST(MHAttention, CrossAttentionWithExplicitMask) {
  SF_REQUIRE_GPU(gpu);
  const Case c{"mh_cross", 24, 36, 16, 8, 20, 57, false, MaskType::Explicit};
  const Inputs in(c, 14, 3);
  const MHAttentionW<const float> W = in.W.view();
  const MatF cpu = mh_attention<float>(in.X, in.Z, W, in.mask);
  for (Form f : {Form::Teaching, Form::Fused}) {
    const double e = max_abs_diff(gpu->mh_attention(in.X, in.Z, W, in.mask, f), cpu);
    EXPECT_LE(e, kTol) << to_string(f);
    std::printf("[mh cross, %s] max |Δ| Ṽ %.2e\n", to_string(f), e);
  }
}

}  // namespace
}  // namespace sf::gpu::test
