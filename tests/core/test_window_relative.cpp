// Issue 25, item 3 (not in the paper; encyclopedia article 004): sliding-window attention
// ("window": w) and T5's relative position bias (position "relative"). Checked here:
//  - the windowed mask is the band the issue's inequalities give (causal, bidirectional, prefix-LM);
//  - the configuration keys parse, validate with clear messages, save and summarise;
//  - T5's bucket function on hand-computed distances, both directions;
//  - B is Toeplitz and is added to S/√d_attn (after the scaling), masked cells stay −∞;
//  - FlashAttention skips the blocks below the band as well as above it, and equals Algorithm 4
//    with the relative bias;
//  - generation with the KV cache equals generation without under a window and a relative bias;
//  - the checkpoint holds W_rel as [H, relative_buckets] per self-attention and round-trips;
//  - the GPU refuses a relative bias with a message (a window is only a mask: it needs no refusal).
// Gradients (central differences, traced = batched) are in test_variants_grad.cpp and
// test_backprop_gradient.cpp; the PyTorch reference in test_variants_reference.cpp; training below.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "core/algorithms/algorithms.hpp"
#include "core/io/checkpoint.hpp"
#include "core/model/params.hpp"
#include "core/pseudocode/errata.hpp"
#include "core/pseudocode/variants.hpp"
#include "core/trace/vocabulary.hpp"

#include "tiny_config.hpp"

namespace test_window_relative {

using namespace sf;

namespace {

ModelConfig tiny_gpt() {
  ModelConfig c = test::tiny_gpt_config(12);
  c.vocab = {"a", "b", "c", "d", "="};
  return c;
}

std::string parse_error(const std::string& json) {
  try {
    config_from_json(json);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

template <class T>
Mat<T> normal(Eigen::Index r, Eigen::Index c, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, 1);
  return Mat<T>::NullaryExpr(r, c, [&] { return static_cast<T>(n(rng)); });
}

// One head of N(0, 1) weights, held so that its views stay valid.
struct Head {
  Mat<double> W_q = normal<double>(4, 4, 1), W_k = normal<double>(4, 4, 2), W_v = normal<double>(3, 4, 3);
  Vec<double> b_q = normal<double>(4, 1, 4), b_k = normal<double>(4, 1, 5), b_v = normal<double>(3, 1, 6);
  AttentionHeadW<const double> view() const {
    return {MapM<const double>(W_q.data(), 4, 4), MapV<const double>(b_q.data(), 4), MapM<const double>(W_k.data(), 4, 4),
            MapV<const double>(b_k.data(), 4), MapM<const double>(W_v.data(), 3, 4), MapV<const double>(b_v.data(), 3)};
  }
};

// A causal relative-bias head with 6 buckets up to distance 6 and a table of distinct entries.
AttentionOptions relative_options(bool bidirectional) {
  AttentionOptions av;
  av.rel_buckets = 6;
  av.rel_max_distance = 6;
  av.rel_bidirectional = bidirectional;
  av.rel_table = {0.5, -1.0, 2.0, 0.25, -0.75, 1.5};
  return av;
}

}  // namespace

// ---- the window is a band of the mask ----------------------------------------------------------

TEST(SlidingWindow, CausalBidirectionalAndPrefixMasksKeepTheBand) {
  const int l = 7, w = 2;
  const Mask causal = windowed(unidirectional_mask(l, l), w);
  const Mask both = windowed(bidirectional_mask(l, l), w);
  const Mask prefix = windowed(prefix_mask(l, 4), w);
  for (int t_x = 1; t_x <= l; ++t_x)
    for (int t_z = 1; t_z <= l; ++t_z) {
      // The issue: t_x − w ≤ t_z ≤ t_x under the causal mask (w + 1 keys), |t_x − t_z| ≤ w otherwise.
      EXPECT_EQ(causal(t_z - 1, t_x - 1), t_x - w <= t_z && t_z <= t_x) << t_z << ", " << t_x;
      EXPECT_EQ(both(t_z - 1, t_x - 1), std::abs(t_x - t_z) <= w) << t_z << ", " << t_x;
      EXPECT_EQ(prefix(t_z - 1, t_x - 1), t_z <= std::max(t_x, 4) && std::abs(t_x - t_z) <= w) << t_z << ", " << t_x;
    }
  EXPECT_EQ(causal.col(l - 1).cast<int>().sum(), w + 1);  // the last query sees w + 1 keys, itself among them
  EXPECT_EQ(windowed(unidirectional_mask(l, l), 0), unidirectional_mask(l, l));  // w = 0: off
}

TEST(SlidingWindow, TheModelUsesTheWindowedMask) {
  ModelConfig c = tiny_gpt();
  c.window = 1;
  const Model m = Model::initialised(c, 3);
  const GptW<const float> W = bind_gpt<const float>(m.table, m.theta.data());
  const Tokens x{1, 2, 3, 4, 1, 2};
  Trace trace;
  Tracer tr(trace);
  dtransformer<float>(x, c, W, &tr);
  int seen = 0;
  for (const Event& e : trace.events)
    if (e.kind == EventKind::Enter && e.alg == 4)
      for (const Value& v : e.values)
        if (v.name == "Mask") {
          ++seen;
          for (int t_x = 1; t_x <= 6; ++t_x)
            for (int t_z = 1; t_z <= 6; ++t_z)
              ASSERT_EQ(v.m(t_z - 1, t_x - 1), (t_x - 1 <= t_z && t_z <= t_x) ? 1.0 : 0.0) << t_z << ", " << t_x;
        }
  EXPECT_EQ(seen, c.L * c.H);  // every head of every layer
}

// ---- configuration -----------------------------------------------------------------------------

TEST(WindowRelativeConfig, ParsesValidatesSavesAndSummarises) {
  const std::string base = R"({"L": 1, "H": 2, "d_e": 8, "d_attn": 4, "d_mid": 4, "d_mlp": 8, "l_max": 8)";
  const ModelConfig c = config_from_json(base + R"(, "window": 4, "position": "relative", "relative_buckets": 8,
                                                    "relative_max_distance": 16})");
  EXPECT_EQ(c.window, 4);
  EXPECT_EQ(c.position, Position::Relative);
  EXPECT_EQ(c.relative_buckets, 8);
  EXPECT_EQ(c.relative_max_distance, 16);
  const ModelConfig again = config_from_json(to_json(c));
  EXPECT_EQ(again.window, 4);
  EXPECT_EQ(again.relative_buckets, 8);
  EXPECT_EQ(again.relative_max_distance, 16);
  EXPECT_EQ(variant_summary(c), "relative bias, window 4");
  EXPECT_EQ(to_json(config_from_json(base + "}")).find("window"), std::string::npos);  // off writes no key
  // Clear errors that say what is wrong and what would do.
  EXPECT_NE(parse_error(base + R"(, "window": -1})").find("\"window\""), std::string::npos);
  EXPECT_NE(parse_error(base + R"(, "position": "relative", "relative_buckets": 3})").find("even number ≥ 4"),
            std::string::npos);
  EXPECT_NE(parse_error(base + R"(, "position": "relative", "relative_buckets": 0})").find("relative_buckets"),
            std::string::npos);
  EXPECT_NE(parse_error(base + R"(, "position": "relative", "relative_buckets": 32, "relative_max_distance": 16})")
                .find("relative_max_distance must be at least relative_buckets"),
            std::string::npos);
  // The encoder-decoder takes it too (T5's own architecture; its forward and gradients: test_ed_relative.cpp).
  EXPECT_EQ(parse_error(R"({"arch": "ed", "position": "relative"})"), "");
  EXPECT_EQ(config_from_json(R"({"arch": "ed", "position": "relative"})").position, Position::Relative);
  ModelConfig bad = tiny_gpt();
  bad.window = -2;
  EXPECT_NE(validate(bad).find("window must be 0 (off) or a width w ≥ 1"), std::string::npos);
}

// ---- T5's buckets ------------------------------------------------------------------------------

// transformers' T5Attention._relative_position_bucket by hand, 32 buckets up to 128. Causal: 16
// exact (d < 16), then 16 + ⌊ln(d/16)/ln(8)·16⌋; bidirectional: 16 a sign, 8 exact, then
// 8 + ⌊ln(d/8)/ln(16)·8⌋, keys after the query (t_z > t_x) from 16.
TEST(RelativeBias, BucketsAreT5s) {
  EXPECT_EQ(relative_bucket(0, false, 32, 128), 0);
  EXPECT_EQ(relative_bucket(-5, false, 32, 128), 5);
  EXPECT_EQ(relative_bucket(-15, false, 32, 128), 15);
  EXPECT_EQ(relative_bucket(-16, false, 32, 128), 16);
  EXPECT_EQ(relative_bucket(-20, false, 32, 128), 17);   // ln(1.25)/ln 8·16 = 1.72
  EXPECT_EQ(relative_bucket(-100, false, 32, 128), 30);  // ln(6.25)/ln 8·16 = 14.1
  EXPECT_EQ(relative_bucket(-500, false, 32, 128), 31);  // capped
  EXPECT_EQ(relative_bucket(3, false, 32, 128), 0);      // a key after the query: bucket 0
  EXPECT_EQ(relative_bucket(-3, true, 32, 128), 3);
  EXPECT_EQ(relative_bucket(3, true, 32, 128), 19);
  EXPECT_EQ(relative_bucket(-20, true, 32, 128), 10);  // ln(2.5)/ln 16·8 = 2.64
  EXPECT_EQ(relative_bucket(20, true, 32, 128), 26);
  EXPECT_EQ(relative_bucket(1000, true, 32, 128), 31);
}

TEST(RelativeBias, BIsToeplitzAndAddedToTheScaledScores) {
  const Head h;
  const Mat<double> X = normal<double>(4, 6, 7);
  const Mask M = unidirectional_mask(6, 6);
  for (const bool bidirectional : {false, true}) {
    SCOPED_TRACE(bidirectional ? "bidirectional" : "causal");
    const AttentionOptions av = relative_options(bidirectional);
    AttentionRecord<double> r;
    attention<double>(X, X, h.view(), M, nullptr, &r, av);
    ASSERT_TRUE(r.relative);
    for (int t_z = 0; t_z < 6; ++t_z)
      for (int t_x = 0; t_x < 6; ++t_x) {
        EXPECT_EQ(r.B(t_z, t_x), av.rel_table[relative_bucket(t_z - t_x, bidirectional, 6, 6)]);
        if (t_z > 0 && t_x > 0) EXPECT_EQ(r.B(t_z, t_x), r.B(t_z - 1, t_x - 1));  // constant along diagonals
      }
    // softmax(S/√d_attn + B): the issue's order (T5 itself adds B to unscaled scores).
    const Mat<double> want = softmax_columns<double>(Mat<double>(r.S_masked / 2.0 + r.B));  // √d_attn = 2
    EXPECT_LT((r.A - want).cwiseAbs().maxCoeff(), 1e-15);
    EXPECT_EQ(r.A(5, 0), 0.0);  // a masked cell: −∞ + B is still −∞, weight exactly 0
  }
}

// ---- FlashAttention ----------------------------------------------------------------------------

// ℓ = 8, B_r = B_c = 2, w = 1: query block i (t_x = 2i−1, 2i) needs keys 2i−2 … 2i, so only key
// blocks j = i − 1 and j = i are computed: 4 + 3 = 7 of the 16; the 9 others, above the diagonal
// and below the band, are skipped.
TEST(SlidingWindow, FlashSkipsTheBlocksBelowTheBandAndEqualsAlgorithm4) {
  const Head h;
  const Mat<double> X = normal<double>(4, 8, 8);
  const Mask M = windowed(unidirectional_mask(8, 8), 1);
  Trace trace;
  Tracer tr(trace);
  const Mat<double> flash = flash_attention<double>(X, X, h.view(), M, 2, 2, &tr);
  int i = 0, j = 0, skipped = 0, blocks = 0;
  for (const Event& e : trace.events) {
    if (e.kind != EventKind::Line || e.alg != algs::flash_attention) continue;
    for (const Value& v : e.values) {
      if (v.name == "i") i = static_cast<int>(v.m(0, 0));
      if (v.name == "j") j = static_cast<int>(v.m(0, 0));
      if (v.name != "skip") continue;
      ++blocks;
      skipped += v.m(0, 0) == 1;
      EXPECT_EQ(v.m(0, 0) == 1, j > i || j < i - 1) << "block (" << i << ", " << j << ")";
    }
  }
  EXPECT_EQ(blocks, 16);
  EXPECT_EQ(skipped, 9);
  // Equal up to rounding: the online softmax sums ≤ 8 terms in another order (double: ≲ 8·2⁻⁵³ relative).
  EXPECT_LT((flash - attention<double>(X, X, h.view(), M)).cwiseAbs().maxCoeff(), 1e-13);
}

TEST(RelativeBias, FlashAttentionEqualsAlgorithm4WithTheBias) {
  const Head h;
  const Mat<double> X = normal<double>(4, 7, 9);
  for (const bool bidirectional : {false, true}) {
    const AttentionOptions av = relative_options(bidirectional);
    const Mask M = bidirectional ? bidirectional_mask(7, 7) : unidirectional_mask(7, 7);
    const Mat<double> exact = attention<double>(X, X, h.view(), M, nullptr, nullptr, av);
    // B_r = 3, B_c = 2 do not divide ℓ = 7: the blocks' positions must offset B. Same bound as above.
    EXPECT_LT((flash_attention<double>(X, X, h.view(), M, 3, 2, nullptr, av) - exact).cwiseAbs().maxCoeff(), 1e-13);
  }
}

// ---- KV cache ----------------------------------------------------------------------------------

// The cached step computes the same products in another order (see test_kv_cache.cpp: float, tiny
// logits, ≲ 1e-6 on p); 1e-5 leaves a factor 10. A stale key or a wrong window moves p by O(p).
TEST(WindowRelative, CachedGenerationEqualsRecomputation) {
  for (const auto& [w, relative] : {std::pair{2, false}, std::pair{0, true}, std::pair{3, true}}) {
    ModelConfig c = tiny_gpt();
    c.window = w;
    if (relative) {
      c.position = Position::Relative;
      c.relative_buckets = 4;
      c.relative_max_distance = 6;
    }
    SCOPED_TRACE(variant_summary(c));
    ASSERT_EQ(validate(c), "");
    Model m = Model::initialised(c, 5);
    for (float& v : m.theta) v *= 20;  // weights of O(0.4): the window and the bias change the tokens drawn
    InferenceOptions opt;
    opt.l_gen = 12;  // past ℓ_max = 12 with the 3-token prompt: the trimmed context rebuilds the cache
    opt.tau = 0.8;
    opt.seed = 2;
    const Tokens prompt{1, 2, 3};
    const InferenceResult plain = dinference(prompt, m, opt);
    opt.kv_cache = true;
    const InferenceResult cached = dinference(prompt, m, opt);
    ASSERT_EQ(cached.y, plain.y);
    for (size_t k = 0; k < plain.steps.size(); ++k)
      EXPECT_LT((cached.steps[k].p - plain.steps[k].p).cwiseAbs().maxCoeff(), 1e-5) << "step " << k + 1;
  }
}

// ---- checkpoint and GPU ------------------------------------------------------------------------

TEST(RelativeBias, CheckpointHoldsWrelPerSelfAttentionAndRoundTrips) {
  ModelConfig c = tiny_gpt();
  c.position = Position::Relative;
  c.relative_buckets = 4;
  c.relative_max_distance = 8;
  c.window = 3;
  const Model m = Model::initialised(c, 6);
  for (int l = 1; l <= c.L; ++l) {
    const ParamEntry& e = m.table.at("layer" + std::to_string(l) + ".attn.W_rel");
    EXPECT_EQ(e.shape(), (std::vector<int64_t>{c.H, c.relative_buckets}));
  }
  EXPECT_EQ(m.table.find("W_p"), nullptr);  // positions enter through B only
  const std::string path = (std::filesystem::temp_directory_path() / "stepformer_relative_roundtrip.safetensors").string();
  save_checkpoint(path, m);
  const Checkpoint back = load_checkpoint(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back.model.config.window, 3);
  EXPECT_EQ(back.model.config.position, Position::Relative);
  EXPECT_EQ(back.model.theta, m.theta);
}

// Issue 25, item 6: the errata entry on the article's ALiBi matrix, and what Stepformer does instead:
// −|t_z − t_x| is the article's j − i (key j = t_z, query i = t_x) on every cell the causal mask keeps.
TEST(WindowRelativeErrata, AlibiEntrySaysTheCausalFormAndStepformerComputesIt) {
  const Erratum* e = find_erratum("article-alibi-causal-b");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->seed, Seed::Article);
  EXPECT_NE(e->printed.find("B_{i,j} = j − i"), std::string::npos);
  EXPECT_NE(e->problem.find("j ≤ i"), std::string::npos);
  const Mat<double> B = alibi_bias<double>(5, 5, 0, 0);
  for (int t_x = 1; t_x <= 5; ++t_x)
    for (int t_z = 1; t_z <= t_x; ++t_z) EXPECT_EQ(B(t_z - 1, t_x - 1), t_z - t_x);
}

// The listings say both variants where they act: Algorithm 4's line 5 (the window in Mask) and line 6
// (+ B), Algorithm 10's MHAttention line (the windowed mask), with a variant label on each.
TEST(WindowRelativePseudocode, VariantLinesShowTheWindowAndTheBias) {
  ModelConfig c = tiny_gpt();
  c.window = 3;
  c.position = Position::Relative;
  auto line = [](const PseudoAlgorithm& a, int n) -> const PseudoLine& {
    for (const PseudoLine& l : a.lines)
      if (l.number == n) return l;
    throw std::runtime_error("no line " + std::to_string(n));
  };
  const PseudoAlgorithm a4 = pseudocode_for(4, c);
  EXPECT_NE(line(a4, 5).text.find("|t_z − t_x| ≤ 3"), std::string::npos) << line(a4, 5).text;
  EXPECT_NE(line(a4, 5).variant.find("sliding-window"), std::string::npos);
  EXPECT_NE(line(a4, 6).text.find("S / √d_attn + B"), std::string::npos) << line(a4, 6).text;
  EXPECT_NE(line(a4, 6).variant.find("relative position bias"), std::string::npos);
  const PseudoAlgorithm a10 = pseudocode_for(10, c);
  EXPECT_NE(line(a10, 6).text.find("Mask[t, t′] = [[t′ − 3 ≤ t ≤ t′]]"), std::string::npos) << line(a10, 6).text;
  c.arch = "bert";
  c.window = 1;
  EXPECT_NE(line(pseudocode_for(9, c), 5).text.find("Mask[t, t′] = [[|t − t′| ≤ 1]]"), std::string::npos);
}

}  // namespace test_window_relative
