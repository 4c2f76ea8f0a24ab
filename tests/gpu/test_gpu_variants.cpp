// The compute shaders' variants against core's Algorithms 4 and 5 with the same AttentionOptions,
// in both forms: RoPE, ALiBi, H_kv < H (shared key/value heads), the prefix-LM and padding masks,
// head sizes that are not multiples of 4, ℓ above the work-group sizes, and the KV-cached step
// (self-attention appending to the cache, cross-attention over a cached Z).
//
// Tolerance: kTol = 1e-4 (gpu_test_support.hpp derives it for scores of d_attn ≤ 64 products and
// softmax sums over ℓ_z ≤ 512 keys: σ ≲ 4e-6 a matrix). The variants add little to it:
// - RoPE: each rotated entry is a·cos − b·sin of O(1) entries with cos, sin the same floats on both
//   sides (the CPU's double angles, rounded once): two more roundings, ≲ 2u·|q| ≈ 1e-7.
// - ALiBi: the logit S/√d_attn + m_h·B has |m_h·B| ≤ 2^{−2}·80 = 20 here, so its rounding is
//   ≤ u·20 ≈ 1.2e-6 absolute, a relative error of that size in each softmax weight exp(logit − max)
//   (the GPU's exp adds its (3 + 2|x|) ULP as before: ≤ 43 ULP for |x| ≤ 20, 5e-6 of a weight).
// - The KV-cached step computes what the full sequence computes, in the same float steps.
// B and m_h must equal core's exactly (integers; the same double slope rounded to float), masked
// scores must be exactly −∞ and their weights exactly 0.
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>

#include "core/model/error.hpp"
#include "gpu/forward_gpu.hpp"
#include "gpu_test_support.hpp"

namespace sf::gpu::test {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

enum class MaskType { Bidirectional, Causal, Prefix, Padded };

struct Variant {
  const char* name;
  int d_x, d_z, d_attn, d_mid, l_x, l_z;
  bool self;  // Z = X (then d_z = d_x, ℓ_z = ℓ_x)
  MaskType mask;
  int H, H_kv;  // H_kv = 0: one key/value head per query head
  double rope_base;
  bool alibi;
  int x_pos0, z_pos0;
};

void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

// ℓ = 80 is above the fused form's 64-query blocks and the 16×16 tiles; d_attn = 6, d_mid = 5 and
// d_attn = 5 (RoPE's unpaired last coordinate) are not multiples of the shaders' vec4s.
const Variant kVariants[] = {
    {"bidirectional", 16, 16, 8, 8, 20, 20, true, MaskType::Bidirectional, 4, 0, 0, false, 0, 0},
    {"cross_lz_gt_lx", 12, 20, 8, 8, 20, 45, false, MaskType::Bidirectional, 2, 0, 0, false, 0, 0},
    {"cross_lz_lt_lx", 20, 12, 8, 12, 40, 11, false, MaskType::Bidirectional, 2, 0, 0, false, 0, 0},
    {"causal", 16, 16, 8, 8, 30, 30, true, MaskType::Causal, 2, 0, 0, false, 0, 0},
    {"prefix", 16, 16, 8, 8, 25, 25, true, MaskType::Prefix, 2, 0, 0, false, 0, 0},
    {"padded", 16, 16, 8, 8, 25, 25, true, MaskType::Padded, 2, 0, 0, false, 0, 0},
    {"head_size_6_5", 16, 16, 6, 5, 30, 30, true, MaskType::Causal, 3, 0, 0, false, 0, 0},
    {"long_80", 16, 16, 8, 8, 80, 80, true, MaskType::Causal, 2, 0, 0, false, 0, 0},
    {"rope", 16, 16, 6, 8, 30, 30, true, MaskType::Causal, 2, 0, 10000, false, 3, 3},
    {"rope_odd_d_attn", 16, 16, 5, 8, 20, 20, true, MaskType::Bidirectional, 2, 0, 100, false, 0, 0},
    {"rope_cross_positions", 12, 20, 8, 8, 20, 33, false, MaskType::Bidirectional, 2, 0, 10000, false, 5, 1},
    {"alibi", 16, 16, 8, 8, 30, 30, true, MaskType::Causal, 4, 0, 0, true, 2, 2},
    {"alibi_cross_lz_gt_lx", 12, 20, 8, 8, 20, 45, false, MaskType::Bidirectional, 4, 0, 0, true, 7, 0},
    {"hkv_1_of_4_rope", 16, 16, 8, 8, 30, 30, true, MaskType::Causal, 4, 1, 10000, false, 4, 4},
    {"hkv_2_of_4_alibi_padded", 16, 16, 6, 5, 30, 30, true, MaskType::Padded, 4, 2, 0, true, 1, 1},
    {"hkv_2_of_4_rope_long_80", 16, 16, 8, 8, 80, 80, true, MaskType::Causal, 4, 2, 500, false, 0, 0},
};

Mask make_mask(MaskType t, int l_z, int l_x) {
  switch (t) {
    case MaskType::Bidirectional:
      return bidirectional_mask(l_z, l_x);
    case MaskType::Causal:
      return unidirectional_mask(l_z, l_x);
    case MaskType::Prefix:
      return prefix_mask(l_x, l_x / 3);
    case MaskType::Padded:
      break;
  }
  Mask m = bidirectional_mask(l_z, l_x);  // a padded batch: the last 5 tokens' keys hidden from every query
  m.bottomRows(5).setZero();
  return m;
}

AttentionOptions options(const Variant& v) {
  AttentionOptions av;
  av.rope_base = v.rope_base;
  av.alibi = v.alibi;
  av.H_kv = v.H_kv;
  av.x_pos0 = v.x_pos0;
  av.z_pos0 = v.z_pos0;
  return av;
}

// W with the query heads of one key/value head g = ⌊h·H_kv/H⌋ (0-based) viewing g's first query
// head's W_k, b_k, W_v, b_v, as core's parameter table lays them out.
MHAttentionW<const float> shared_kv_view(const LayerStore& store, int H_kv) {
  MHAttentionW<const float> W = store.view();
  const int H = static_cast<int>(W.heads.size());
  if (H_kv <= 0 || H_kv >= H) return W;
  for (int h = 0; h < H; ++h) {
    const AttentionHeadW<const float> first = store.head((h * H_kv / H * H + H_kv - 1) / H_kv);
    new (&W.heads[h].W_k) MapM<const float>(first.W_k);
    new (&W.heads[h].b_k) MapV<const float>(first.b_k);
    new (&W.heads[h].W_v) MapM<const float>(first.W_v);
    new (&W.heads[h].b_v) MapV<const float>(first.b_v);
  }
  return W;
}

struct Inputs {
  MatF X, Z;
  LayerStore store;
  MHAttentionW<const float> W;
  Inputs(const Variant& v, uint64_t seed) : Inputs(v, Rng(seed)) {}

 private:
  Inputs(const Variant& v, Rng rng)
      : X(random_matrix(rng, v.d_x, v.l_x, 1.0)),
        Z(v.self ? X : random_matrix(rng, v.d_z, v.l_z, 1.0)),
        store(rng, v.H, v.d_x, v.d_z, v.d_attn, v.d_mid, v.d_x),
        W(shared_kv_view(store, v.H_kv)) {}
};

// Every field of the teaching form's records against core's; the worst |Δ|.
double compare_records(const std::vector<AttentionRecord<float>>& gpu, const std::vector<AttentionRecord<float>>& cpu,
                       const Mask& mask) {
  EXPECT_EQ(gpu.size(), cpu.size());
  double worst = 0;
  for (size_t h = 0; h < std::min(gpu.size(), cpu.size()); ++h) {
    const AttentionRecord<float>& g = gpu[h];
    const AttentionRecord<float>& c = cpu[h];
    const std::string head = "head " + std::to_string(h + 1) + ": ";
    const auto field = [&](const MatF& a, const MatF& b, const char* name) {
      if (a.size() == 0 && b.size() == 0) return;  // a variant's field both leave empty
      const double e = max_abs_diff(a, b);
      EXPECT_LE(e, kTol) << head << name;
      worst = std::max(worst, e);
    };
    field(g.Q, c.Q, "Q");
    field(g.K, c.K, "K");
    field(g.V, c.V, "V");
    field(g.S, c.S, "S");
    field(g.A, c.A, "softmax(S/√d_attn)");
    field(g.Vt, c.Vt, "Ṽ");
    field(g.Q_pre, c.Q_pre, "Q before RoPE");
    field(g.K_pre, c.K_pre, "K before RoPE");
    EXPECT_TRUE(g.B.rows() == c.B.rows() && g.B.cols() == c.B.cols() && g.B == c.B) << head << "ALiBi's B";
    EXPECT_EQ(g.m, c.m) << head << "ALiBi's m_h";
    EXPECT_TRUE(g.S_masked.rows() == mask.rows() && g.S_masked.cols() == mask.cols()) << head << "masked S's shape";
    if (g.S_masked.rows() != mask.rows() || g.S_masked.cols() != mask.cols()) continue;
    EXPECT_TRUE(((g.S_masked.array() == -kInf) == (mask.array() == 0)).all()) << head << "−∞ exactly where ¬Mask";
    EXPECT_TRUE(((g.A.array() == 0) || (mask.array() != 0)).all()) << head << "weight exactly 0 where ¬Mask";
    const MatF unmasked = (mask.array() != 0).select(g.S_masked, 0.0f);
    field(unmasked, (mask.array() != 0).select(c.S_masked, 0.0f).eval(), "masked S");
  }
  return worst;
}

// Each dispatch names its algorithm, lines and heads: query heads "1–H"; key/value heads
// "1–H_kv (key/value)" for lines 2–3 under H_kv < H; "" for Algorithm 5's line 4.
void expect_dispatch_metadata(const std::vector<DispatchTime>& times, const Variant& v, Form form) {
  const int rope = v.rope_base > 0 ? 2 : 0;
  ASSERT_EQ(times.size(), static_cast<size_t>((form == Form::Teaching ? 7 : 4) + rope + 1)) << to_string(form);
  const std::string hq = "1–" + std::to_string(v.H);
  const bool shared = v.H_kv > 0 && v.H_kv < v.H;
  const std::string hkv = shared ? (v.H_kv == 1 ? "1" : "1–" + std::to_string(v.H_kv)) + " (key/value)" : hq;
  for (const DispatchTime& t : times) {
    SCOPED_TRACE(t.what);
    if (t.algorithm == 5) {
      EXPECT_EQ(t.line_first, 4);
      EXPECT_EQ(t.line_last, 4);
      EXPECT_EQ(t.heads, "");
      continue;
    }
    EXPECT_EQ(t.algorithm, 4);
    EXPECT_EQ(t.what.rfind("Alg. 4 L" + std::to_string(t.line_first), 0), 0u);
    EXPECT_EQ(t.line_last, t.what.find("fused") != std::string::npos ? 6 : t.line_first);
    EXPECT_EQ(t.heads, t.line_first == 2 || t.line_first == 3 ? hkv : hq);
    if (t.what.find("RoPE") != std::string::npos) {
      EXPECT_LE(t.line_first, 2);
    }
    if (t.what.find("softmax") != std::string::npos) {
      EXPECT_EQ(t.what.find("ALiBi") != std::string::npos, v.alibi);
    }
  }
  EXPECT_EQ(times.back().algorithm, 5);
}

class VariantCase : public ::testing::TestWithParam<Variant> {};

TEST_P(VariantCase, BothFormsMatchCore) {
  SF_REQUIRE_GPU(gpu);
  const Variant& v = GetParam();
  const Inputs in(v, 23);
  const MatF& Z = v.self ? in.X : in.Z;
  const Mask mask = make_mask(v.mask, v.l_z, v.l_x);
  const AttentionOptions av = options(v);
  std::vector<AttentionRecord<float>> cpu_recs;
  const MatF cpu = mh_attention<float>(in.X, Z, in.W, mask, nullptr, &cpu_recs, av);

  std::vector<DispatchTime> times;
  std::vector<AttentionRecord<float>> recs;
  const MatF teaching = gpu->mh_attention(in.X, Z, in.W, mask, Form::Teaching, &times, &recs, av);
  const double e_teaching = max_abs_diff(teaching, cpu);
  EXPECT_LE(e_teaching, kTol) << "teaching form's Ṽ";
  const double e_recs = compare_records(recs, cpu_recs, mask);
  expect_dispatch_metadata(times, v, Form::Teaching);

  const MatF fused = gpu->mh_attention(in.X, Z, in.W, mask, Form::Fused, &times, nullptr, av);
  const double e_fused = max_abs_diff(fused, cpu);
  EXPECT_LE(e_fused, kTol) << "fused form's Ṽ";
  expect_dispatch_metadata(times, v, Form::Fused);
  std::printf("[variant %s] max |Δ|: Ṽ teaching %.2e (records %.2e), fused %.2e\n", v.name, e_teaching, e_recs,
              e_fused);
}

INSTANTIATE_TEST_SUITE_P(Variants, VariantCase, ::testing::ValuesIn(kVariants),
                         [](const ::testing::TestParamInfo<Variant>& i) { return std::string(i.param.name); });

// Algorithm 4 alone (one head, ALiBi's slope av.m as core's attention takes it), RoPE and ALiBi
// together on a cross-attention at ℓ_x = 80 with a padded mask: the teaching form's record, and the
// fused form's Ṽ and log-normaliser L, whose implied softmax exp(S/√d_attn + m·B − L) must be
// core's A.
TEST(Variants, OneHeadRopeAndAlibiBothFormsWithL) {
  SF_REQUIRE_GPU(gpu);
  const Variant v{"one_head", 12, 16, 6, 5, 80, 37, false, MaskType::Padded, 1, 0, 10000, true, 9, 2};
  const Inputs in(v, 37);
  const Mask mask = make_mask(v.mask, v.l_z, v.l_x);
  AttentionOptions av = options(v);
  av.m = std::pow(2.0, -8.0 / 3);  // a slope of H = 3's first head
  AttentionRecord<float> cpu;
  attention<float>(in.X, in.Z, in.W.heads[0], mask, nullptr, &cpu, av);

  const GpuAttentionResult t = gpu->teaching(in.X, in.Z, in.W.heads[0], mask, av);
  const double e_record = compare_records({t.record}, {cpu}, mask);

  const FusedResult r = gpu->fused(in.X, in.Z, in.W.heads[0], mask, false, av);
  const MatF logits = cpu.S / std::sqrt(static_cast<float>(v.d_attn)) + cpu.m * cpu.B;
  const MatF A = (mask.array() != 0).select((logits.rowwise() - r.L.row(0)).array().exp().matrix(), 0.0f);
  const double e_Vt = max_abs_diff(r.Vt, cpu.Vt), e_A = max_abs_diff(A, cpu.A);
  EXPECT_LE(e_Vt, kTol) << "fused Ṽ";
  EXPECT_LE(e_A, kTol) << "exp(S/√d_attn + m·B − L)";
  std::printf("[one head RoPE + ALiBi] max |Δ|: teaching record %.2e; fused Ṽ %.2e, softmax from L %.2e\n", e_record,
              e_Vt, e_A);
}

// The checks above see a wrong variant: core without it differs from core with it by far more
// than kTol on these inputs, so a GPU that skipped it would fail.
TEST(Variants, EachVariantChangesTheResultFarBeyondTheTolerance) {
  const Variant& v = kVariants[14];  // hkv_2_of_4_alibi_padded
  const Inputs in(v, 23);
  const Mask mask = make_mask(v.mask, v.l_z, v.l_x);
  const MatF with = mh_attention<float>(in.X, in.X, in.W, mask, nullptr, nullptr, options(v));
  AttentionOptions no_alibi = options(v);
  no_alibi.alibi = false;
  EXPECT_GT(max_abs_diff(mh_attention<float>(in.X, in.X, in.W, mask, nullptr, nullptr, no_alibi), with), 100 * kTol);
  const Variant& r = kVariants[8];  // rope
  const Inputs rin(r, 23);
  const Mask causal = make_mask(r.mask, r.l_z, r.l_x);
  AttentionOptions shifted = options(r);
  shifted.z_pos0 += 1;  // K rotated one position off
  EXPECT_GT(max_abs_diff(mh_attention<float>(rin.X, rin.X, rin.W, causal, nullptr, nullptr, shifted),
                         mh_attention<float>(rin.X, rin.X, rin.W, causal, nullptr, nullptr, options(r))),
            100 * kTol);
}

TEST(Variants, KeyValueHeadsThatAreNotSharedAreRefused) {
  SF_REQUIRE_GPU(gpu);
  const Variant& v = kVariants[14];
  const Inputs in(v, 23);
  const MHAttentionW<const float> unshared = in.store.view();  // every head its own W_k, W_v
  try {
    gpu->mh_attention(in.X, in.X, unshared, bidirectional_mask(v.l_x, v.l_x), Form::Fused, nullptr, nullptr,
                      options(v));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("H_kv = 2 of H = 4"), std::string::npos) << e.what();
  }
}

// The KV-cached step: n new columns against ℓ_c cached ones equal the last n columns of
// Algorithm 5 over the whole sequence (core), and the cache grows by the new K, V (core's record).
struct CachedCase {
  const char* name;
  int l_c, n;
  MaskType mask;
  int H, H_kv;
  double rope_base;
  bool alibi;
};

const CachedCase kCached[] = {
    {"causal_one_new_column", 20, 1, MaskType::Causal, 2, 0, 0, false},
    {"prefix_three_new_columns", 12, 3, MaskType::Prefix, 2, 0, 0, false},
    {"rope_hkv_1_of_4", 30, 2, MaskType::Causal, 4, 1, 10000, false},
    {"alibi_hkv_2_of_4_long", 75, 5, MaskType::Causal, 4, 2, 0, true},
};

void PrintTo(const CachedCase& c, std::ostream* os) { *os << c.name; }

class CachedStep : public ::testing::TestWithParam<CachedCase> {};

TEST_P(CachedStep, AppendEqualsTheFullSequence) {
  SF_REQUIRE_GPU(gpu);
  const CachedCase& c = GetParam();
  const int l = c.l_c + c.n, d = 16;
  const Variant v{c.name, d, d, 6, 5, l, l, true, c.mask, c.H, c.H_kv, c.rope_base, c.alibi, 0, 0};
  const Inputs in(v, 29);
  const Mask mask = make_mask(c.mask, l, l);
  const AttentionOptions av = options(v);
  std::vector<AttentionRecord<float>> full_recs;
  const MatF full = mh_attention<float>(in.X, in.X, in.W, mask, nullptr, &full_recs, av);  // (d, ℓ)

  const MatF X_new = in.X.rightCols(c.n);
  const Mask new_cols = mask.rightCols(c.n);  // (ℓ, n)
  for (Form f : {Form::Teaching, Form::Fused}) {
    std::vector<MatF> K, V;  // the cache after ℓ_c columns: core's K (after RoPE) and V of each head
    for (const AttentionRecord<float>& r : full_recs) {
      K.push_back(r.K.leftCols(c.l_c));
      V.push_back(r.V.leftCols(c.l_c));
    }
    std::vector<DispatchTime> times;
    const MatF Vt = gpu->mh_attention_cached(X_new, in.W, K, V, true, new_cols, f, av, &times);
    const double e = max_abs_diff(Vt, full.rightCols(c.n));
    EXPECT_LE(e, kTol) << to_string(f);
    double e_cache = 0;
    for (int h = 0; h < c.H; ++h) {
      e_cache = std::max({e_cache, max_abs_diff(K[h], full_recs[h].K), max_abs_diff(V[h], full_recs[h].V)});
      EXPECT_TRUE(K[h].leftCols(c.l_c) == full_recs[h].K.leftCols(c.l_c)) << "the cached columns stay as they were";
    }
    EXPECT_LE(e_cache, kTol) << to_string(f) << ": the appended K, V";
    EXPECT_EQ(times.size(), static_cast<size_t>((f == Form::Teaching ? 8 : 5) + (c.rope_base > 0 ? 2 : 0)));
    std::printf("[cached %s, %s] max |Δ|: Ṽ %.2e, cache %.2e\n", c.name, to_string(f), e, e_cache);
  }
}

INSTANTIATE_TEST_SUITE_P(Cached, CachedStep, ::testing::ValuesIn(kCached),
                         [](const ::testing::TestParamInfo<CachedCase>& i) { return std::string(i.param.name); });

TEST(CachedStep, CrossAttentionOverACachedZ) {
  SF_REQUIRE_GPU(gpu);
  const Variant v{"cached_cross", 12, 20, 8, 6, 3, 41, false, MaskType::Bidirectional, 4, 2, 0, false, 0, 0};
  const Inputs in(v, 31);
  const Mask ones = bidirectional_mask(v.l_z, v.l_x);
  std::vector<AttentionRecord<float>> recs;
  const MatF cpu = mh_attention<float>(in.X, in.Z, in.W, ones, nullptr, &recs, options(v));
  for (Form f : {Form::Teaching, Form::Fused}) {
    std::vector<MatF> K, V;  // Z's keys and values, kept by the encoder-decoder's cache
    for (const AttentionRecord<float>& r : recs) {
      K.push_back(r.K);
      V.push_back(r.V);
    }
    std::vector<DispatchTime> times;
    const MatF Vt = gpu->mh_attention_cached(in.X, in.W, K, V, false, ones, f, options(v), &times);
    const double e = max_abs_diff(Vt, cpu);
    EXPECT_LE(e, kTol) << to_string(f);
    for (int h = 0; h < v.H; ++h) EXPECT_TRUE(K[h] == recs[h].K && V[h] == recs[h].V) << "the cache is not changed";
    EXPECT_EQ(times.size(), static_cast<size_t>(f == Form::Teaching ? 6 : 3)) << "L1, L4–L6, W_o: no lines 2–3";
    std::printf("[cached cross, %s] max |Δ| Ṽ %.2e\n", to_string(f), e);
  }
}

// Algorithm 10 with every attention call on the GPU, on models whose parameter table shares W_k,
// W_v among query heads (core's layout, which the runtime requires): RoPE + H_kv = 1 + the
// prefix-LM mask, and ALiBi + H_kv = 2. P must equal the CPU's pass.
TEST(Variants, DTransformerWithVariantsEqualsCpu) {
  SF_REQUIRE_GPU(gpu);
  ModelConfig rope;
  rope.position = Position::Rope;
  rope.H_kv = 1;
  rope.mask = MaskKind::Prefix;
  ModelConfig alibi;
  alibi.position = Position::Alibi;
  alibi.H_kv = 2;
  for (const ModelConfig& c : {rope, alibi}) {
    const Model m = Model::initialised(c, 5);
    Rng rng(41);
    Tokens x{m.config.bos_token()};
    while (x.size() < 40) x.push_back(1 + static_cast<int>(rng.below(m.config.N_V() - 3)));
    const MatF cpu = dtransformer<float>(x, m.config, m.weights());
    for (Form f : {Form::Teaching, Form::Fused}) {
      GpuForward fw(*gpu, {f, true, false});  // gpu/forward_gpu.hpp: timed, no per-call CPU check
      const double e = max_abs_diff(dtransformer<float>(x, m.config, m.weights(), nullptr, fw.attention()), cpu);
      std::vector<DispatchTime> times;
      for (const CallRecord& r : fw.calls()) times.insert(times.end(), r.times.begin(), r.times.end());
      EXPECT_LE(e, kTol) << to_string(f) << (c.position == Position::Rope ? ", RoPE" : ", ALiBi");
      const int per_layer = (f == Form::Teaching ? 8 : 5) + (c.position == Position::Rope ? 2 : 0);  // + RoPE's 2
      EXPECT_EQ(times.size(), static_cast<size_t>(c.L * per_layer)) << "every layer's attention on the GPU";
      std::printf("[DTransformer %s, H_kv = %d, %s] max |Δ| P %.2e\n",
                  c.position == Position::Rope ? "RoPE, prefix mask" : "ALiBi", c.H_kv, to_string(f), e);
    }
  }
}

}  // namespace
}  // namespace sf::gpu::test
