// The GPU tab tells the truth (issue 23 item 4), on Mesa's llvmpipe under Xvfb: with the GPU
// switch on, every MHAttention call of a GPT (RMSNorm + RoPE + SwiGLU + tied W_u + H_kv = 1; and
// post-LN + ALiBi + gelu_tanh), a BERT and an encoder-decoder (and one with RoPE) runs on the GPU's
// compute shaders, is listed at its line and layer with its kind and max |Ṽ_gpu − Ṽ_cpu|, and its
// heads' Algorithm 4 events are in the trace (RoPE's and ALiBi's sub-steps included); P equals the
// CPU's; an unmeasured GPU time reads "not measured".
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "app/attention_calls.hpp"
#include "app/session.hpp"
#include "core/io/checkpoint.hpp"
#include "tests/app/gui_harness.hpp"
#include "tests/app/gui_models.hpp"

namespace test_gui_gpu_calls {

using json = nlohmann::json;
using gui::AppRun;
using gui::run_app;

namespace {

// The bound for P (GPU vs CPU), also used for each call's Ṽ. Both sides compute in float
// (ε = 6e-8) with sums of at most d_e = 64 or ℓ ≤ 16 terms in another order: their differences
// are ~1e-6 here (the tab shows them), 100× under it; a shader that drops RoPE, a mask or a
// head's K, V moves Ṽ by ≳ 1e-2 on these random models.
constexpr double kTol = 1e-4;

sf::ModelConfig small(const std::string& arch) { return gui::small_config(arch, 128); }

// The reference tests' first mix: RMSNorm + RoPE + SwiGLU + tied + H_kv = 1.
sf::ModelConfig gpt_rope_mqa() {
  sf::ModelConfig c = small("gpt");
  c.norm = sf::Norm::RmsNorm;
  c.position = sf::Position::Rope;
  c.activation = sf::Activation::SwiGLU;
  c.tied_unembedding = true;
  c.H_kv = 1;
  return c;
}

std::string checkpoint(const sf::ModelConfig& c, const std::string& name) {
  return gui::temp_checkpoint(c, "gpu-calls-" + name, 5);
}

using Site = std::tuple<int, int, int>;  // (algorithm, line, l)

// The MHAttention calls of the model's Forward run on the CPU (a headless session, no hook):
// where each was made, in trace order, and its heads' S shape (ℓ_z, ℓ_x).
struct CpuCall {
  Site site;
  long l_z = 0, l_x = 0;
};
struct CpuRun {
  std::vector<CpuCall> calls;
  size_t steps = 0;  // the trace's events
};
CpuRun cpu_run(const std::string& model, const std::string& context, const std::string& prompt) {
  sf::Session s;
  std::string error;
  EXPECT_TRUE(s.load_model(model, error)) << error;
  if (!context.empty()) s.set_context(context);
  s.set_prompt(prompt);
  s.wait_for_trace();
  CpuRun run;
  run.steps = s.trace().size();
  for (const sf::HeadCall& h : sf::head_calls(s.trace()))
    if (h.idx.h == 1)
      run.calls.push_back({{h.caller_alg, h.caller_line, h.idx.l}, h.S->m.rows(), h.S->m.cols()});
  return run;
}

// Runs the app on `model` with the GPU switch on and checks the GPU tab's calls against the CPU's
// run; `kind(site)` is the kind each call must be listed with.
template <class Kind>
void check_gpu_calls(const std::string& model, const std::string& context, const std::string& prompt, int H,
                     Kind kind) {
  const std::string inputs = (context.empty() ? "" : "context:" + context + ",") + "prompt:" + prompt;
  const AppRun r = run_app("--model " + model, inputs + ",attention:gpu,open:gpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(r.state["attention_backend"], "gpu") << r.state["notice"] << r.state["gpu_failure"];
  EXPECT_TRUE(r.state["gpu_failure"].is_null()) << r.state["gpu_failure"];
  ASSERT_TRUE(r.state["gpu_max_diff_P"].is_number());
  EXPECT_LE(r.state["gpu_max_diff_P"].get<double>(), kTol);  // P on the GPU = P on the CPU
  const CpuRun cpu = cpu_run(model, context, prompt);
  const std::vector<CpuCall>& expect = cpu.calls;
  EXPECT_EQ(r.state["steps"], cpu.steps);  // the GPU's replay binds the same events as core's trace
  const json& calls = r.state["gpu_calls"];
  ASSERT_EQ(calls.size(), expect.size()) << calls;
  for (size_t i = 0; i < expect.size(); ++i) {
    const json& c = calls[i];
    const Site site{c["alg"].get<int>(), c["line"].get<int>(), c["l"].get<int>()};
    EXPECT_EQ(site, expect[i].site) << c;
    const std::string k = kind(expect[i].site);
    EXPECT_EQ(c["kind"], k) << c;
    if (k.rfind("cross", 0) == 0) EXPECT_NE(expect[i].l_z, expect[i].l_x) << c;  // the context's own length
    ASSERT_TRUE(c["max_diff"].is_number()) << c;
    EXPECT_LE(c["max_diff"].get<double>(), kTol) << c;
    // The trace holds the call's Algorithm 5 with its H heads' Algorithm 4, S of ℓ_z × ℓ_x.
    const json& t = c["trace"];
    ASSERT_TRUE(t.is_object()) << c;
    EXPECT_EQ(t["alg"], 5);
    EXPECT_EQ(t["heads"], H) << c;
    EXPECT_EQ(t["S"], json::array({expect[i].l_z, expect[i].l_x})) << c;
    const bool rope = k.find("RoPE") != std::string::npos, alibi = k.find("ALiBi") != std::string::npos;
    EXPECT_EQ(t["rope_substeps"], rope ? 2 * H : 0) << c;  // W_q X + b_q 1ᵀ and W_k Z + b_k 1ᵀ before RoPE
    EXPECT_EQ(t["alibi_substeps"], alibi ? H : 0) << c;    // line 6's S/√d_attn + m_h·B, with B
    ASSERT_FALSE(c["dispatches"].empty()) << c;
    for (const json& d : c["dispatches"]) {
      EXPECT_GT(d["cpu_ms"].get<double>(), 0.0) << d;
      if (d["gpu_ms"].is_null()) EXPECT_EQ(d["gpu"], "not measured") << d;
    }
  }
}

}  // namespace

TEST(GuiGpuCalls, GptWithRopeAndOneKeyValueHeadRunsEveryCallOnTheGpu) {
  const sf::ModelConfig c = gpt_rope_mqa();
  check_gpu_calls(checkpoint(c, "gpt-rope-mqa"), "", "abcdefghij", c.H, [](const Site&) {
    return std::string("self-attention · causal mask · RoPE · H_kv = 1 of H = 4");
  });
}

TEST(GuiGpuCalls, BertRunsEveryCallOnTheGpu) {
  const sf::ModelConfig c = small("bert");
  check_gpu_calls(checkpoint(c, "bert"), "", "abcdefghij", c.H,
                  [](const Site&) { return std::string("self-attention · bidirectional mask"); });
}

TEST(GuiGpuCalls, TheEncoderDecodersCrossAttentionRunsOnTheGpuWithItsOwnLength) {
  const sf::ModelConfig c = small("ed");
  // ℓ_z = 5 (<bos> abc <eos>), ℓ_x = 9: line 16's S is 5 × 9.
  check_gpu_calls(checkpoint(c, "ed"), "abc", "abcdefgh", c.H, [](const Site& s) {
    switch (std::get<1>(s)) {
      case 5: return std::string("self-attention · bidirectional mask");   // the encoder
      case 14: return std::string("self-attention · causal mask");         // the decoder
      default: return std::string("cross-attention · bidirectional mask");  // line 16, over Z
    }
  });
}

// The reference tests' other mixes: post-LN + ALiBi + gelu_tanh (GPT), an encoder-decoder with
// RoPE (its self-attentions rotate Q and K; the cross-attention has no positions of its own).
TEST(GuiGpuCalls, GptWithAlibiAndPostLnRunsEveryCallOnTheGpu) {
  sf::ModelConfig c = small("gpt");
  c.norm_position = sf::NormPosition::Post;
  c.position = sf::Position::Alibi;
  c.activation = sf::Activation::GELUTanh;
  check_gpu_calls(checkpoint(c, "gpt-alibi"), "", "abcdefghij", c.H,
                  [](const Site&) { return std::string("self-attention · causal mask · ALiBi"); });
}

TEST(GuiGpuCalls, TheEncoderDecoderWithRopeRunsEveryCallOnTheGpu) {
  sf::ModelConfig c = small("ed");
  c.position = sf::Position::Rope;
  check_gpu_calls(checkpoint(c, "ed-rope"), "abc", "abcdefgh", c.H, [](const Site& s) {
    switch (std::get<1>(s)) {
      case 5: return std::string("self-attention · bidirectional mask · RoPE");
      case 14: return std::string("self-attention · causal mask · RoPE");
      default: return std::string("cross-attention · bidirectional mask");
    }
  });
}

TEST(GuiGpuCalls, TheGpuTabListsTheCallsAndSaysNotMeasuredAt1280x720) {
  const AppRun r = gui::run_app_sized(1280, 720, "--model " + checkpoint(small("ed"), "ed"),
                                      "context:abc,attention:gpu,open:gpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(r.state["attention_backend"], "gpu") << r.state["notice"];
  // The tab's totals: a GPU time llvmpipe does not measure reads "not measured", never a zero.
  const json& total = r.state["gpu_total"];
  EXPECT_NE(total["cpu"], "not measured") << total;
  for (const json& t : r.state["gpu_times"]) {
    if (t["gpu_ms"].is_null()) EXPECT_EQ(t["gpu"], "not measured") << t;
    EXPECT_EQ(t["gpu"].get<std::string>().find("0.000"), std::string::npos) << t;
  }
  bool any_unmeasured = false;
  for (const json& t : r.state["gpu_times"]) any_unmeasured |= t["gpu_ms"].is_null();
  if (any_unmeasured) EXPECT_EQ(total["gpu"], "not measured") << total;
  // Nothing in the GPU tab is cut off at this size.
  for (const json& c : r.state["clipped_text"])
    EXPECT_EQ(c["window"].get<std::string>().find("Inspector"), std::string::npos) << c;
}

}  // namespace test_gui_gpu_calls
