// stepformer-cli end to end: runs the built program (path in STEPFORMER_CLI) in a temporary
// directory and checks what it writes against the same computation done in-process:
// init → checkpoint, forward --out → P (exact), --tokens (1-based), --trace (lines and shapes),
// sample τ = 0 (deterministic, = dinference), help texts, and that every error is ONE line
// "stepformer-cli: error: …" with a non-zero exit status.
#include <gtest/gtest.h>

#ifdef STEPFORMER_CLI

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/io/checkpoint.hpp"
#include "core/io/npy.hpp"
#include "core/tokenizers/tokenizer.hpp"
#include "test_cli_support.hpp"

namespace test_cli {

using namespace sf;
namespace fs = std::filesystem;

namespace {

// The configuration the tests initialise: small, with d_mid ≠ d_attn and H·d_mid ≠ d_e so
// that a swapped dimension shows, and ℓ_max = 12 so that "too long" is easy to reach.
constexpr int kL = 2, kH = 3, kLmax = 12;
const char* kConfig = R"({"L": 2, "H": 3, "d_e": 16, "d_attn": 8, "d_mid": 4, "d_mlp": 32, "l_max": 12})";
constexpr uint64_t kSeed = 5;

using Result = sf::test::CliResult;
using sf::test::slurp;

class CliTest : public ::testing::Test {
 protected:
  static inline fs::path dir;
  static inline fs::path model_path;

  static void SetUpTestSuite() {
    dir = fs::temp_directory_path() / ("stepformer_cli_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "config.json") << kConfig;
    model_path = dir / "model.safetensors";
    const Result r = run({"init", "--config", (dir / "config.json").string(), "--seed", std::to_string(kSeed), "--out",
                          model_path.string()});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  // Runs stepformer-cli with these arguments, stdout and stderr captured separately.
  static Result run(const std::vector<std::string>& args) { return sf::test::run_cli(dir, args); }

  static Model model() { return std::move(load_checkpoint(model_path.string()).model); }

  static std::string line_after(const std::string& out, const std::string& prefix) {
    return sf::test::line_after(out, prefix);
  }

  // The one-line error contract: non-zero status `status`, nothing on stdout, one line on
  // stderr starting "stepformer-cli: error: ".
  static void expect_error(const std::vector<std::string>& args, int status) {
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    sf::test::expect_one_line_error(run(args), status, shown);
  }
};

TEST_F(CliTest, InitWritesTheSeededModelOfTheConfigFile) {
  const Model m = model();
  EXPECT_EQ(m.config.L, kL);
  EXPECT_EQ(m.config.H, kH);
  EXPECT_EQ(m.config.d_e, 16);
  EXPECT_EQ(m.config.d_attn, 8);
  EXPECT_EQ(m.config.d_mid, 4);
  EXPECT_EQ(m.config.d_mlp, 32);
  EXPECT_EQ(m.config.l_max, kLmax);
  const Model expected = Model::initialised(m.config, kSeed);
  EXPECT_EQ(m.theta, expected.theta);

  // It prints one line naming the file and the parameter count.
  const Result r = run({"init", "--config", (dir / "config.json").string(), "--seed", std::to_string(kSeed), "--out",
                        (dir / "again.safetensors").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(r.out_lines().size(), 1u) << r.out;
  EXPECT_NE(r.out.find("again.safetensors"), std::string::npos);
  EXPECT_NE(r.out.find(std::to_string(m.theta.size() / 1000)), std::string::npos) << r.out;  // "N,NNN parameters"
  EXPECT_EQ(slurp(dir / "again.safetensors"), slurp(model_path));                            // deterministic
}

TEST_F(CliTest, ForwardWritesExactlyTheInProcessP) {
  const Result r = run({"forward", "--model", model_path.string(), "--prompt", "hi there", "--out",
                        (dir / "P.npy").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const MatF P = read_npy((dir / "P.npy").string());

  const Model m = model();
  const std::unique_ptr<Tokenizer> tok_owner = make_tokenizer(m.config);
  const Tokenizer& tok = *tok_owner;
  const Tokens x = tok.encode_sequence("hi there", false);  // [bos_token, characters…]
  ASSERT_EQ(x.size(), 9u);
  const MatF expected = dtransformer<float>(x, m.config, m.weights());
  ASSERT_EQ(P.rows(), m.config.N_V());  // (N_V, ℓ)
  ASSERT_EQ(P.cols(), 9);
  EXPECT_TRUE(P == expected) << "max |ΔP| = " << (P - expected).cwiseAbs().maxCoeff();

  // The printed x is the 1-based ids, bos_token first; one prediction row per position.
  EXPECT_NE(r.out.find("x = [" + std::to_string(m.config.bos_token()) + ", "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("<bos>"), std::string::npos);
}

TEST_F(CliTest, TokensAreOneBasedIdsAsThePaperNumbersThem) {
  const Model m = model();
  const std::unique_ptr<Tokenizer> tok_owner = make_tokenizer(m.config);
  const Tokenizer& tok = *tok_owner;
  // "hi" as the prompt encoder sees it, written out by hand: bos_token = N_V−1, then h, i.
  const Tokens x = tok.encode_sequence("hi", false);
  ASSERT_EQ(x, (Tokens{m.config.N_V() - 1, 9, 10}));  // ' '=1, a=2, …, h=9, i=10
  const std::string ids = std::to_string(x[0]) + ",9,10";

  const Result a = run({"forward", "--model", model_path.string(), "--tokens", ids, "--out", (dir / "Pa.npy").string()});
  const Result b = run({"forward", "--model", model_path.string(), "--prompt", "hi", "--out", (dir / "Pb.npy").string()});
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  const MatF Pa = read_npy((dir / "Pa.npy").string()), Pb = read_npy((dir / "Pb.npy").string());
  EXPECT_TRUE(Pa == Pb);
  EXPECT_TRUE(Pa == dtransformer<float>(x, m.config, m.weights()));

  // The last id, N_V = eos_token, is accepted; its label is printed.
  const Result c = run({"forward", "--model", model_path.string(), "--tokens", "1," + std::to_string(m.config.N_V())});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("<eos>"), std::string::npos) << c.out;
}

TEST_F(CliTest, TracePrintsEveryExecutedLineWithShapes) {
  const Result r = run({"forward", "--model", model_path.string(), "--prompt", "hello", "--trace"});
  ASSERT_EQ(r.status, 0) << r.err;
  const int l = 6;  // [bos_token, h, e, l, l, o]
  int alg4_line5 = 0, alg6_calls = 0, alg10_lines = 0;
  bool shapes = false, indented = false, head3_layer2 = false;
  for (const auto& line : r.out_lines()) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line.compare(start, 4, "Alg ") != 0) continue;
    const std::string body = line.substr(start);
    if (body.rfind("Alg 4 ", 0) == 0 && body.find(" line 5 ") != std::string::npos) {
      ++alg4_line5;
      shapes = shapes || body.find("S ∈ ℝ^{" + std::to_string(l) + "×" + std::to_string(l) + "}") != std::string::npos;
      indented = indented || start == 4;  // DTransformer → MHAttention → Attention: depth 2
      head3_layer2 = head3_layer2 || body.find("[l=2 h=3]") != std::string::npos;
    }
    if (body.rfind("Alg 6 ", 0) == 0 && body.find(" call") != std::string::npos) ++alg6_calls;
    if (body.rfind("Alg 10 DTransformer line ", 0) == 0 && body.find("▸") == std::string::npos) ++alg10_lines;
  }
  EXPECT_EQ(alg4_line5, kL * kH);              // one masking line per layer and head
  EXPECT_EQ(alg6_calls, (2 * kL + 1) * l);     // lines 5, 7 per layer and line 10, per column
  EXPECT_EQ(alg10_lines, 3 + 5 * kL + 2);      // lines 1–3, 4–8 per layer, 10 and 11
  EXPECT_TRUE(shapes) << r.out;
  EXPECT_TRUE(indented);
  EXPECT_TRUE(head3_layer2);
  // Calls, pseudocode text, scalars and token lists.
  EXPECT_NE(r.out.find("Alg 10 DTransformer call"), std::string::npos);
  EXPECT_NE(r.out.find("ℓ = " + std::to_string(l)), std::string::npos);
  EXPECT_NE(r.out.find("x = ["), std::string::npos);
  EXPECT_NE(r.out.find("S ← Kᵀ Q"), std::string::npos);
  EXPECT_NE(r.out.find("Q ∈ ℝ^{8×6}"), std::string::npos);  // d_attn × ℓ_x
  EXPECT_NE(r.out.find("Y ∈ ℝ^{12×6}"), std::string::npos);  // H·d_mid × ℓ
  EXPECT_NE(r.out.find("P ∈ ℝ^{64×6}"), std::string::npos);  // N_V × ℓ
  EXPECT_NE(r.out.find("▸ softmax"), std::string::npos);     // SubStep labels
}

TEST_F(CliTest, SampleAtTauZeroIsDeterministicAndEqualsDInference) {
  const std::vector<std::string> args{"sample", "--model", model_path.string(), "--prompt", "hello",
                                      "--tau",  "0",       "--gen",             "20",       "--seed", "3"};
  const Result a = run(args), b = run(args);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);

  const Model m = model();
  const std::unique_ptr<Tokenizer> tok_owner = make_tokenizer(m.config);
  const Tokenizer& tok = *tok_owner;
  InferenceOptions opt;
  opt.tau = 0;
  opt.l_gen = 20;
  opt.seed = 3;
  const InferenceResult expected = dinference(tok.encode_sequence("hello", false), m, opt);
  std::string ids;
  for (size_t i = 0; i < expected.y.size(); ++i) ids.append(i ? "," : "").append(std::to_string(expected.y[i]));
  EXPECT_EQ(line_after(a.out, "y: "), ids) << a.out;
  // 6 + 20 tokens outgrow ℓ_max = 12: the trimming is noted.
  EXPECT_NE(a.out.find("ℓ_max"), std::string::npos) << a.out;
}

TEST_F(CliTest, SampleWithTemperatureEqualsDInferenceWithTheSameSeed) {
  const Result r = run({"sample", "--model", model_path.string(), "--prompt", "ab", "--tau", "0.8", "--gen", "7",
                        "--seed", "11", "--no-trim"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Model m = model();
  const std::unique_ptr<Tokenizer> tok_owner = make_tokenizer(m.config);
  const Tokenizer& tok = *tok_owner;
  InferenceOptions opt;
  opt.tau = 0.8;
  opt.l_gen = 7;
  opt.seed = 11;
  opt.trim_context = false;
  const InferenceResult expected = dinference(tok.encode_sequence("ab", false), m, opt);
  std::string ids;
  for (size_t i = 0; i < expected.y.size(); ++i) ids.append(i ? "," : "").append(std::to_string(expected.y[i]));
  EXPECT_EQ(line_after(r.out, "y: "), ids) << r.out;
  EXPECT_NE(r.out.find("continuation: \"" + tok.decode(expected.y) + "\""), std::string::npos) << r.out;
}

TEST_F(CliTest, HelpExplainsEveryOption) {
  const Result top = run({"--help"});
  ASSERT_EQ(top.status, 0);
  for (const char* c : {"init", "forward", "sample", "help"}) EXPECT_NE(top.out.find(c), std::string::npos) << c;

  const std::vector<std::pair<std::string, std::vector<std::string>>> options{
      {"init", {"--config", "--seed", "--out"}},
      {"forward", {"--model", "--prompt", "--tokens", "--out", "--trace", "bos_token"}},
      {"sample", {"--model", "--prompt", "--tau", "--gen", "--seed", "--no-trim", "--stop-at-eos"}},
  };
  for (const auto& [cmd, opts] : options) {
    const Result a = run({"help", cmd}), b = run({cmd, "--help"});
    ASSERT_EQ(a.status, 0) << cmd;
    ASSERT_EQ(b.status, 0) << cmd;
    EXPECT_EQ(a.out, b.out) << cmd;
    EXPECT_EQ(a.out.rfind("usage: stepformer-cli " + cmd, 0), 0u) << a.out;
    for (const auto& o : opts) EXPECT_NE(a.out.find(o), std::string::npos) << cmd << " " << o;
  }
}

TEST_F(CliTest, EveryErrorIsOneLineWithANonZeroStatus) {
  const std::string model = model_path.string();
  // Usage mistakes: status 2.
  expect_error({"forward", "--model", model, "--prompt", "hi", "--bogus"}, 2);  // unknown option
  expect_error({"forward", "--prompt", "hi"}, 2);                               // missing --model
  expect_error({"forward", "--model", model}, 2);                               // neither --prompt nor --tokens
  expect_error({"forward", "--model", model, "--prompt", "hi", "--tokens", "1"}, 2);
  expect_error({"forward", "--model"}, 2);                                      // option without its value
  expect_error({"forward", "--model", model, "--tokens", "3,x,4"}, 2);          // bad --tokens
  expect_error({"forward", "--model", model, "--tokens", "0,1"}, 2);            // ids are 1-based
  expect_error({"forward", "--model", model, "--tokens", "65"}, 2);             // > N_V
  expect_error({"forward", "--model", model, "--tokens", ""}, 2);
  expect_error({"sample", "--model", model, "--prompt", "hi", "--tau", "abc"}, 2);  // bad number
  expect_error({"sample", "--model", model, "--prompt", "hi", "--tau", "-1"}, 2);
  expect_error({"sample", "--model", model, "--prompt", "hi", "--gen", "2x"}, 2);
  expect_error({"init", "--out", (dir / "x.safetensors").string(), "--seed", "-3"}, 2);
  expect_error({"frobnicate"}, 2);  // unknown command
  expect_error({"forward", "stray"}, 2);

  // Failures while running: status 1.
  expect_error({"forward", "--model", (dir / "missing.safetensors").string(), "--prompt", "hi"}, 1);
  std::ofstream(dir / "garbage.safetensors") << "this is not a checkpoint";
  expect_error({"forward", "--model", (dir / "garbage.safetensors").string(), "--prompt", "hi"}, 1);
  const std::string bytes = slurp(model_path);
  std::ofstream(dir / "truncated.safetensors", std::ios::binary) << bytes.substr(0, bytes.size() - 100);
  expect_error({"forward", "--model", (dir / "truncated.safetensors").string(), "--prompt", "hi"}, 1);
  fs::create_directories(dir / "no-model");  // a folder opens its model.safetensors (docs/ecosystem.md); this has none
  expect_error({"forward", "--model", (dir / "no-model").string(), "--prompt", "hi"}, 1);
  expect_error({"forward", "--model", model, "--prompt", "Hi"}, 1);                   // 'H' is not in the vocab
  expect_error({"forward", "--model", model, "--prompt", "hello world!"}, 1);         // bos + 12 > ℓ_max = 12
  expect_error({"forward", "--model", model, "--tokens", "1,2,3,4,5,6,7,8,9,10,11,12,13"}, 1);
  expect_error({"sample", "--model", model, "--prompt", "hello world!"}, 1);
  EXPECT_EQ(run({"forward", "--model", model, "--prompt", "hello world"}).status, 0);  // bos + 11 = ℓ_max
  expect_error({"sample", "--model", model, "--prompt", "é"}, 1);
  std::ofstream(dir / "bad.json") << R"({"L": 0})";
  expect_error({"init", "--config", (dir / "bad.json").string(), "--out", (dir / "y.safetensors").string()}, 1);
  expect_error({"init", "--config", (dir / "nope.json").string(), "--out", (dir / "y.safetensors").string()}, 1);
  expect_error({"init", "--out", (dir / "no" / "such" / "dir.safetensors").string()}, 1);
}

TEST_F(CliTest, NoArgumentsRunsTheDemo) {
  const Result r = run({});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("Alg 10 DTransformer call"), std::string::npos);
  EXPECT_NE(r.out.find("Alg 4 Attention line 5 [l=1 h=1]"), std::string::npos);  // layer 1 shown in full
  EXPECT_EQ(r.out.find("[l=2 h=1]"), std::string::npos);                          // layer 2's calls abbreviated
  EXPECT_NE(r.out.find("not shown"), std::string::npos);
  EXPECT_NE(r.out.find("DInference"), std::string::npos);
}

}  // namespace

#else

TEST(CliTest, NotBuilt) { GTEST_SKIP() << "stepformer-cli is not part of this build"; }

#endif

}  // namespace test_cli
