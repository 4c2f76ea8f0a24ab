// stepformer-cli sample --top-k / --top-p / --kv-block (not in the paper): the options reach
// Algorithms 14 and 15 (top-k = 1 prints τ = 0's tokens; the paged cache prints the unpaged
// tokens and its block table), and bad values get the one-line error.
#include <gtest/gtest.h>

#ifdef STEPFORMER_CLI

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_cli_support.hpp"

namespace test_cli_top_k {

namespace fs = std::filesystem;
using sf::test::CliResult;

namespace {

std::string asset(const char* f) { return std::string(STEPFORMER_TEST_DATA) + "/../../assets/" + f; }

// Each test's stdout and stderr files, in a folder removed after the suite.
class CliTopK : public ::testing::Test {
 protected:
  static inline fs::path dir;
  static void SetUpTestSuite() {
    dir = fs::temp_directory_path() / ("stepformer_cli_top_k_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  static CliResult run(const std::vector<std::string>& args) { return sf::test::run_cli(dir, args); }
};

std::vector<std::string> gpt(std::vector<std::string> extra) {
  std::vector<std::string> a{"sample", "--model", asset("default.safetensors"), "--prompt", "dcab=", "--gen", "8"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST_F(CliTopK, TopK1PrintsTheArgmaxTokensForEverySeed) {
  const CliResult greedy = run(gpt({"--tau", "0"}));
  ASSERT_EQ(greedy.status, 0) << greedy.err;
  const std::string y = sf::test::line_after(greedy.out, "y: ");
  for (const char* seed : {"1", "2", "3", "4", "5"}) {
    const CliResult r = run(gpt({"--tau", "3", "--top-k", "1", "--seed", seed}));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(sf::test::line_after(r.out, "y: "), y) << "seed " << seed;
    EXPECT_NE(r.out.find("top-k = 1"), std::string::npos) << r.out;
  }
  const std::vector<std::string> ed{"sample", "--model", asset("ed.safetensors"), "--context", "12 march 2024"};
  std::vector<std::string> ed0 = ed, ed1 = ed;
  ed0.insert(ed0.end(), {"--tau", "0"});
  ed1.insert(ed1.end(), {"--tau", "3", "--top-k", "1", "--seed", "9"});
  EXPECT_EQ(sf::test::line_after(run(ed1).out, "ids: "), sf::test::line_after(run(ed0).out, "ids: "));
}

TEST_F(CliTopK, PagedCachePrintsTheSameTokensAndItsBlockTable) {
  const CliResult plain = run(gpt({"--tau", "1", "--kv-cache"}));
  const CliResult paged = run(gpt({"--tau", "1", "--kv-cache", "--kv-block", "4"}));
  ASSERT_EQ(paged.status, 0) << paged.err;
  EXPECT_EQ(sf::test::line_after(paged.out, "y: "), sf::test::line_after(plain.out, "y: "));
  // <bos>dcab= (6 tokens) and 8 drawn: the last step's cache holds 6 + 7 = 13 tokens in 4 blocks of 4.
  EXPECT_EQ(sf::test::line_after(paged.out, "kv cache: "),
            "paged in blocks of B = 4; block table after the last step [1, 2, 3, 4] (13 tokens, the last block holds 1)");
}

TEST_F(CliTopK, BadValuesGetOneLineErrors) {
  sf::test::expect_one_line_error(run(gpt({"--top-p", "0"})), 2, "--top-p 0");
  sf::test::expect_one_line_error(run(gpt({"--top-p", "1.5"})), 2, "--top-p 1.5");
  sf::test::expect_one_line_error(run(gpt({"--top-k", "0"})), 2, "--top-k 0");
  sf::test::expect_one_line_error(run(gpt({"--kv-block", "4"})), 2, "--kv-block without --kv-cache");
  EXPECT_NE(run(gpt({"--top-p", "0"})).err.find("--top-p must be greater than 0"), std::string::npos);
}

}  // namespace

#endif  // STEPFORMER_CLI

}  // namespace test_cli_top_k
