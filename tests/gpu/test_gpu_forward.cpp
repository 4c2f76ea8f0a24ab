// Whole forward passes with every MHAttention call on the GPU (gpu/forward_gpu.hpp) against the same
// passes on core: every case of tests/data/variants_reference.json (GPT, BERT, encoder-decoder, each
// variant and the mixes, T5's relative bias included; Algorithm 4-R in three of them), the
// plain models of assets/, GPT's prefix-LM mask, the KV-cached generation of Algorithms 14 and 15,
// two ecosystem checkpoints (GPT-2 and BERT layouts), both shader forms; every call must have run on
// the GPU (its record says where). Then the fallback (a call the GPU cannot run runs on the CPU, and
// its record says why), the per-call line, and stepformer-cli forward --attention gpu on a BERT and an
// encoder-decoder checkpoint.
//
// kForwardTol = 1e-4 on P. Each call's Ṽ differs from core's by float rounding only: a few 1e-7 on
// these models (d_attn ≤ 16, ℓ ≤ 64, entries O(1); gpu_test_support.hpp derives σ ≲ 4e-6 for the
// larger sums of its random inputs), printed per call by the CLI. That difference enters the
// residual stream and passes through at most L_enc + L_dec = 4 layers of attention, MLP and norm,
// each of gain about 1 (the norm renormalises, the softmax averages), so P moves by the same few
// 1e-7 to 1e-6 (P ≤ 1, softmax moves p by ≤ ½·max|δlogit|). 1e-4 leaves two orders of magnitude
// while a real fault (a wrong mask, position or head) moves P by O(0.01–0.1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "core/algorithms/kv_cache.hpp"
#include "core/arch/architecture.hpp"
#include "core/io/model_files.hpp"
#include "core/trace/vocabulary.hpp"
#include "gpu/forward_gpu.hpp"
#include "gpu_test_support.hpp"
#include "reference_json.hpp"

namespace sf::gpu::test {
namespace fs = std::filesystem;
namespace {

namespace ref = sf::test;  // reference_json.hpp

constexpr double kForwardTol = 1e-4;
const Form kForms[] = {Form::Teaching, Form::Fused};

// Every call of a pass ran on the GPU; a failure names the call and why it did not.
void expect_all_on_gpu(const GpuForward& f) {
  EXPECT_FALSE(f.calls().empty());
  for (const CallRecord& r : f.calls()) EXPECT_TRUE(r.on_gpu) << call_line(r);
}

// How many MHAttention calls one pass of the model's forward algorithm makes.
size_t calls_per_pass(const ModelConfig& c) {
  return c.arch == "ed" ? static_cast<size_t>(c.L_enc + 2 * c.L_dec) : static_cast<size_t>(c.L);
}

// P ← forward(z, x) with the GPU in each form equals core's, every call on the GPU.
void expect_forward_equal(GpuAttention& gpu, const Model& m, const Tokens& z, const Tokens& x, const std::string& what) {
  const Architecture& arch = architecture(m.config);
  const MatF cpu = arch.forward(m, z, x);
  for (Form form : kForms) {
    SCOPED_TRACE(what + ", " + to_string(form) + " form");
    GpuForward f(gpu, {form, false, false});
    const MatF P = arch.forward(m, z, x, nullptr, f.attention());
    EXPECT_LE(max_abs_diff(P, cpu), kForwardTol);
    EXPECT_EQ(f.calls().size(), calls_per_pass(m.config));
    expect_all_on_gpu(f);
  }
}

// ---- the reference cases (tests/core/test_variants_reference.cpp builds the same models) ------

Tokens seq(const ref::json& s, const char* key) { return s.contains(key) ? s.at(key).get<Tokens>() : Tokens{}; }

Model reference_model(const ref::json& k) {
  Model m(config_from_json(k.at("config").dump()));
  m.theta = ref::exact_floats(ref::json_tensors(k.at("params"), m.table));
  return m;
}

const ref::json& reference_doc() {
  static const ref::json doc = ref::load_test_json("variants_reference.json");
  return doc;
}

const ref::json& reference_case(const std::string& name) {
  for (const ref::json& k : reference_doc().at("cases"))
    if (k.at("name") == name) return k;
  throw std::runtime_error("no case " + name + " in variants_reference.json");
}

// Every call of a relative-bias model (position "relative", issue 25) ran on the GPU and the record of each
// self-attention names the bias (the shaders add B = W_rel[h, bucket(t_z − t_x)] to S/√d_attn), while the
// encoder-decoder's cross-attention, which T5 gives no bias, does not; P is core's within kForwardTol.
void expect_relative_on_gpu(GpuAttention& gpu, const Model& m, const Tokens& z, const Tokens& x, const std::string& what) {
  expect_forward_equal(gpu, m, z, x, what);
  GpuForward f(gpu, {Form::Fused, false, false});
  architecture(m.config).forward(m, z, x, nullptr, f.attention());
  for (const CallRecord& r : f.calls()) {
    EXPECT_TRUE(r.on_gpu) << call_line(r);
    const bool cross = r.algorithm == lines::ed_transformer::cross_attention.alg &&
                       r.line == lines::ed_transformer::cross_attention.line;
    EXPECT_EQ(call_line(r).find("relative bias (T5)") != std::string::npos, !cross) << call_line(r);
  }
}

// Random-feature attention (Algorithm 4-R) in place of Algorithm 4 in a reference case's model: every
// call on the GPU (rf_*.comp) and P within kForwardTol of core's 4-R. 4-R's own error (against exact
// attention) is not compared here: both sides compute the same estimate from the same ω. Its Ṽ differ
// by ≲ 4e-5·(g/b_eff)·|v| (test_gpu_variants_s14.cpp), b_eff ≥ g/10 in these short sequences at D = 32.
void expect_random_features_on_gpu(GpuAttention& gpu, const std::string& case_name) {
  const ref::json& k = reference_case(case_name);
  Model m = reference_model(k);
  m.config.attention = AttentionKind::RandomFeatures;
  m.config.rf_features = 32;
  const ref::json& f = k.at("forward");
  expect_forward_equal(gpu, m, seq(f, "z"), seq(f, "x"), case_name + " with attention \"random_features\"");
  GpuForward g(gpu, {Form::Fused, false, false});
  architecture(m.config).forward(m, seq(f, "z"), seq(f, "x"), nullptr, g.attention());
  for (const CallRecord& r : g.calls()) {
    EXPECT_TRUE(r.on_gpu) << call_line(r);
    EXPECT_NE(call_line(r).find("random features (Algorithm 4-R, D = 32)"), std::string::npos) << call_line(r);
  }
}

TEST(GpuForward, EveryVariantReferenceCaseEqualsTheCpu) {
  SF_REQUIRE_GPU(gpu);
  const ref::json& cases = reference_doc().at("cases");
  ASSERT_GE(cases.size(), 30u);
  for (const ref::json& k : cases) {
    const std::string name = k.at("name").get<std::string>() + " (" + k.at("what").get<std::string>() + ")";
    const ref::json& f = k.at("forward");
    const Model m = reference_model(k);
    if (m.config.position == Position::Relative)
      expect_relative_on_gpu(*gpu, m, seq(f, "z"), seq(f, "x"), name);
    else
      expect_forward_equal(*gpu, m, seq(f, "z"), seq(f, "x"), name);
  }
  // Algorithm 4-R in each architecture: GPT's causal mask with RoPE, BERT's bidirectional one with
  // H_kv < H, the encoder-decoder's cross-attention.
  for (const char* name : {"gpt_rope", "bert_gqa", "ed_pre_ln"}) expect_random_features_on_gpu(*gpu, name);
}

// ---- the plain models, GPT's prefix-LM mask --------------------------------------------------

Model asset_model(const std::string& name) {
  return open_model(std::string(STEPFORMER_ASSETS) + "/" + name + ".safetensors").checkpoint.model;
}

Tokens some_tokens(const ModelConfig& c, int length, uint64_t seed) {
  Rng rng(seed);
  Tokens x{c.bos_token()};
  while (static_cast<int>(x.size()) < length) x.push_back(1 + static_cast<int>(rng.below(c.N_V() - 3)));
  return x;
}

TEST(GpuForward, PlainGptBertAndEncoderDecoderEqualTheCpu) {
  SF_REQUIRE_GPU(gpu);
  const Model gpt = asset_model("default"), bert = asset_model("bert"), ed = asset_model("ed");
  for (const int length : {64, 17, 1})  // ℓ = ℓ_max = 64: more than one 16×16 work group per side
    expect_forward_equal(*gpu, gpt, {}, some_tokens(gpt.config, length, length), "gpt, ℓ = " + std::to_string(length));
  expect_forward_equal(*gpu, bert, {}, some_tokens(bert.config, 9, 2), "bert");
  // ℓ_z ≠ ℓ_x both ways: the cross-attention's keys outnumber its queries, then the reverse.
  expect_forward_equal(*gpu, ed, some_tokens(ed.config, 11, 3), some_tokens(ed.config, 5, 4), "ed, ℓ_z > ℓ_x");
  expect_forward_equal(*gpu, ed, some_tokens(ed.config, 4, 5), some_tokens(ed.config, 9, 6), "ed, ℓ_z < ℓ_x");
}

TEST(GpuForward, GptPrefixMaskEqualsTheCpu) {
  SF_REQUIRE_GPU(gpu);
  const ref::json& k = reference_case("gpt_prefix");
  const Model m = reference_model(k);
  const Tokens x = seq(k.at("forward"), "x");
  ASSERT_EQ(prefix_position(x, m.config), 4);  // "=" at t = 4: Mask[t_z, t_x] = [[t_z ≤ max(t_x, 4)]], explicit
  expect_forward_equal(*gpu, m, {}, x, "gpt_prefix");
  for (const int p : {2, 6}) {  // the separator elsewhere: other explicit masks
    Tokens moved = x;
    moved[3] = 1;
    moved[p - 1] = x[3];
    ASSERT_EQ(prefix_position(moved, m.config), p);
    expect_forward_equal(*gpu, m, {}, moved, "gpt_prefix, p = " + std::to_string(p));
  }
}

// ---- the KV-cached generation (τ = 0: argmax, so equal p gives equal tokens) ------------------

void expect_same_steps(const std::vector<InferenceStep>& gpu, const std::vector<InferenceStep>& cpu) {
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < gpu.size(); ++i) {
    EXPECT_EQ(gpu[i].y, cpu[i].y) << "step " << i + 1;
    EXPECT_LE(max_abs_diff(gpu[i].p, cpu[i].p), kForwardTol) << "step " << i + 1;
  }
}

TEST(GpuForward, DInferenceWithKvCacheGivesTheCpusTokens) {
  SF_REQUIRE_GPU(gpu);
  for (const char* name : {"gpt_modern", "gpt_gpt1_alibi", "gpt_prefix"}) {
    SCOPED_TRACE(name);
    const Model m = reference_model(reference_case(name));
    InferenceOptions opt;
    opt.l_gen = 5;
    opt.tau = 0;
    opt.kv_cache = true;
    const Tokens x = seq(reference_case(name).at("forward"), "x");
    const InferenceResult cpu = dinference(x, m, opt);
    for (Form form : kForms) {
      GpuForward f(*gpu, {form, false, true});
      opt.cached_attn = f.cached_attention();
      expect_same_steps(dinference(x, m, opt).steps, cpu.steps);
      EXPECT_EQ(f.calls().size(), static_cast<size_t>(m.config.L * opt.l_gen));
      expect_all_on_gpu(f);
      for (const CallRecord& r : f.calls()) {
        EXPECT_TRUE(r.cached);
        EXPECT_LE(r.max_diff, kTol) << call_line(r);
      }
    }
  }
}

TEST(GpuForward, EdInferenceWithKvCacheGivesTheCpusTokens) {
  SF_REQUIRE_GPU(gpu);
  for (const char* name : {"ed_rope", "ed_mqa"}) {
    SCOPED_TRACE(name);
    const ref::json& k = reference_case(name);
    const Model m = reference_model(k);
    EdInferenceOptions opt;
    opt.tau = 0;
    opt.kv_cache = true;
    const Tokens z = seq(k.at("forward"), "z");
    const EdInferenceResult cpu = edinference(z, m, opt);
    for (Form form : kForms) {
      GpuForward f(*gpu, {form, false, true});
      opt.attn = f.attention();
      opt.cached_attn = f.cached_attention();
      const EdInferenceResult r = edinference(z, m, opt);
      EXPECT_EQ(r.x_hat, cpu.x_hat);
      expect_same_steps(r.steps, cpu.steps);
      // One full pass builds the cache (z encoded), then 2·L_dec cached calls (self, cross) per step.
      EXPECT_EQ(f.calls().size(), calls_per_pass(m.config) + cpu.steps.size() * 2 * m.config.L_dec);
      expect_all_on_gpu(f);
    }
  }
}

// ---- ecosystem checkpoints -------------------------------------------------------------------

TEST(GpuForward, EcosystemGpt2AndBertEqualTheCpu) {
  SF_REQUIRE_GPU(gpu);
  for (const char* name : {"hf-gpt2", "hf-bert"}) {
    const Model m = open_model(std::string(STEPFORMER_TEST_DATA) + "/ecosystem/" + name).checkpoint.model;
    const ref::json expected = ref::load_test_json(std::string("ecosystem/") + name + "/expected.json");
    expect_forward_equal(*gpu, m, {}, seq(expected.at("sequences").at(0), "x"), name);
  }
}

// ---- the fallback and the per-call line ------------------------------------------------------

// The fused form keeps (d_attn + d_mid)·4 bytes per key in shared memory: with d_attn = d_mid =
// GL_MAX_COMPUTE_SHARED_MEMORY_SIZE/8 + 1 not even one key fits (llvmpipe: 32 kB, d = 4097), so the
// GPU refuses this call.
TEST(GpuForward, ACallTheGpuCannotRunRunsOnTheCpuAndSaysWhy) {
  SF_REQUIRE_GPU(gpu);
  const int d = gpu->device().max_shared_bytes / 8 + 1;
  Rng rng(9);
  const LayerStore W(rng, 1, 4, 4, d, d, 4);
  const MatF X = random_matrix(rng, 4, 3, 1.0);
  const Mask mask = unidirectional_mask(3, 3);
  AttentionOptions av;
  av.patch.call = lines::d_transformer::attention;
  av.patch.l = 2;
  GpuForward f(*gpu, {Form::Fused, true, true});
  const MatF Vt = f.attention()(X, X, W.view(), mask, av);
  EXPECT_TRUE(Vt == mh_attention<float>(X, X, W.view(), mask));  // core's, exactly
  ASSERT_EQ(f.calls().size(), 1u);
  const CallRecord& r = f.calls()[0];
  EXPECT_FALSE(r.on_gpu);
  EXPECT_NE(r.cpu_reason.find("shared memory"), std::string::npos) << r.cpu_reason;
  EXPECT_EQ(call_line(r).rfind("Alg. 10 L6, layer 2: self-attention · causal mask — ran on the CPU: ", 0), 0u)
      << call_line(r);
}

TEST(GpuForward, CallLineSaysNotMeasuredForAGpuTimeTheDriverDidNotTake) {
  CallRecord r;
  r.algorithm = 8;
  r.line = 16;
  r.layer = 1;
  r.what = "cross-attention · bidirectional mask";
  r.call_ms = 0.41;
  r.max_diff = 3.1e-7;
  r.times = {{"Alg. 4 L1", 4, 1, 1, "1–2", std::numeric_limits<double>::quiet_NaN(), 0.1},
             {"Alg. 4 L2", 4, 2, 2, "1–2", 0.02, 0.1}};
  EXPECT_EQ(call_line(r),
            "Alg. 8 L16, layer 1: cross-attention · bidirectional mask — GPU, 2 dispatches, GPU clock not measured, "
            "0.410 ms CPU clock, max |Ṽ_gpu − Ṽ_cpu| 3.1e-07");
  r.times[0].gpu_ms = 0.03;
  EXPECT_NE(call_line(r).find("2 dispatches, 0.050 ms GPU clock"), std::string::npos) << call_line(r);
}

// ---- stepformer-cli forward --attention gpu ---------------------------------------------------

#ifdef STEPFORMER_CLI
std::string cli_output(const std::string& args, int& status) {
  FILE* p = popen((std::string(STEPFORMER_CLI) + " " + args + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int s = pclose(p);
  status = WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  return out;
}

// The number after `label` in the output (NaN when the label is missing).
double number_after(const std::string& out, const std::string& label) {
  const size_t at = out.find(label);
  return at == std::string::npos ? std::nan("") : std::stod(out.substr(at + label.size()));
}

TEST(GpuForwardCli, BertAndEncoderDecoderForwardPrintEveryCallAndAgreeWithTheCpu) {
  SF_REQUIRE_GPU(gpu);
  const std::string assets = std::string(STEPFORMER_ASSETS) + "/";
  struct Run {
    std::string args;
    std::vector<std::string> calls;  // call lines' beginnings that must be printed
  };
  const Run runs[] = {
      {"--model " + assets + "bert.safetensors --prompt 'h[MASK]llo'",
       {"Alg. 9 L5, layer 1: self-attention · bidirectional mask — GPU", "Alg. 9 L5, layer 2: "}},
      {"--model " + assets + "ed.safetensors --context 'dcab' --prompt 'abc' --gpu-form teaching",
       {"Alg. 8 L5, layer 2: self-attention · bidirectional mask — GPU",
        "Alg. 8 L14, layer 1: self-attention · causal mask — GPU",
        "Alg. 8 L16, layer 2: cross-attention · bidirectional mask — GPU"}},
  };
  for (const Run& run : runs) {
    int status = 0;
    const std::string out = cli_output("forward " + run.args + " --attention gpu", status);
    ASSERT_EQ(status, 0) << out;
    for (const std::string& line : run.calls) EXPECT_NE(out.find("  " + line), std::string::npos) << line << "\n" << out;
    EXPECT_NE(out.find("every call ran on the GPU"), std::string::npos) << out;
    EXPECT_LE(number_after(out, "max |Ṽ_gpu − Ṽ_cpu| over the calls = "), kTol) << out;
    EXPECT_LE(number_after(out, "max |P − P_cpu| = "), kForwardTol) << out;
  }
}

// Session 17's guard in the CLI: with softmax_columns.comp altered to halve A (a copy of shaders/ in STEPFORMER_SHADERS),
// every teaching-form call's line says it DISAGREES with core and a warning counts them; with the project's
// shaders no line does.
TEST(GpuForwardCli, ATeachingFormCallThatDisagreesWithCoreIsMarked) {
  SF_REQUIRE_GPU(gpu);
  const fs::path dir = fs::temp_directory_path() / ("stepformer-cli-guard-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(STEPFORMER_SHADERS)) fs::copy_file(e.path(), dir / e.path().filename());
  std::ifstream in(dir / "softmax_columns.comp");
  std::stringstream text;
  text << in.rdbuf();
  in.close();
  std::string src = text.str();
  const std::string line6 = "exp(logit(s, t_z, t_x, h) - m_max) / sum;";
  const size_t at = src.find(line6);
  ASSERT_NE(at, std::string::npos) << "softmax_columns.comp no longer holds " << line6;
  src.insert(at, "0.5 * ");
  std::ofstream(dir / "softmax_columns.comp") << src;
  const std::string args = "forward --model " + std::string(STEPFORMER_ASSETS) +
                           "/default.safetensors --prompt 'hello' --attention gpu --gpu-form teaching";
  int status = 0;
  setenv("STEPFORMER_SHADERS", dir.c_str(), 1);
  const std::string wrong = cli_output(args, status);
  unsetenv("STEPFORMER_SHADERS");
  ASSERT_EQ(status, 0) << wrong;
  EXPECT_NE(wrong.find("Alg. 10 L6, layer 1: self-attention · causal mask — GPU"), std::string::npos) << wrong;
  size_t marked = 0;
  for (size_t p = wrong.find("— DISAGREES with core (tolerance "); p != std::string::npos;
       p = wrong.find("— DISAGREES with core (tolerance ", p + 1))
    ++marked;
  EXPECT_EQ(marked, 2u) << wrong;  // both layers' calls
  EXPECT_NE(wrong.find("WARNING: 2 of 2 calls DISAGREE with core"), std::string::npos) << wrong;
  const std::string right = cli_output(args, status);
  ASSERT_EQ(status, 0) << right;
  EXPECT_EQ(right.find("DISAGREE"), std::string::npos) << right;
  fs::remove_all(dir);
}

// The line "y: …" (the generated ids) of sample's output.
std::string y_line(const std::string& out) {
  const size_t at = out.find("\ny: ");
  return at == std::string::npos ? "" : out.substr(at + 1, out.find('\n', at + 1) - at - 1);
}

TEST(GpuForwardCli, SampleWithAndWithoutKvCacheRunsOnTheGpuAndGivesTheCpusTokens) {
  SF_REQUIRE_GPU(gpu);
  const std::string args = "sample --model " + std::string(STEPFORMER_ASSETS) + "/default.safetensors --prompt 'the' "
                           "--tau 0 --gen 3";
  int status = 0;
  const std::string cpu = cli_output(args, status);
  ASSERT_EQ(status, 0) << cpu;
  ASSERT_NE(y_line(cpu), "") << cpu;
  for (const std::string cache : {"", " --kv-cache"}) {
    const std::string out = cli_output(args + cache + " --attention gpu", status);
    ASSERT_EQ(status, 0) << out;
    EXPECT_EQ(y_line(out), y_line(cpu)) << out;
    const std::string site = cache.empty() ? "  Alg. 10 L6, layer 2: self-attention · causal mask — GPU"
                                           : "  Alg. 10 L6 (KV cache), layer 2: self-attention · causal mask · KV cache";
    EXPECT_NE(out.find(site), std::string::npos) << out;
    EXPECT_NE(out.find("MHAttention calls (6):"), std::string::npos) << out;  // L = 2 calls per step, 3 steps
    EXPECT_NE(out.find("every call ran on the GPU"), std::string::npos) << out;
  }
}
#endif

}  // namespace
}  // namespace sf::gpu::test
