// The Logit lens tab (an interpretation tool, not in the paper; app/panels/logit_lens_*): its grid and
// its bars as --dump-state's "logit_lens" reports them, against core's logit_lens and
// direct_logit_attribution on the same model and input (computed here through a headless Session): the
// default model sorting "dcab", the bundled BERT at a typed [MASK], and the encoder-decoder's decoder.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "app/session.hpp"
#include "core/interpret/logit_lens.hpp"
#include "core/io/checkpoint.hpp"
#include "tests/app/gui_harness.hpp"

namespace test_gui_logit_lens {

using gui::AppRun;
using gui::json;

namespace {

const std::string kAssets = std::string(STEPFORMER_SOURCE_DIR) + "/assets/";

// The dumped grid is core's lens: every cell's top token and, to the float printed (JSON keeps a float's
// shortest round-trip digits, so 1e-7 relative is all the dump loses), its probabilities.
void expect_grid(const json& g, const sf::LogitLens& lens) {
  ASSERT_EQ(g["layers"].get<int>(), lens.layers());
  ASSERT_EQ(g["grid"].size(), lens.P.size());
  for (size_t l = 0; l < lens.P.size(); ++l)
    for (int t = 0; t < static_cast<int>(lens.x.size()); ++t) {
      const json& c = g["grid"][l][t];
      const int top = sf::top_token(lens.P[l], t), y = sf::top_token(lens.P_model, t);
      EXPECT_EQ(c["top_id"].get<int>(), top) << "l " << l << " t " << t + 1;
      EXPECT_NEAR(c["p_top"].get<double>(), lens.P[l](top - 1, t), 1e-6);
      EXPECT_NEAR(c["p_final"].get<double>(), lens.P[l](y - 1, t), 1e-6);
    }
}

// The bars add up to the logit (docs/interpretation.md) to float rounding: core's sum identity holds within
// 128u of Σ|parts| (tests/core/test_logit_lens.cpp derives it), u = 2⁻²⁴.
void expect_sum(const json& d) {
  double scale = std::abs(d["logit"].get<double>());
  for (const json& b : d["bars"]) scale += std::abs(b["value"].get<double>());
  EXPECT_NEAR(d["sum"].get<double>(), d["logit"].get<double>(), 128 * std::ldexp(1.0, -24) * scale) << d.dump();
}

}  // namespace

TEST(GuiLogitLens, DefaultModelSortingDcab) {
  const AppRun r = gui::run_app_sized(1280, 720, "--no-ini", "prompt:dcab=,open:lens,lens-position:4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& g = r.state["logit_lens"];
  ASSERT_FALSE(g.contains("error")) << g.dump();
  sf::Session s;
  s.set_model(sf::load_checkpoint(kAssets + "default.safetensors").model, "default");
  s.set_prompt("dcab=");
  ASSERT_EQ(g["x"].get<sf::Tokens>(), s.tokens());
  const sf::LensRun run = sf::logit_lens(s.model(), {}, s.tokens());
  expect_grid(g, run.lens);
  EXPECT_EQ(g["alg"], 10);
  // The bars at t = 4 are core's attribution of the predicted token there, part by part, and sum to the logit.
  EXPECT_EQ(g["position"], 4);
  const sf::LogitAttribution a = sf::direct_logit_attribution(s.model(), run.trace, 4, sf::top_token(run.lens.P_model, 3));
  const json& d = g["dla"];
  ASSERT_EQ(d["bars"].size(), a.parts.size());
  EXPECT_EQ(d["y"].get<int>(), a.y);
  for (size_t i = 0; i < a.parts.size(); ++i) {
    EXPECT_EQ(d["bars"][i]["label"], a.parts[i].label);
    EXPECT_NEAR(d["bars"][i]["value"].get<double>(), a.parts[i].value, 1e-12 * (1 + std::abs(a.parts[i].value)));
  }
  expect_sum(d);
  EXPECT_EQ(r.state["content_overflow"]["Inspector"].get<double>(), 0.0) << "nothing wider than the tab at 1280x720";
}

TEST(GuiLogitLens, BertMarksTheMaskAndEncoderDecoderLensesTheDecoder) {
  const AppRun b = gui::run_app("", "load:" + kAssets + "bert.safetensors,prompt:ab[MASK]d=dcba,open:lens");
  ASSERT_EQ(b.exit_code, 0) << b.output;
  const json& g = b.state["logit_lens"];
  ASSERT_FALSE(g.contains("error")) << g.dump();
  sf::Session s;
  s.set_model(sf::load_checkpoint(kAssets + "bert.safetensors").model, "bert");
  s.set_prompt("ab[MASK]d=dcba");
  expect_grid(g, sf::logit_lens(s.model(), {}, s.tokens()).lens);
  EXPECT_EQ(g["masked"], json::array({4})) << "t = 4 after bos_token holds mask_token";
  EXPECT_EQ(g["position"], 4) << "the attributed position defaults to the first [MASK]";
  EXPECT_NE(g["dla"]["error"].get<std::string>().find("not linear"), std::string::npos) << g["dla"].dump();

  const AppRun e = gui::run_app("", "load:" + kAssets + "ed.safetensors,context:12 march 2024,prompt:2024-03-12,open:lens");
  ASSERT_EQ(e.exit_code, 0) << e.output;
  const json& ge = e.state["logit_lens"];
  sf::Session se;
  se.set_model(sf::load_checkpoint(kAssets + "ed.safetensors").model, "ed");
  se.set_context("12 march 2024");
  se.set_prompt("2024-03-12");
  EXPECT_EQ(ge["alg"], 8);
  expect_grid(ge, sf::logit_lens(se.model(), se.tokens_z(), se.tokens()).lens);
  expect_sum(ge["dla"]);
}

// A vision transformer (not in the paper) reads an image: the tab says where its prediction is instead of
// failing on the prompt's tokens as if they were an image ("an image must hold 64 pixel intensities").
TEST(GuiLogitLens, AVitIsToldWhereItsPredictionIs) {
  const AppRun r = gui::run_app("", "load:" + kAssets + "vit-digits.safetensors,open:lens");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string error = r.state["logit_lens"]["error"];
  EXPECT_NE(error.find("a vision transformer reads an image"), std::string::npos) << error;
  EXPECT_NE(error.find("Vision tab"), std::string::npos) << error;
}

TEST(GuiLogitLens, BadPositionIsRefused) {
  const AppRun r = gui::run_app("", "prompt:dcab=,lens-position:9");
  EXPECT_NE(r.output.find("lens-position needs a position from 1 to 6"), std::string::npos) << r.output;
}

}  // namespace test_gui_logit_lens
