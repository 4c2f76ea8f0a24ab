// stepformer-cli classify: the vision transformer on the digits file. Its accuracy and predictions
// are checked against core's own computation (digits_accuracy, vit_predict) on the same images, and
// its refusals are one clear line.
#include <gtest/gtest.h>

#ifdef STEPFORMER_CLI

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/arch/vit.hpp"
#include "core/io/checkpoint.hpp"
#include "core/training/digits.hpp"
#include "test_cli_support.hpp"

namespace test_cli_classify {

namespace fs = std::filesystem;
using sf::test::CliResult;

namespace {

std::string asset(const char* f) { return std::string(STEPFORMER_TEST_DATA) + "/../../assets/" + f; }

class CliClassify : public ::testing::Test {
 protected:
  static inline fs::path dir;
  static void SetUpTestSuite() {
    dir = fs::temp_directory_path() / ("stepformer_cli_classify_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  static CliResult run(const std::vector<std::string>& args) { return sf::test::run_cli(dir, args); }
};

}  // namespace

TEST_F(CliClassify, TheTestSetsAccuracyAndEachPredictionAreCores) {
  const CliResult r = run({"classify", "--model", asset("vit-digits.safetensors"), "--first", "1438", "--count", "360", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const sf::Model m = sf::load_checkpoint(asset("vit-digits.safetensors")).model;
  const std::vector<std::string> lines = sf::read_digit_lines();
  const std::vector<std::string> test = sf::digits_test_lines(lines);
  EXPECT_DOUBLE_EQ(j.at("accuracy").get<double>(), sf::digits_accuracy(m, test));
  ASSERT_EQ(j.at("images").size(), 360u);
  const auto& img = j.at("images").at(5);  // file line 1443
  EXPECT_EQ(img.at("index").get<int>(), 1443);
  const sf::Digit d = sf::parse_digit_line(lines[1442], "line 1443");
  EXPECT_EQ(img.at("true").get<int>(), d.label);
  EXPECT_EQ(img.at("predicted").get<int>(), sf::vit_predict(m, d.pixels));
}

TEST_F(CliClassify, PlainOutputEndsWithTheAccuracy) {
  const CliResult r = run({"classify", "--model", asset("vit-digits.safetensors"), "--first", "1", "--count", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto lines = r.out_lines();
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0].rfind("image 1: predicted ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[3].rfind("accuracy: ", 0), 0u) << lines[3];
}

TEST_F(CliClassify, RefusesATextModelAndAFirstPastTheEnd) {
  const std::string text = sf::test::expect_one_line_error(
      run({"classify", "--model", asset("default.safetensors")}), 2, "a GPT model");
  EXPECT_NE(text.find("needs a vision transformer"), std::string::npos) << text;
  const std::string past = sf::test::expect_one_line_error(
      run({"classify", "--model", asset("vit-digits.safetensors"), "--first", "2000"}), 1, "--first 2000");
  EXPECT_NE(past.find("past the file's 1797 images"), std::string::npos) << past;
}

#endif  // STEPFORMER_CLI

}  // namespace test_cli_classify
