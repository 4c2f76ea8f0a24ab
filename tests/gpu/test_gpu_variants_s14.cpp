// Issue 25's last two variants on the GPU against core (the ground truth):
// - the relative position bias (position "relative", T5): B[t_z, t_x] = W_rel[h, bucket(t_z − t_x)] added to
//   S/√d_attn in line 6, causal and bidirectional buckets, several heads, ℓ that does and does not
//   divide the fused form's blocks (B_r = 64, B_c ≤ 32), both forms and the KV-cached step;
// - random-feature attention (Algorithm 4-R, attention "random_features"): causal, bidirectional, cross,
//   prefix-LM and padded masks, orthogonal features, H_kv < H, and a D so small that the denominator
//   guard acts.
//
// Tolerances.
// - Relative bias: kTol (gpu_test_support.hpp: σ ≲ 4e-6 for S, softmax and Ṽ). B adds one rounding to
//   each logit S/√d_attn + B, |B| ≤ max|W_rel| ≈ 4 here (N(0, 1) entries): ≤ u·4 = 2.4e-7, less than
//   ALiBi's; B itself must equal core's bit for bit (the same float W_rel[h, k] at the same bucket).
// - Algorithm 4-R: Ṽ[:, t] = a/b with a = Σ_i κ_i φ(k_i)ᵀφ(q) v_i and b = Σ_i κ_i φ(k_i)ᵀφ(q), both sides
//   in float. Since ‖φ‖ = 1, every term of either sum is at most κ_i in size, so their sums of sizes are
//   ≤ g·max|v| and ≤ g (g = Σ κ_i): a relative error τ in the terms gives |δa| ≤ τ·g·max|v|, |δb| ≤ τ·g,
//   and |δṼ| ≤ (|δa| + |Ṽ|·|δb|)/b_eff = τ·(g/b_eff)·(max|v| + |Ṽ|), b_eff = max(b, ε·g) as divided by.
//   τ: φ's entries differ by ≤ a few ULP of cos, sin (u ≈ 6e-8 each; the angle ⟨w, x⟩, a sum of
//   d_attn = 8 products of size ≤ 3, by ≈ 8·3·u = 1.4e-6 absolute, which moves cos, sin by as much);
//   κ = exp(e − c) by GLSL's (3 + 2|x|) ULP, |x| ≤ 10 here: 23 ULP = 1.4e-6; the running sums over ℓ_z ≤ 45
//   keys and the 2D ≤ 64-term products each by σ ≈ u·√n ≤ 0.5e-6. Together ≈ 4e-6; kRfTau = 4e-5 leaves 10×,
//   while a real fault (another head's ω, a key missed or added, a wrong κ) moves Ṽ by O(0.1·max|v|),
//   more than kRfTau·(g/b_eff)·(max|v| + |Ṽ|) for every column but the guarded ones (g/b_eff = 1000).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/algorithms/kv_cache.hpp"
#include "core/algorithms/random_features.hpp"
#include "core/trace/vocabulary.hpp"
#include "gpu/forward_gpu.hpp"
#include "gpu_test_support.hpp"

namespace sf::gpu::test {
namespace {

const Form kForms[] = {Form::Teaching, Form::Fused};
constexpr double kRfTau = 4e-5;

// W of `store` with the query heads of key/value head g = ⌊h·H_kv/H⌋ viewing g's first head's W_k, b_k,
// W_v, b_v (core's layout), W_rel = `W_rel` when given, and, with `identity_out`, W_o = I, b_o = 0 so that
// Ṽ is Y = [Y¹; …; Yᴴ] exactly (the products with 1 and 0 are exact).
MHAttentionW<const float> view(const LayerStore& store, int H_kv, const MatF* W_rel, const MatF* I, const MatF* zero) {
  MHAttentionW<const float> W = store.view();
  const int H = static_cast<int>(W.heads.size());
  if (H_kv > 0 && H_kv < H)
    for (int h = 0; h < H; ++h) {
      const AttentionHeadW<const float> first = store.head((h * H_kv / H * H + H_kv - 1) / H_kv);
      new (&W.heads[h].W_k) MapM<const float>(first.W_k);
      new (&W.heads[h].b_k) MapV<const float>(first.b_k);
      new (&W.heads[h].W_v) MapM<const float>(first.W_v);
      new (&W.heads[h].b_v) MapV<const float>(first.b_v);
    }
  if (W_rel) new (&W.W_rel) MapM<const float>(W_rel->data(), W_rel->rows(), W_rel->cols());
  if (I) {
    new (&W.W_o) MapM<const float>(I->data(), I->rows(), I->cols());
    new (&W.b_o) MapV<const float>(zero->data(), zero->size());
  }
  return W;
}

// ---- the relative position bias -------------------------------------------------------------

struct RelativeCase {
  const char* name;
  bool bidirectional;  // BERT's buckets (each sign of t_z − t_x half of them) and mask; else GPT's, causal
  int l, H, buckets, max_distance;
};

// ℓ = 64 fills the fused form's 64-query blocks and its 32-key tiles exactly; ℓ = 37 does not.
const RelativeCase kRelative[] = {
    {"causal_64", false, 64, 3, 8, 20},
    {"causal_37", false, 37, 2, 6, 12},
    {"bidirectional_64", true, 64, 4, 8, 16},
    {"bidirectional_37", true, 37, 3, 12, 30},
};

AttentionOptions relative_options(const RelativeCase& c) {
  AttentionOptions av;
  av.rel_buckets = c.buckets;
  av.rel_max_distance = c.max_distance;
  av.rel_bidirectional = c.bidirectional;
  return av;
}

TEST(GpuRelativeBias, BothFormsMatchCoreWithBBitForBit) {
  SF_REQUIRE_GPU(gpu);
  for (const RelativeCase& c : kRelative) {
    SCOPED_TRACE(c.name);
    Rng rng(41);
    const MatF X = random_matrix(rng, 16, c.l, 1.0);
    const LayerStore store(rng, c.H, 16, 16, 8, 8, 16);
    const MatF W_rel = random_matrix(rng, c.H, c.buckets, 1.0);
    const MHAttentionW<const float> W = view(store, 0, &W_rel, nullptr, nullptr);
    const Mask mask = c.bidirectional ? bidirectional_mask(c.l, c.l) : unidirectional_mask(c.l, c.l);
    const AttentionOptions av = relative_options(c);
    std::vector<AttentionRecord<float>> cpu_recs, recs;
    const MatF cpu = mh_attention<float>(X, X, W, mask, nullptr, &cpu_recs, av);
    std::vector<DispatchTime> times;
    EXPECT_LE(max_abs_diff(gpu->mh_attention(X, X, W, mask, Form::Teaching, &times, &recs, av), cpu), kTol);
    ASSERT_EQ(recs.size(), cpu_recs.size());
    for (size_t h = 0; h < recs.size(); ++h) {
      SCOPED_TRACE("head " + std::to_string(h + 1));
      EXPECT_TRUE(recs[h].relative);
      EXPECT_EQ(recs[h].m, cpu_recs[h].m);
      ASSERT_EQ(recs[h].B.rows(), cpu_recs[h].B.rows());
      EXPECT_TRUE(recs[h].B == cpu_recs[h].B) << "B is the same float W_rel[h, bucket] at every cell";
      EXPECT_LE(max_abs_diff(recs[h].A, cpu_recs[h].A), kTol);
    }
    bool named = false;
    for (const DispatchTime& t : times) named = named || t.what.find("+ B) (relative bias, T5)") != std::string::npos;
    EXPECT_TRUE(named) << "line 6's dispatch names the bias";
    EXPECT_LE(max_abs_diff(gpu->mh_attention(X, X, W, mask, Form::Fused, nullptr, nullptr, av), cpu), kTol);
  }
}

// A bias that is not Toeplitz in the positions (the GPU reading another diagonal) would show here: the
// KV-cached step's queries sit at positions ℓ_c + 1 … against keys 1 … ℓ_c + n.
TEST(GpuRelativeBias, KvCachedStepMatchesCore) {
  SF_REQUIRE_GPU(gpu);
  const RelativeCase c = kRelative[1];  // causal, 6 buckets up to distance 12
  Rng rng(43);
  const int l_c = 9, n = 3;
  const MatF X = random_matrix(rng, 16, l_c + n, 1.0);
  const LayerStore store(rng, c.H, 16, 16, 8, 8, 16);
  const MatF W_rel = random_matrix(rng, c.H, c.buckets, 1.0);
  const MHAttentionW<const float> W = view(store, 0, &W_rel, nullptr, nullptr);
  const AttentionOptions av = relative_options(c);
  const MatF past = X.leftCols(l_c), now = X.rightCols(n);
  const Mask step_mask = unidirectional_mask(l_c + n, l_c + n).rightCols(n);
  for (Form form : kForms) {
    SCOPED_TRACE(to_string(form));
    std::vector<MatF> K_cpu(c.H, MatF(8, 0)), V_cpu(c.H, MatF(8, 0)), K, V;  // an empty cache of each head
    kv_cached_mh_attention(past, W, K_cpu, V_cpu, true, unidirectional_mask(l_c, l_c), av);  // fill the cache
    K = K_cpu, V = V_cpu;
    const MatF cpu = kv_cached_mh_attention(now, W, K_cpu, V_cpu, true, step_mask, av);
    EXPECT_LE(max_abs_diff(gpu->mh_attention_cached(now, W, K, V, true, step_mask, form, av), cpu), kTol);
  }
}

// ---- random-feature attention (Algorithm 4-R) -------------------------------------------------

enum class Keys { Causal, Bidirectional, Prefix, PaddedCausal };

struct RfCase {
  const char* name;
  int l_x, l_z;
  bool self;
  Keys keys;
  int H, H_kv, D;
  bool orthogonal;
};

const RfCase kRf[] = {
    {"causal", 30, 30, true, Keys::Causal, 2, 0, 32, false},
    {"bidirectional", 25, 25, true, Keys::Bidirectional, 3, 0, 16, false},
    {"cross_lz_gt_lx", 20, 45, false, Keys::Bidirectional, 2, 0, 32, false},
    {"prefix", 24, 24, true, Keys::Prefix, 2, 0, 32, false},
    {"padded_causal", 28, 28, true, Keys::PaddedCausal, 2, 0, 32, false},
    {"orthogonal_D_20", 30, 30, true, Keys::Causal, 2, 0, 20, true},  // D > d_attn = 8: three blocks
    {"hkv_2_of_4", 30, 30, true, Keys::Causal, 4, 2, 16, false},
    {"guard_D_1", 30, 30, true, Keys::Bidirectional, 3, 0, 1, false},  // D = 1: b ≤ ε·g in many columns
};

Mask rf_mask(Keys k, int l_z, int l_x) {
  switch (k) {
    case Keys::Causal:
      return unidirectional_mask(l_z, l_x);
    case Keys::Bidirectional:
      return bidirectional_mask(l_z, l_x);
    case Keys::Prefix:
      return prefix_mask(l_x, l_x / 3);
    case Keys::PaddedCausal:
      break;
  }
  Mask m = unidirectional_mask(l_z, l_x);  // keys 1, 4 and 11 are padding: hidden from every query
  for (int t_z : {0, 3, 10}) m.row(t_z).setZero();
  return m;
}

// The numbers core's Algorithm 4-R computes for query head h (1-based): its Q, K, V as
// random_feature_attention makes them, then rf_attention_qkv with head h's ω, with the stats.
struct CoreHead {
  MatF V;
  RfaStats<float> stats;
};
CoreHead core_head(const MatF& X, const MatF& Z, const AttentionHeadW<const float>& w, const Mask& mask,
                   const AttentionOptions& av, int h) {
  const MatF Q = (w.W_q * X).colwise() + w.b_q, K = (w.W_k * Z).colwise() + w.b_k;
  CoreHead c{(w.W_v * Z).colwise() + w.b_v, {}};
  rf_attention_qkv<float>(Q, K, c.V, mask,
                          rf_omega(av.rf_D, static_cast<int>(Q.rows()), static_cast<std::uint64_t>(av.rf_seed), h,
                                   av.rf_orthogonal),
                          &c.stats);
  return c;
}

// Each column of Y^h against core's within kRfTau·(g/b_eff)·(max|v| + |Ṽ|) (top of the file); a column
// with no allowed key (g = 0) must be exactly 0. Returns the guarded columns core counted.
int expect_heads_match(const MatF& Y_gpu, const MatF& Y_cpu, const MatF& X, const MatF& Z,
                       const MHAttentionW<const float>& W, const Mask& mask, const AttentionOptions& av, int d_mid) {
  int guarded = 0;
  for (int h = 0; h < static_cast<int>(W.heads.size()); ++h) {
    const CoreHead c = core_head(X, Z, W.heads[h], mask, av, h + 1);
    guarded += c.stats.guarded;
    const double max_v = c.V.cwiseAbs().maxCoeff();
    for (Eigen::Index t = 0; t < Y_cpu.cols(); ++t) {
      const double g = c.stats.g(t), b_eff = std::max<double>(c.stats.b(t), kRfGuard * g);
      for (int j = 0; j < d_mid; ++j) {
        const Eigen::Index row = h * d_mid + j;
        const double cpu = Y_cpu(row, t), diff = std::abs(Y_gpu(row, t) - cpu);
        if (g == 0) {
          EXPECT_EQ(Y_gpu(row, t), 0.0f) << "head " << h + 1 << ", t_x = " << t + 1 << ": no allowed key";
          continue;
        }
        EXPECT_LE(diff, kRfTau * (g / b_eff) * (max_v + std::abs(cpu)))
            << "head " << h + 1 << ", row " << j + 1 << ", t_x = " << t + 1 << ", g/b_eff = " << g / b_eff;
      }
    }
  }
  return guarded;
}

TEST(GpuRandomFeatures, EveryMaskKindMatchesCoreColumnByColumn) {
  SF_REQUIRE_GPU(gpu);
  constexpr int d_x = 16, d_attn = 8, d_mid = 6;
  for (const RfCase& k : kRf) {
    SCOPED_TRACE(k.name);
    Rng rng(47);
    const MatF X = random_matrix(rng, d_x, k.l_x, 1.0);
    const MatF Z = k.self ? X : random_matrix(rng, d_x, k.l_z, 1.0);
    const LayerStore store(rng, k.H, d_x, d_x, d_attn, d_mid, d_x);
    const MatF I = MatF::Identity(k.H * d_mid, k.H * d_mid), zero = MatF::Zero(k.H * d_mid, 1);
    const MHAttentionW<const float> W = view(store, k.H_kv, nullptr, &I, &zero);
    const Mask mask = rf_mask(k.keys, k.l_z, k.l_x);
    AttentionOptions av;
    av.H_kv = k.H_kv;
    av.rf_D = k.D;
    av.rf_seed = 5;
    av.rf_orthogonal = k.orthogonal;
    const MatF& Zr = k.self ? X : Z;
    const MatF cpu = mh_attention<float>(X, Zr, W, mask, nullptr, nullptr, av);  // = Y: W_o = I, b_o = 0
    for (Form form : kForms) {  // 4-R replaces lines 4–6 in either form
      SCOPED_TRACE(to_string(form));
      std::vector<DispatchTime> times;
      const MatF Y = gpu->mh_attention(X, Zr, W, mask, form, &times, nullptr, av);
      const int guarded = expect_heads_match(Y, cpu, X, Zr, W, mask, av, d_mid);
      EXPECT_EQ(gpu->guarded_columns(), guarded);
      if (k.D == 1) EXPECT_GT(guarded, 0) << "D = 1 was chosen for the guard to act";
      ASSERT_EQ(times.size(), 8u);  // L1–L3, L5, L6, L7, L8–L13, then Algorithm 5's L4
      for (size_t i = 0; i + 1 < times.size(); ++i) {
        EXPECT_EQ(times[i].algorithm, algs::random_feature_attention) << times[i].what;
        EXPECT_EQ(times[i].what.rfind("Alg. 4-R L", 0), 0u) << times[i].what;
      }
      EXPECT_EQ(times.back().algorithm, 5);
    }
  }
}

// The KV-cached step (Algorithm 14's generation with attention "random_features"): the new query over the
// cached keys is core's, and the new K, V columns are appended to the cache as core appends them.
TEST(GpuRandomFeatures, KvCachedStepMatchesCore) {
  SF_REQUIRE_GPU(gpu);
  Rng rng(53);
  constexpr int H = 2, d_mid = 8, l_c = 11, n = 1;
  const MatF X = random_matrix(rng, 16, l_c + n, 1.0);
  const LayerStore store(rng, H, 16, 16, 8, d_mid, 16);
  const MHAttentionW<const float> W = view(store, 0, nullptr, nullptr, nullptr);
  AttentionOptions av;
  av.rf_D = 32;
  const MatF past = X.leftCols(l_c), now = X.rightCols(n);
  const Mask step_mask = unidirectional_mask(l_c + n, l_c + n).rightCols(n);
  std::vector<MatF> K_cpu(H, MatF(8, 0)), V_cpu(H, MatF(d_mid, 0));  // an empty cache of each head
  kv_cached_mh_attention(past, W, K_cpu, V_cpu, true, unidirectional_mask(l_c, l_c), av);
  std::vector<MatF> K = K_cpu, V = V_cpu;
  const MatF cpu = kv_cached_mh_attention(now, W, K_cpu, V_cpu, true, step_mask, av);
  const MatF gpu_out = gpu->mh_attention_cached(now, W, K, V, true, step_mask, Form::Fused, av);
  // Through W_o (entries N(0, 1/(H·d_mid))) the column bound above becomes, with ‖W_o row‖₁ ≤ 4 and
  // g/b_eff ≤ 10 for the last query over 12 keys at D = 32: ≤ kRfTau·10·4·6 ≈ 1e-2 in the worst case,
  // where every rounding adds up; 1e-3 assumes they do not (σ-like, as kTol), while a fault moves Ṽ by O(0.1).
  EXPECT_LE(max_abs_diff(gpu_out, cpu), 1e-3);
  ASSERT_EQ(K.size(), K_cpu.size());
  for (size_t h = 0; h < K.size(); ++h) EXPECT_LE(max_abs_diff(K[h], K_cpu[h]), kTol);
}

}  // namespace
}  // namespace sf::gpu::test
