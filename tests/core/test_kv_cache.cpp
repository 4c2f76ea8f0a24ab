// The KV cache of Algorithm 14 (not in the paper): for every variant, cached generation gives the
// same tokens and the same p, q per step as the paper's recomputation, with and without context
// trimming and with τ > 0; the cache is rebuilt exactly when it must be.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/kv_cache.hpp"
#include "core/model/config.hpp"
#include "core/model/params.hpp"

#include "tiny_config.hpp"

namespace test_kv_cache {

using namespace sf;

namespace {

ModelConfig small() {
  return test::tiny_gpt_config(10);
}

struct Variant {
  std::string name;
  std::function<void(ModelConfig&)> apply;
};

const std::vector<Variant> kVariants{
    {"paper", [](ModelConfig&) {}},
    {"post", [](ModelConfig& c) { c.norm_position = NormPosition::Post; }},
    {"rms_norm", [](ModelConfig& c) { c.norm = Norm::RmsNorm; }},
    {"sinusoidal", [](ModelConfig& c) { c.position = Position::Sinusoidal; }},
    {"rope", [](ModelConfig& c) { c.position = Position::Rope; }},
    {"alibi", [](ModelConfig& c) { c.position = Position::Alibi; }},
    {"none", [](ModelConfig& c) { c.position = Position::None; }},
    {"gelu_tanh", [](ModelConfig& c) { c.activation = Activation::GELUTanh; }},
    {"relu", [](ModelConfig& c) { c.activation = Activation::ReLU; }},
    {"swiglu", [](ModelConfig& c) { c.activation = Activation::SwiGLU; }},
    {"tied", [](ModelConfig& c) { c.tied_unembedding = true; }},
    {"H_kv_1", [](ModelConfig& c) { c.H_kv = 1; }},
    {"prefix", [](ModelConfig& c) { c.mask = MaskKind::Prefix; }},
    {"modern", [](ModelConfig& c) {
       c.norm = Norm::RmsNorm; c.position = Position::Rope; c.activation = Activation::SwiGLU;
       c.tied_unembedding = true; c.H_kv = 1;
     }},
    {"post_alibi_prefix", [](ModelConfig& c) {
       c.norm_position = NormPosition::Post; c.position = Position::Alibi; c.mask = MaskKind::Prefix;
       c.activation = Activation::GELUTanh;
     }},
};

// How far the cached and the recomputed p (and q) may differ. Both compute the same products; they sum
// them in another order (a matrix-vector product for the new column against a matrix product over
// every column, each cut differently at each SIMD width). The models here are small(): every sum has
// at most d_mlp = 16 terms and runs through L = 2 layers; weights are N(0, 0.02²), so logits are
// O(0.1). A float sum of n terms is within γ_n ≈ n·u (u = 2⁻²⁴) of exact, relative to Σ|terms|;
// layer norm keeps a relative error relative (it divides by the spread of its input). So a logit's
// error is ≲ (2L + 1)·γ_16·Σ|terms| ≈ 5·16u·0.1 ≈ 5e-7 a side, and p = softmax moves by at most
// 2·p·max|δlogit| ≤ 1e-6 (p ≤ 1): kTolOneColumn, one column against the full forward pass. In a
// generation q ∝ p^(1/τ) adds a factor 1/τ = 1.25, and a sum that cancels has Σ|terms| above |sum|:
// kTolCachedP = 1e-5 keeps a factor 8 for that. A real fault (a stale key, a wrong position) moves
// p by O(p), near 1/N_V ≈ 0.05 here.
constexpr double kTolCachedP = 1e-5;
constexpr double kTolOneColumn = 1e-6;

int id_of(const ModelConfig& c, const std::string& s) {
  for (size_t i = 0; i < c.vocab.size(); ++i)
    if (c.vocab[i] == s) return static_cast<int>(i) + 1;
  return 0;
}

TEST(KvCache, CachedGenerationEqualsRecomputationForEveryVariant) {
  for (const Variant& v : kVariants)
    for (const double tau : {0.0, 0.8}) {
      ModelConfig c = small();
      v.apply(c);
      ASSERT_EQ(validate(c), "") << v.name;
      const Model m = Model::initialised(c, 4);
      // "ab=cd" then 8 tokens: the context passes ℓ_max = 10 (trimmed) after 5 steps.
      const Tokens prompt{id_of(c, "a"), id_of(c, "b"), id_of(c, "="), id_of(c, "c"), id_of(c, "d")};
      InferenceOptions opt;
      opt.l_gen = 8;
      opt.tau = tau;
      opt.seed = 3;
      const InferenceResult plain = dinference(prompt, m, opt);
      opt.kv_cache = true;
      const InferenceResult cached = dinference(prompt, m, opt);
      ASSERT_EQ(cached.y, plain.y) << v.name << " τ = " << tau;
      ASSERT_EQ(cached.steps.size(), plain.steps.size());
      for (size_t i = 0; i < plain.steps.size(); ++i) {
        EXPECT_LT((cached.steps[i].p - plain.steps[i].p).cwiseAbs().maxCoeff(), kTolCachedP) << v.name << " step " << i + 1;
        EXPECT_LT((cached.steps[i].q - plain.steps[i].q).cwiseAbs().maxCoeff(), kTolCachedP) << v.name << " step " << i + 1;
        // Rebuilt on the first step and whenever the context is trimmed (positions shift).
        const bool must_rebuild = i == 0 || cached.steps[i].context_start > 1;
        EXPECT_EQ(cached.steps[i].cache_rebuilt, must_rebuild) << v.name << " step " << i + 1;
      }
    }
}

TEST(KvCache, ANewPrefixSeparatorRebuildsTheCache) {
  ModelConfig c = small();
  c.mask = MaskKind::Prefix;
  const Model m = Model::initialised(c, 9);
  const GptW<const float> W = m.weights();
  GptKvCache cache;
  Tokens x{id_of(c, "a"), id_of(c, "b")};
  bool rebuilt = false;
  dtransformer_cached(x, c, W, cache, &rebuilt);
  EXPECT_TRUE(rebuilt);
  x.push_back(id_of(c, "c"));
  VecF p = dtransformer_cached(x, c, W, cache, &rebuilt);
  EXPECT_FALSE(rebuilt);  // no separator yet: causal, extended by one column
  EXPECT_LT((p - dtransformer<float>(x, c, W).col(2)).cwiseAbs().maxCoeff(), kTolOneColumn);
  x.push_back(id_of(c, "="));  // p becomes 4: every earlier column now sees keys 1–4
  p = dtransformer_cached(x, c, W, cache, &rebuilt);
  EXPECT_TRUE(rebuilt);
  EXPECT_EQ(cache.p, 4);
  EXPECT_LT((p - dtransformer<float>(x, c, W).col(3)).cwiseAbs().maxCoeff(), kTolOneColumn);
  x.push_back(id_of(c, "d"));
  p = dtransformer_cached(x, c, W, cache, &rebuilt);
  EXPECT_FALSE(rebuilt);
  EXPECT_LT((p - dtransformer<float>(x, c, W).col(4)).cwiseAbs().maxCoeff(), kTolOneColumn);
}

// Algorithm 15 with the cache: z encoded once, each step only x̂'s new column through the decoder
// (self-attention over cached K, V; cross-attention over Z's cached K, V). The same x̂, p and q as
// the paper's recomputation for every variant that applies to the encoder-decoder (τ = 0 and τ > 0),
// until the ℓ_max cap; built on the first step only.
TEST(KvCache, EncoderDecoderCachedTranslationEqualsRecomputationForEveryVariant) {
  for (const Variant& v : kVariants) {
    if (v.name.find("prefix") != std::string::npos) continue;  // a GPT variant
    for (const double tau : {0.0, 0.8}) {
      ModelConfig c = small();
      c.arch = "ed";
      c.L_enc = 1;
      c.L_dec = 2;
      v.apply(c);
      ASSERT_EQ(validate(c), "") << v.name;
      const Model m = Model::initialised(c, 5);
      const Tokens z{c.bos_token(), id_of(c, "a"), id_of(c, "b"), id_of(c, "c"), c.eos_token()};
      EdInferenceOptions opt;
      opt.tau = tau;
      opt.seed = 3;
      const EdInferenceResult plain = edinference(z, m, opt);
      opt.kv_cache = true;
      const EdInferenceResult cached = edinference(z, m, opt);
      ASSERT_EQ(cached.x_hat, plain.x_hat) << v.name << " τ = " << tau;
      ASSERT_EQ(cached.steps.size(), plain.steps.size());
      ASSERT_GE(plain.steps.size(), 2u) << v.name;
      for (size_t i = 0; i < plain.steps.size(); ++i) {
        EXPECT_LT((cached.steps[i].p - plain.steps[i].p).cwiseAbs().maxCoeff(), kTolCachedP) << v.name << " step " << i + 1;
        EXPECT_LT((cached.steps[i].q - plain.steps[i].q).cwiseAbs().maxCoeff(), kTolCachedP) << v.name << " step " << i + 1;
        EXPECT_EQ(cached.steps[i].cache_rebuilt, i == 0) << v.name << " step " << i + 1;
      }
    }
  }
}

}  // namespace

}  // namespace test_kv_cache
