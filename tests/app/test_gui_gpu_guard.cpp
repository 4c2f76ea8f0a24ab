// The GPU guard (session 17; app/gpu_attention_backend.hpp), on Mesa's llvmpipe under Xvfb: every teaching-form call
// is checked against core's Algorithm 5 on the same inputs. With the project's shaders every call agrees and the
// trace shows the GPU's values; with a copied shader folder whose softmax_columns.comp or apply_values.comp is
// deliberately wrong, every call disagrees, the trace shows core's A and P, each call's kind says so, and the GPU
// tab warns (device, count, largest |ΔṼ|) without anything cut off. A shader off by less than the tolerance is
// shown as it is: the guard does not hide the GPU's own rounding. A NaN from the GPU counts as a disagreement.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "app/attention_calls.hpp"
#include "app/session.hpp"
#include "tests/app/gui_harness.hpp"
#include "tests/app/gui_models.hpp"

namespace test_gui_gpu_guard {

using json = nlohmann::json;
namespace fs = std::filesystem;
using gui::AppRun;

namespace {

// As test_gui_gpu_calls.cpp: both sides in float, sums of ≤ 64 terms in other orders differ by ~1e-6; a wrong
// shader moves A and Ṽ by ≳ 1e-2.
constexpr double kTol = 1e-4;

// STEPFORMER_SHADERS for one scope (the app the test starts inherits it).
struct ShaderDir {
  explicit ShaderDir(const fs::path& dir) { setenv("STEPFORMER_SHADERS", dir.c_str(), 1); }
  ~ShaderDir() { unsetenv("STEPFORMER_SHADERS"); }
};

// A copy of shaders/ in which `name`.comp has `from` replaced by `to` (the text must be there once).
fs::path altered_shaders(const std::string& tag, const std::string& name, const std::string& from,
                         const std::string& to) {
  const fs::path src = fs::path(STEPFORMER_SOURCE_DIR) / "shaders";
  const fs::path dir = fs::temp_directory_path() / ("stepformer-guard-" + std::to_string(::getpid()) + "-" + tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(src)) fs::copy_file(e.path(), dir / e.path().filename());
  std::ifstream in(dir / (name + ".comp"));
  std::stringstream ss;
  ss << in.rdbuf();
  in.close();
  std::string text = ss.str();
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << name << ".comp no longer holds: " << from;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << name << ".comp holds it twice: " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  std::ofstream(dir / (name + ".comp")) << text;
  return dir;
}

// Line 6 of softmax_columns.comp and apply_values.comp, as the project writes them.
const std::string kSoftmaxLine = "A[column + t_z] = is_masked(s) ? 0.0 : exp(logit(s, t_z, t_x, h) - m_max) / sum;";
const std::string kApplyLine = "Y[t_x * p.y_rows + h * p.d_mid + i] = acc;";

// A GPT with causal attention: column 1 of every head's A is (1, 0, …): a scaled A shows there whole.
std::string gpt_model() { return gui::temp_checkpoint(gui::small_config("gpt", 128), "guard-gpt", 5); }

// Core's A of head 1 at each MHAttention call of the model's Forward run (a headless session, no hook).
std::vector<sf::MatF> cpu_head1_A(const std::string& model, const std::string& prompt) {
  sf::Session s;
  std::string error;
  EXPECT_TRUE(s.load_model(model, error)) << error;
  s.set_prompt(prompt);
  s.wait_for_trace();
  std::vector<sf::MatF> A;
  for (const sf::HeadCall& h : sf::head_calls(s.trace()))
    if (h.idx.h == 1 && h.A) A.push_back(h.A->m);
  return A;
}

// max |A_json − A| over the entries (A_json: rows, as --dump-state writes them).
double max_diff(const json& rows, const sf::MatF& A) {
  EXPECT_EQ(rows.size(), static_cast<size_t>(A.rows()));
  double m = 0;
  for (size_t i = 0; i < rows.size() && i < static_cast<size_t>(A.rows()); ++i) {
    EXPECT_EQ(rows[i].size(), static_cast<size_t>(A.cols()));
    for (size_t j = 0; j < rows[i].size() && j < static_cast<size_t>(A.cols()); ++j)
      m = std::max(m, std::abs(rows[i][j].get<double>() - static_cast<double>(A(i, j))));
  }
  return m;
}

const char* kPrompt = "abcdefghij";

// The app with the GPU switch on and the GPU tab open; checks what every run must show.
AppRun run_gpu(const std::string& model) {
  AppRun r = gui::run_app("--model " + model, std::string("prompt:") + kPrompt + ",attention:gpu,open:gpu");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["attention_backend"], "gpu") << r.state["notice"] << r.state["gpu_failure"];
  EXPECT_TRUE(r.state["gpu_failure"].is_null()) << r.state["gpu_failure"];
  const json& g = r.state["gpu_guard"];
  EXPECT_EQ(g["checked"].get<size_t>(), r.state["gpu_calls"].size()) << g;  // one check per call, one pass
  EXPECT_GT(g["check_ms"].get<double>(), 0.0) << g;
  for (const json& c : r.state["clipped_text"])  // the GPU tab's words show whole
    EXPECT_EQ(c["window"].get<std::string>().find("Inspector"), std::string::npos) << c;
  return r;
}

// A shader made wrong: every call disagrees, the trace holds core's A, P is core's, the tab warns.
void check_caught(const fs::path& shaders) {
  const std::string model = gpt_model();
  const std::vector<sf::MatF> cpu_A = cpu_head1_A(model, kPrompt);
  AppRun r;
  {
    const ShaderDir dir(shaders);
    r = run_gpu(model);
  }
  const json& g = r.state["gpu_guard"];
  const json& calls = r.state["gpu_calls"];
  ASSERT_EQ(calls.size(), cpu_A.size());
  EXPECT_EQ(g["disagreed"].get<size_t>(), calls.size()) << g;
  EXPECT_GT(g["largest_diff"].get<double>(), g["largest_tolerance"].get<double>()) << g;
  EXPECT_GT(g["largest_diff"].get<double>(), 1e-2) << g;  // a wrong shader is O(0.1), not rounding
  for (size_t i = 0; i < calls.size(); ++i) {
    const json& c = calls[i];
    const std::string kind = c["kind"];
    EXPECT_NE(kind.find("the GPU's teaching form disagreed with core by max |ΔṼ| = "), std::string::npos) << kind;
    EXPECT_NE(kind.find(": showing core's values"), std::string::npos) << kind;
    EXPECT_GT(c["max_diff"].get<double>(), 1e-2) << c;  // the GPU's own distance, not the shown values'
    EXPECT_FALSE(c["dispatches"].empty()) << c;        // the GPU did run
    EXPECT_LE(max_diff(c["trace"]["A"], cpu_A[i]), kTol) << "the trace shows core's A at call " << i + 1;
  }
  ASSERT_TRUE(r.state["gpu_max_diff_P"].is_number());
  EXPECT_LE(r.state["gpu_max_diff_P"].get<double>(), kTol);  // P from core's Ṽ
  const std::string text = g["text"];
  const std::string device = g["device"];
  EXPECT_FALSE(device.empty());
  EXPECT_NE(text.find("Warning: on " + device), std::string::npos) << text;
  EXPECT_NE(text.find("disagreed with core on " + std::to_string(calls.size()) + " of " +
                      std::to_string(calls.size()) + " checked calls"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("largest max |ΔṼ| = "), std::string::npos) << text;
  EXPECT_NE(text.find("Please report it"), std::string::npos) << text;
  EXPECT_NE(text.find("docs/gpu.md"), std::string::npos) << text;
}

}  // namespace

TEST(GuiGpuGuard, WithTheProjectsShadersEveryCallAgreesAndTheTraceShowsTheGpus) {
  const std::string model = gpt_model();
  const std::vector<sf::MatF> cpu_A = cpu_head1_A(model, kPrompt);
  const AppRun r = run_gpu(model);
  const json& g = r.state["gpu_guard"];
  const json& calls = r.state["gpu_calls"];
  ASSERT_EQ(calls.size(), cpu_A.size());
  EXPECT_EQ(g["disagreed"], 0) << g;
  EXPECT_LE(g["largest_diff"].get<double>(), g["largest_tolerance"].get<double>()) << g;
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i]["kind"], "self-attention · causal mask") << calls[i];
    EXPECT_LE(calls[i]["max_diff"].get<double>(), kTol) << calls[i];
    EXPECT_LE(max_diff(calls[i]["trace"]["A"], cpu_A[i]), kTol);
  }
  EXPECT_EQ(g["text"].get<std::string>().rfind("Checked against core (not in the paper): 2 teaching-form calls", 0),
            0u)
      << g["text"];
}

// A scaled by 1 + 5e-5: Ṽ^h moves by ≤ 5e-5·|Ṽ^h|, under the tolerance 64·n·u·scale = 2.4e-4·scale (n = d_e = 64),
// so the guard agrees, and the trace holds the GPU's A: column 1's A[1, 1] reads 1.00005, not core's 1.
TEST(GuiGpuGuard, AGpuOffByLessThanTheToleranceIsShownAsItIs) {
  const std::string model = gpt_model();
  const std::vector<sf::MatF> cpu_A = cpu_head1_A(model, kPrompt);
  AppRun r;
  {
    const ShaderDir dir(altered_shaders("slightly", "softmax_columns", kSoftmaxLine,
                                        "A[column + t_z] = is_masked(s) ? 0.0 : exp(logit(s, t_z, t_x, h) - m_max) / "
                                        "sum * 1.00005;"));
    r = run_gpu(model);
  }
  const json& calls = r.state["gpu_calls"];
  ASSERT_EQ(calls.size(), cpu_A.size());
  EXPECT_EQ(r.state["gpu_guard"]["disagreed"], 0) << r.state["gpu_guard"];
  for (size_t i = 0; i < calls.size(); ++i) {
    const double d = max_diff(calls[i]["trace"]["A"], cpu_A[i]);
    EXPECT_GT(d, 4e-5) << "the trace shows the GPU's A at call " << i + 1;
    EXPECT_LT(d, 6e-5) << "call " << i + 1;
  }
}

TEST(GuiGpuGuard, AHalvedSoftmaxIsCaughtAndCoresValuesAreShown) {
  check_caught(altered_shaders("softmax", "softmax_columns", kSoftmaxLine,
                               "A[column + t_z] = is_masked(s) ? 0.0 : 0.5 * exp(logit(s, t_z, t_x, h) - m_max) / sum;"));
}

TEST(GuiGpuGuard, AWrongApplyValuesIsCaughtAndCoresValuesAreShown) {
  check_caught(altered_shaders("apply", "apply_values", kApplyLine, "Y[t_x * p.y_rows + h * p.d_mid + i] = -acc;"));
}

// A NaN slips past every comparison (NaN > tol is false): the guard counts a Ṽ that is not finite as disagreeing.
TEST(GuiGpuGuard, ANanFromTheGpuIsCaughtToo) {
  const std::string model = gpt_model();
  const std::vector<sf::MatF> cpu_A = cpu_head1_A(model, kPrompt);
  AppRun r;
  {
    const ShaderDir dir(altered_shaders("nan", "apply_values", kApplyLine,
                                        "Y[t_x * p.y_rows + h * p.d_mid + i] = acc * uintBitsToFloat(0x7fc00000u);"));
    r = run_gpu(model);
  }
  const json& calls = r.state["gpu_calls"];
  ASSERT_EQ(calls.size(), cpu_A.size());
  EXPECT_EQ(r.state["gpu_guard"]["disagreed"].get<size_t>(), calls.size()) << r.state["gpu_guard"];
  // JSON has no ∞: the largest difference is said in words, not written as null.
  EXPECT_EQ(r.state["gpu_guard"]["largest_diff"], "∞ (a NaN or ∞ in the GPU's Ṽ)") << r.state["gpu_guard"];
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_NE(calls[i]["kind"].get<std::string>().find("max |ΔṼ| = ∞ (a NaN or ∞ in the GPU's Ṽ)"), std::string::npos)
        << calls[i]["kind"];
    EXPECT_LE(max_diff(calls[i]["trace"]["A"], cpu_A[i]), kTol);
  }
  ASSERT_TRUE(r.state["gpu_max_diff_P"].is_number()) << r.state["gpu_max_diff_P"];
  EXPECT_LE(r.state["gpu_max_diff_P"].get<double>(), kTol);
}

}  // namespace test_gui_gpu_guard
