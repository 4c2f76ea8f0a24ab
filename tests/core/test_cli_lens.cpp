// stepformer-cli lens (cli/cmd_lens.cpp; an interpretation tool, not in the paper): its --json is core's
// logit lens and direct logit attribution on the bundled default model sorting "dcab", and a position
// outside the sequence is a one-line usage error.
#ifdef STEPFORMER_CLI
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/interpret/logit_lens.hpp"
#include "core/io/checkpoint.hpp"
#include "test_cli_support.hpp"

namespace test_cli_lens {

using namespace sf;
using namespace sf::test;

namespace {

std::string asset(const char* f) { return std::string(STEPFORMER_TEST_DATA) + "/../../assets/" + f; }

}  // namespace

TEST(CliLens, JsonIsCoresLensAndAttribution) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("sf-cli-lens-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const CliResult r = run_cli(dir, {"lens", "--model", asset("default.safetensors"), "--prompt", "dcab=", "--position", "6", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const Model m = load_checkpoint(asset("default.safetensors")).model;
  const Tokens x = j.at("x").get<Tokens>();
  ASSERT_EQ(x.size(), 6u);  // bos_token, d, c, a, b, =
  const LensRun run = logit_lens(m, {}, x);
  ASSERT_EQ(j.at("lens").size(), run.lens.P.size());
  for (size_t l = 0; l < run.lens.P.size(); ++l)
    for (int t = 0; t < 6; ++t) {
      const int top = top_token(run.lens.P[l], t);
      EXPECT_EQ(j["lens"][l][t]["top"].get<int>(), top);
      EXPECT_NEAR(j["lens"][l][t]["p_top"].get<double>(), run.lens.P[l](top - 1, t), 1e-6);  // JSON keeps a float's digits
    }
  const LogitAttribution a = direct_logit_attribution(m, run.trace, 6, top_token(run.lens.P_model, 5));
  const nlohmann::json& d = j.at("dla");
  EXPECT_EQ(d.at("y").get<int>(), a.y);
  ASSERT_EQ(d.at("parts").size(), a.parts.size());
  for (size_t i = 0; i < a.parts.size(); ++i) EXPECT_DOUBLE_EQ(d["parts"][i]["value"].get<double>(), a.parts[i].value);
  EXPECT_DOUBLE_EQ(d.at("logit").get<double>(), a.logit);
  std::filesystem::remove_all(dir);
}

TEST(CliLens, PositionOutsideTheSequenceIsAUsageError) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("sf-cli-lens-bad-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const CliResult r = run_cli(dir, {"lens", "--model", asset("default.safetensors"), "--prompt", "dcab=", "--position", "7"});
  const std::string line = expect_one_line_error(r, 2, "lens --position 7");
  EXPECT_NE(line.find("position"), std::string::npos) << line;
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace test_cli_lens
