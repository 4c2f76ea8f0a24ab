// The MHAttention hooks of the inference algorithms (not in the paper: another implementation of
// Algorithm 5, e.g. the GPU's, gpu/forward_gpu.hpp): InferenceOptions / EdInferenceOptions carry
// `attn` (the full pass) and `cached_attn` (the KV-cached step), fill_masks carries `attn`. A hook
// that calls core's own functions gives bit-identical results, is called once per attention call
// with the calling line and layer in av.patch, and gets the shapes the CachedMHAttentionFn contract
// (algorithms.hpp) promises; a hook that returns something else changes the result (it is used).
#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/fill_in.hpp"
#include "core/algorithms/kv_cache.hpp"
#include "core/model/config.hpp"
#include "core/model/params.hpp"

namespace test_attention_hooks {

using namespace sf;

namespace {

ModelConfig small(const char* arch) {
  ModelConfig c;
  c.arch = arch;
  c.L = 2;
  c.L_enc = 2;
  c.L_dec = 2;
  c.H = 2;
  c.d_e = 8;
  c.d_attn = 4;
  c.d_mid = 4;
  c.d_mlp = 16;
  c.l_max = 10;
  return c;
}

// (calling line, layer) of every call a hook saw.
using Calls = std::vector<std::pair<LineRef, int>>;

// Core's mh_attention behind the hook, counting.
MHAttentionFn<float> counting_attention(Calls& calls) {
  return [&calls](const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
                  const AttentionOptions& av) {
    calls.emplace_back(av.patch.call, av.patch.l);
    return mh_attention<float>(X, Z, W, mask, nullptr, nullptr, av);
  };
}

// Core's kv_cached_mh_attention behind the hook, counting and checking the contract's shapes: mask
// (ℓ_c + n, n) when appending (ℓ_c before the call), (ℓ_c, n) over a cached Z.
CachedMHAttentionFn counting_cached(Calls& calls, int& appends) {
  return [&calls, &appends](const MatF& X, const MHAttentionW<const float>& W, std::vector<MatF>& K,
                            std::vector<MatF>& V, bool append, const Mask& mask, const AttentionOptions& av) {
    calls.emplace_back(av.patch.call, av.patch.l);
    appends += append;
    EXPECT_EQ(mask.cols(), X.cols());
    EXPECT_EQ(mask.rows(), K.front().cols() + (append ? X.cols() : 0));
    EXPECT_EQ(K.size(), W.heads.size());
    return kv_cached_mh_attention(X, W, K, V, append, mask, av);
  };
}

void expect_same_steps(const std::vector<InferenceStep>& a, const std::vector<InferenceStep>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(a[i].p == b[i].p) << "step " << i + 1;
    EXPECT_EQ(a[i].y, b[i].y) << "step " << i + 1;
  }
}

std::set<LineRef> lines_of(const Calls& calls) {
  std::set<LineRef> s;
  for (const auto& [call, l] : calls) s.insert(call);
  return s;
}

TEST(AttentionHooks, DInferenceRunsLine3sAttentionOnTheHook) {
  ModelConfig c = small("gpt");
  c.position = Position::Rope;
  c.H_kv = 1;
  const Model m = Model::initialised(c, 3);
  InferenceOptions opt;
  opt.l_gen = 4;
  opt.tau = 0.7;
  const InferenceResult core = dinference({c.bos_token(), 5, 9}, m, opt);
  Calls calls;
  opt.attn = counting_attention(calls);
  const InferenceResult hooked = dinference({c.bos_token(), 5, 9}, m, opt);
  expect_same_steps(hooked.steps, core.steps);
  ASSERT_EQ(calls.size(), static_cast<size_t>(c.L * opt.l_gen));  // L calls per DTransformer pass
  EXPECT_EQ(lines_of(calls), std::set<LineRef>{lines::d_transformer::attention});
  EXPECT_EQ(calls[0].second, 1);
  EXPECT_EQ(calls[1].second, 2);
}

TEST(AttentionHooks, DInferenceKvCacheRunsEveryCachedCallOnTheHook) {
  for (const MaskKind mask : {MaskKind::Causal, MaskKind::Prefix}) {
    ModelConfig c = small("gpt");
    c.mask = mask;
    c.position = Position::Alibi;
    const Model m = Model::initialised(c, 4);
    InferenceOptions opt;
    opt.l_gen = 5;
    opt.tau = 0;
    opt.kv_cache = true;
    const Tokens x{c.bos_token(), 5, 9};
    const InferenceResult core = dinference(x, m, opt);
    Calls calls;
    int appends = 0;
    opt.cached_attn = counting_cached(calls, appends);
    const InferenceResult hooked = dinference(x, m, opt);
    expect_same_steps(hooked.steps, core.steps);
    EXPECT_EQ(calls.size(), static_cast<size_t>(c.L * opt.l_gen));  // the first step builds the cache, on the hook too
    EXPECT_EQ(appends, c.L * opt.l_gen);  // every cached call of Algorithm 10 is a self-attention
    EXPECT_EQ(lines_of(calls), std::set<LineRef>{lines::d_transformer::attention});
  }
}

TEST(AttentionHooks, AHookThatComputesSomethingElseChangesP) {
  const ModelConfig c = small("gpt");
  const Model m = Model::initialised(c, 5);
  InferenceOptions opt;
  opt.l_gen = 1;
  opt.kv_cache = true;
  const InferenceResult core = dinference({c.bos_token(), 5}, m, opt);
  opt.cached_attn = [](const MatF& X, const MHAttentionW<const float>& W, std::vector<MatF>& K, std::vector<MatF>& V,
                       bool append, const Mask& mask, const AttentionOptions& av) {
    return MatF(kv_cached_mh_attention(X, W, K, V, append, mask, av) * 2.0f);
  };
  EXPECT_FALSE(dinference({c.bos_token(), 5}, m, opt).steps[0].p == core.steps[0].p);
  opt.kv_cache = false;
  opt.attn = [](const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
                const AttentionOptions& av) { return MatF(mh_attention<float>(X, Z, W, mask, nullptr, nullptr, av) * 2.0f); };
  EXPECT_FALSE(dinference({c.bos_token(), 5}, m, opt).steps[0].p == core.steps[0].p);
}

TEST(AttentionHooks, EdInferenceRunsEncoderDecoderAndCrossAttentionOnTheHook) {
  ModelConfig c = small("ed");
  c.position = Position::Rope;
  const Model m = Model::initialised(c, 6);
  const Tokens z{c.bos_token(), 4, 7, c.eos_token()};
  EdInferenceOptions opt;
  opt.tau = 0;
  const EdInferenceResult core = edinference(z, m, opt);
  Calls calls;
  opt.attn = counting_attention(calls);
  const EdInferenceResult hooked = edinference(z, m, opt);
  EXPECT_EQ(hooked.x_hat, core.x_hat);
  expect_same_steps(hooked.steps, core.steps);
  // Each pass of Algorithm 8: the encoder's L_enc self-attentions (line 5), then per decoder layer a
  // self-attention (line 14) and a cross-attention (line 16).
  EXPECT_EQ(calls.size(), core.steps.size() * (c.L_enc + 2 * c.L_dec));
  EXPECT_EQ(lines_of(calls), (std::set<LineRef>{lines::ed_transformer::enc_attention, lines::ed_transformer::self_attention,
                                                lines::ed_transformer::cross_attention}));
}

TEST(AttentionHooks, EdInferenceKvCacheRunsSelfAndCrossOnTheCachedHook) {
  ModelConfig c = small("ed");
  c.H_kv = 1;
  const Model m = Model::initialised(c, 7);
  const Tokens z{c.bos_token(), 4, 7, c.eos_token()};
  EdInferenceOptions opt;
  opt.tau = 0;
  opt.kv_cache = true;
  const EdInferenceResult core = edinference(z, m, opt);
  Calls full, cached;
  int appends = 0;
  opt.attn = counting_attention(full);
  opt.cached_attn = counting_cached(cached, appends);
  const EdInferenceResult hooked = edinference(z, m, opt);
  EXPECT_EQ(hooked.x_hat, core.x_hat);
  expect_same_steps(hooked.steps, core.steps);
  const size_t steps = core.steps.size();
  EXPECT_EQ(full.size(), static_cast<size_t>(c.L_enc + 2 * c.L_dec));  // one full pass: the cache's build, z encoded
  EXPECT_EQ(cached.size(), steps * 2 * c.L_dec);
  EXPECT_EQ(appends, static_cast<int>(steps) * c.L_dec);  // the self-attentions; the others read Z's cache
  EXPECT_EQ(lines_of(cached), (std::set<LineRef>{lines::ed_transformer::self_attention, lines::ed_transformer::cross_attention}));
}

TEST(AttentionHooks, FillInRunsAlgorithm9sAttentionOnTheHook) {
  const ModelConfig c = small("bert");
  const Model m = Model::initialised(c, 8);
  const Tokens x{c.bos_token(), 5, c.mask_token(), 6, c.eos_token()};
  const FillResult core = fill_masks(x, m, 0, 1, 3);
  Calls calls;
  const FillResult hooked = fill_masks(x, m, 0, 1, 3, nullptr, counting_attention(calls));
  EXPECT_EQ(hooked.filled, core.filled);
  ASSERT_EQ(hooked.positions.size(), 1u);
  EXPECT_TRUE(hooked.positions[0].p == core.positions[0].p);
  EXPECT_EQ(calls, (Calls{{lines::e_transformer::attention, 1}, {lines::e_transformer::attention, 2}}));
}

}  // namespace

}  // namespace test_attention_hooks
