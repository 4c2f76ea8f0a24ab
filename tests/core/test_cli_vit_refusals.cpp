// stepformer-cli on a vision transformer (arch "vit"): the commands that read text or token ids
// refuse it with one line that says its input is an 8×8 image and points to classify (checked once,
// where those commands open their model: cli/common.cpp's load_text_model), and the commands that
// describe a model show its 10 classes, not ModelConfig::N_V() = 13 (which counts three special
// tokens a vision transformer never uses).
#include <gtest/gtest.h>

#ifdef STEPFORMER_CLI

#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_cli_support.hpp"

namespace test_cli_vit_refusals {

namespace fs = std::filesystem;
using sf::test::CliResult;

namespace {

std::string asset(const char* f) { return std::string(STEPFORMER_TEST_DATA) + "/../../assets/" + f; }

class CliVit : public ::testing::Test {
 protected:
  static inline fs::path dir;
  static void SetUpTestSuite() {
    dir = fs::temp_directory_path() / ("stepformer_cli_vit_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  static CliResult run(const std::vector<std::string>& args) { return sf::test::run_cli(dir, args); }

  // The one-line refusal (a usage error, status 2) that names the command, the image input and classify.
  static void expect_refusal(const std::vector<std::string>& args, const std::string& command) {
    const std::string line = sf::test::expect_one_line_error(run(args), 2, command);
    EXPECT_NE(line.find("is a vision transformer"), std::string::npos) << line;
    EXPECT_NE(line.find("8×8 image"), std::string::npos) << line;
    EXPECT_NE(line.find(" so " + command + " cannot run it"), std::string::npos) << line;
    EXPECT_NE(line.find("stepformer-cli classify --model " + asset("vit-digits.safetensors")), std::string::npos)
        << line;
  }
};

}  // namespace

TEST_F(CliVit, TextCommandsRefuseItAndPointToClassify) {
  const std::string vit = asset("vit-digits.safetensors");
  expect_refusal({"forward", "--model", vit, "--tokens", "1,2,3"}, "forward");
  expect_refusal({"fill", "--model", vit, "--tokens", "1,2,3"}, "fill");
  expect_refusal({"backward", "--model", vit, "--tokens", "1,2,3", "--out-dir", (dir / "grads").string()}, "backward");
  expect_refusal({"sample", "--model", vit, "--prompt", "7"}, "sample");
  expect_refusal({"lens", "--model", vit, "--prompt", "7"}, "lens");
  expect_refusal({"tokenize", "--tokenizer", vit, "--text", "7"}, "tokenize");
}

TEST_F(CliVit, InfoShowsTheTenClassesNotNV) {
  const CliResult r = run({"info", "--model", asset("vit-digits.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string config = sf::test::line_after(r.out, "configuration: ");
  EXPECT_NE(config.find(" classes=10 (0 … 9) "), std::string::npos) << config;
  EXPECT_EQ(r.out.find("N_V"), std::string::npos) << r.out;
  EXPECT_EQ(sf::test::line_after(r.out, "classes: "), "10 (0 … 9), the rows of P") << r.out;
  EXPECT_EQ(r.out.find("tokenizer:"), std::string::npos) << r.out;

  const CliResult j = run({"info", "--model", asset("vit-digits.safetensors"), "--json"});
  ASSERT_EQ(j.status, 0) << j.err;
  const auto json = nlohmann::json::parse(j.out);
  EXPECT_EQ(json.at("classes"), nlohmann::json({"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
  EXPECT_FALSE(json.contains("tokenizer"));
}

TEST_F(CliVit, ATextModelsInfoStillShowsNV) {
  const CliResult r = run({"info", "--model", asset("default.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(sf::test::line_after(r.out, "configuration: ").find(" N_V="), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("classes"), std::string::npos) << r.out;
}

#endif  // STEPFORMER_CLI

}  // namespace test_cli_vit_refusals
