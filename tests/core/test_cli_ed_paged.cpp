// stepformer-cli sample --kv-cache --kv-block B on the encoder-decoder (Algorithm 15's decoder cache
// in blocks, PagedAttention; not in the paper): the same x̂ as the unpaged cache, and the block table.
#include <gtest/gtest.h>

#ifdef STEPFORMER_CLI

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_cli_support.hpp"

namespace test_cli_ed_paged {

namespace fs = std::filesystem;
using sf::test::CliResult;

namespace {

class CliEdPaged : public ::testing::Test {
 protected:
  static inline fs::path dir;
  static void SetUpTestSuite() {
    dir = fs::temp_directory_path() / ("stepformer_cli_ed_paged_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  static CliResult run(std::vector<std::string> extra) {
    std::vector<std::string> a{"sample", "--model", std::string(STEPFORMER_TEST_DATA) + "/../../assets/ed.safetensors",
                               "--context", "12 march 2024", "--tau", "0"};
    a.insert(a.end(), extra.begin(), extra.end());
    return sf::test::run_cli(dir, a);
  }
};

// The bundled model translates the date to <bos>2024-03-12<eos>: 11 tokens drawn, so the last step's
// cache holds x̂ without its last token, 11 columns, in blocks 1–4 of B = 3 (the last holds 2).
TEST_F(CliEdPaged, PagedCachePrintsTheSameTranslationAndItsBlockTable) {
  const CliResult plain = run({"--kv-cache"});
  const CliResult paged = run({"--kv-cache", "--kv-block", "3"});
  ASSERT_EQ(paged.status, 0) << paged.err;
  EXPECT_EQ(sf::test::line_after(paged.out, "ids: "), sf::test::line_after(plain.out, "ids: "));
  EXPECT_EQ(sf::test::line_after(paged.out, "kv cache: "),
            "paged in blocks of B = 3; block table after the last step [1, 2, 3, 4] (11 tokens, the last block holds 2)");
  EXPECT_EQ(plain.out.find("kv cache: "), std::string::npos);
  sf::test::expect_one_line_error(run({"--kv-block", "3"}), 2, "--kv-block without --kv-cache");
}

}  // namespace

#endif  // STEPFORMER_CLI

}  // namespace test_cli_ed_paged
