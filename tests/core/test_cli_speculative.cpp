// stepformer-cli sample --draft MODEL --speculate K (Algorithm 14-S, not in the paper), end to end:
// the tokens and counts it prints equal speculative_decoding run in-process, τ = 0 gives Algorithm
// 14's greedy tokens, --json carries the counts, and a draft with another vocabulary is ONE error line.
#include <gtest/gtest.h>

#ifdef STEPFORMER_CLI

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/speculative.hpp"
#include "core/io/checkpoint.hpp"
#include "core/tokenizers/tokenizer.hpp"
#include "test_cli_support.hpp"

namespace test_cli_speculative {

using namespace sf;
namespace fs = std::filesystem;

namespace {

using Result = sf::test::CliResult;

class CliSpeculativeTest : public ::testing::Test {
 protected:
  static inline fs::path dir;

  // A target (L = 2) and a draft (L = 1) with the default vocabulary; a model with another one.
  static void SetUpTestSuite() {
    dir = fs::temp_directory_path() / ("stepformer_cli_spec_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "target.json") << R"({"L": 2, "H": 2, "d_e": 16, "d_attn": 8, "d_mid": 8, "d_mlp": 32, "l_max": 24})";
    std::ofstream(dir / "draft.json") << R"({"L": 1, "H": 1, "d_e": 8, "d_attn": 8, "d_mid": 8, "d_mlp": 16, "l_max": 24})";
    std::ofstream(dir / "other.json")
        << R"({"L": 1, "H": 1, "d_e": 8, "d_attn": 8, "d_mid": 8, "d_mlp": 16, "l_max": 24, "vocab": "abc"})";
    for (const char* m : {"target", "draft", "other"}) {
      const Result r = run({"init", "--config", (dir / (std::string(m) + ".json")).string(), "--seed", "3", "--out",
                            path(m)});
      ASSERT_EQ(r.status, 0) << r.err;
    }
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  static std::string path(const std::string& m) { return (dir / (m + ".safetensors")).string(); }
  static Result run(const std::vector<std::string>& args) { return sf::test::run_cli(dir, args); }
  static Model load(const std::string& m) { return std::move(load_checkpoint(path(m)).model); }
};

TEST_F(CliSpeculativeTest, PrintsTheTokensAndCountsOfAlgorithm14S) {
  const Result r = run({"sample", "--model", path("target"), "--draft", path("draft"), "--speculate", "3", "--prompt",
                        "dcab=", "--tau", "0", "--gen", "10"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Model target = load("target"), draft = load("draft");
  const std::unique_ptr<Tokenizer> tok = make_tokenizer(target.config);
  const Tokens x = tok->encode_sequence("dcab=", false);
  SpeculativeOptions opt;
  opt.K = 3;
  opt.tau = 0;
  opt.l_gen = 10;
  const SpeculativeResult expected = speculative_decoding(x, target, draft, opt);
  std::string ids;
  for (size_t i = 0; i < expected.y.size(); ++i) ids.append(i ? "," : "").append(std::to_string(expected.y[i]));
  EXPECT_EQ(sf::test::line_after(r.out, "y: "), ids) << r.out;
  // τ = 0: Algorithm 14's greedy tokens.
  InferenceOptions plain;
  plain.tau = 0;
  plain.l_gen = 10;
  EXPECT_EQ(expected.y, dinference(x, target, plain).y);
  const std::string counts = "rounds: " + std::to_string(expected.rounds.size()) + "; proposals accepted: " +
                             std::to_string(expected.accepted()) + " of " + std::to_string(expected.proposed());
  EXPECT_NE(r.out.find(counts), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("target passes: " + std::to_string(expected.target_passes) + " (plain Algorithm 14: 10"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Algorithm 14-S, SpeculativeDecoding (not in the paper)"), std::string::npos) << r.out;
}

TEST_F(CliSpeculativeTest, JsonCarriesTheCounts) {
  const Result r = run({"sample", "--model", path("target"), "--draft", path("draft"), "--speculate", "2", "--prompt",
                        "ab", "--tau", "0.9", "--gen", "6", "--seed", "4", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const Model target = load("target"), draft = load("draft");
  const std::unique_ptr<Tokenizer> tok = make_tokenizer(target.config);
  SpeculativeOptions opt;
  opt.K = 2;
  opt.tau = 0.9;
  opt.l_gen = 6;
  opt.seed = 4;
  const SpeculativeResult expected = speculative_decoding(tok->encode_sequence("ab", false), target, draft, opt);
  EXPECT_EQ(j["rounds"], expected.rounds.size());
  EXPECT_EQ(j["accepted"], expected.accepted());
  EXPECT_EQ(j["proposed"], expected.proposed());
  EXPECT_EQ(j["target_passes"], expected.target_passes);
  EXPECT_EQ(j["plain_passes"], 6);
  EXPECT_EQ(j["draft_passes"], expected.draft_passes);
  EXPECT_EQ(j["tokens"].size(), 3u + 6u);  // [bos, a, b] then y
}

TEST_F(CliSpeculativeTest, ADraftWithAnotherVocabularyIsOneErrorLine) {
  const Result r = run({"sample", "--model", path("target"), "--draft", path("other"), "--prompt", "ab"});
  const std::string line = sf::test::expect_one_line_error(r, 1, "--draft other");
  EXPECT_NE(line.find("the draft model's vocabulary is not the target's (N_V differs: the target's is 64, the draft's 6)"),
            std::string::npos)
      << line;
}

}  // namespace

#endif  // STEPFORMER_CLI

}  // namespace test_cli_speculative
