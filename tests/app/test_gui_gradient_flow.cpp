// Inspector › Gradient flow (issue 24, item 4) and lesson 10, "Why pre-LN trains more stably"
// (item 5), under Xvfb: the numbers the tab shows (--dump-state "gradient_flow", exact doubles) are
// core's gradient_flow for the same model and input, for a GPT, a BERT (loss at its masked
// positions) and an encoder-decoder; the tab says what to do when there is no loss to take; its
// heatmap is drawn whole at 1280×720 and 1920×1080; every stop of lesson 10 opens the tab on the
// right model, and what its notes say about the numbers holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/session.hpp"
#include "core/gradients/gradient_flow.hpp"
#include "core/io/checkpoint.hpp"
#include "tests/app/gui_harness.hpp"
#include "tests/app/gui_models.hpp"

namespace test_gui_gradient_flow {

using json = nlohmann::json;
using gui::AppRun;
using gui::run_app;

namespace {

const std::string kAssets = std::string(STEPFORMER_SOURCE_DIR) + "/assets/";

std::vector<double> row(const sf::Mat<double>& m, Eigen::Index r) {
  std::vector<double> v;
  for (Eigen::Index c = 0; c < m.cols(); ++c) v.push_back(m(r, c));
  return v;
}

// The dumped stream equals core's, exactly: the app ran the same double computation on the same
// θ and tokens, and JSON writes doubles with enough digits to read them back bitwise.
void expect_stream(const json& got, const sf::StreamFlow& want) {
  ASSERT_EQ(got["token_norms"].size(), static_cast<size_t>(want.token_norms.rows()));
  for (Eigen::Index l = 0; l < want.token_norms.rows(); ++l)
    EXPECT_EQ(got["token_norms"][static_cast<size_t>(l)].get<std::vector<double>>(), row(want.token_norms, l))
        << "l = " << l + 1;
  EXPECT_EQ(got["layer_norms"].get<std::vector<double>>(), want.layer_norms);
}

void expect_flow(const json& got, const sf::GradientFlow& want) {
  EXPECT_EQ(got["loss"].get<double>(), want.loss);
  EXPECT_EQ(got["saliency"].get<std::vector<double>>(), want.saliency());
  expect_stream(got["x"], want.x);
  if (!want.z.empty()) expect_stream(got["z"], want.z);
  ASSERT_EQ(got["heads"].size(), want.heads.size());
  for (size_t b = 0; b < want.heads.size(); ++b) {
    const json& h = got["heads"][b];
    EXPECT_EQ(h["label"], want.heads[b].label);
    EXPECT_EQ(h["q"].get<std::vector<double>>(), want.heads[b].q) << want.heads[b].label;
    EXPECT_EQ(h["k"].get<std::vector<double>>(), want.heads[b].k) << want.heads[b].label;
    EXPECT_EQ(h["v"].get<std::vector<double>>(), want.heads[b].v) << want.heads[b].label;
  }
}

// The tab's heatmap of ‖∇X‖ (or ‖∇Z‖) as drawn in the last frame; null when none.
const json* stream_heatmap(const json& state, const std::string& name) {
  for (const json& h : state["heatmaps"])
    if (h["value"] == name) return &h;
  return nullptr;
}

sf::Tokens tokens_of(const json& state) { return state["tokens"].get<sf::Tokens>(); }

}  // namespace

TEST(GuiGradientFlow, ShowsCoresNumbersForTheDefaultGpt) {
  for (const auto& [w, h] : {std::pair{1280, 720}, std::pair{1920, 1080}}) {
    SCOPED_TRACE(std::to_string(w) + "×" + std::to_string(h));
    const AppRun r = gui::run_app_sized(w, h, "--no-ini", "prompt:hello world=,open:gradflow");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json& g = r.state["gradient_flow"];
    ASSERT_TRUE(g["drawn"].get<bool>());
    EXPECT_EQ(r.state["inspector_tab"], "Gradient flow");
    ASSERT_TRUE(g["current"].get<bool>()) << g.dump();
    EXPECT_FALSE(g["async"].get<bool>()) << "the default model is computed at once";
    sf::Session s;  // the same default model, loaded the same way
    const sf::Tokens x = tokens_of(r.state);
    ASSERT_EQ(x.size(), 13u) << "<bos> and 12 characters";
    expect_flow(g, sf::gradient_flow(s.model(), sf::next_token_batch({}, x)));
    EXPECT_EQ(g["saliency"].back().get<double>(), 0.0) << "the last token is in no loss term";
    const json* hm = stream_heatmap(r.state, "‖∇X‖");
    ASSERT_NE(hm, nullptr);
    EXPECT_TRUE((*hm)["visible"].get<bool>()) << "the heatmap is drawn whole";
    EXPECT_EQ((*hm)["col_labels"].size(), 13u);
    EXPECT_EQ(r.state["content_overflow"]["Inspector"].get<double>(), 0.0) << "nothing wider than the tab";
  }
}

TEST(GuiGradientFlow, BertTakesItsLossAtTheMaskedPositions) {
  const std::string bert = kAssets + "bert.safetensors";
  const AppRun none = run_app("", "load:" + bert + ",prompt:abcd=dcba,open:gradflow");
  ASSERT_EQ(none.exit_code, 0) << none.output;
  const std::string msg = none.state["gradient_flow"]["message"];
  EXPECT_NE(msg.find("No [MASK] in x"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Fill-in tab"), std::string::npos) << msg;

  const AppRun typed = run_app("", "load:" + bert + ",prompt:ab[MASK]d=dcba,open:gradflow");
  EXPECT_NE(typed.state["gradient_flow"]["message"].get<std::string>().find("was typed"), std::string::npos);

  // Masking t = 3 ("b") from the Fill-in tab: the loss is −log P[x[3], 3], x̃[3] = mask_token.
  const AppRun r = run_app("", "load:" + bert + ",prompt:abcd=dcba,mask:3,open:gradflow");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& g = r.state["gradient_flow"];
  ASSERT_TRUE(g["current"].get<bool>()) << g.dump();
  const sf::Checkpoint ck = sf::load_checkpoint(bert);
  sf::Session s;
  s.set_model(ck.model, "bert");
  s.set_prompt("abcd=dcba");
  const sf::Tokens x = s.tokens();
  const sf::Tokens xt = tokens_of(r.state);
  ASSERT_EQ(xt.size(), x.size());
  EXPECT_EQ(xt[2], s.tokenizer().mask_token());
  std::vector<int> targets(x.size(), 0);
  targets[2] = x[2];
  EXPECT_EQ(g["targets"].get<std::vector<int>>(), targets);
  expect_flow(g, sf::gradient_flow(ck.model, sf::masked_batch(x, {3}, s.tokenizer().mask_token())));
}

// A vision transformer (not in the paper): the loss is −log P[y, 1] at the test digit's true class y
// (class y has id y + 1), the stream's tokens are the class token and the patches, labelled "CLS",
// "P1" … with each patch drawn as its pixels, and a drawn image, which has no true class, says what to do.
TEST(GuiGradientFlow, VitTakesItsLossAtTheClassTokenOfATestDigit) {
  const std::string vit = kAssets + "vit-digits.safetensors";
  const AppRun r = run_app("", "load:" + vit + ",vision-digit:3,open:gradflow");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& g = r.state["gradient_flow"];
  ASSERT_TRUE(g["current"].get<bool>()) << g.dump();
  const json& v = r.state["vision"];
  const sf::Tokens image = v["image"].get<sf::Tokens>();
  const int y = v["true_class"].get<int>();
  ASSERT_GE(y, 0);
  const sf::Checkpoint ck = sf::load_checkpoint(vit);
  const sf::GradientFlow want = sf::gradient_flow(ck.model, sf::image_batch(image, y + 1));
  expect_flow(g, want);
  ASSERT_EQ(want.saliency().size(), 5u);  // ℓ_x = 1 + (8/4)²
  // The loss is −log of the Vision tab's P[y, 1] (a float32 forward pass; the loss is in double): P's
  // relative rounding is about 3 products of ≤ 48 terms, 3 · 48 · 2⁻²⁴ ≈ 9e-6, so 1e-5 apart at most.
  EXPECT_NEAR(std::exp(-want.loss), v["P"][static_cast<size_t>(y)].get<double>(), 1e-5);
  EXPECT_GT(want.x.layer_norms.front(), 0.0);
  const json* hm = stream_heatmap(r.state, "‖∇X‖");
  ASSERT_NE(hm, nullptr);
  EXPECT_EQ((*hm)["col_labels"], json({"CLS", "P1", "P2", "P3", "P4"}));
  ASSERT_EQ((*hm)["col_label_images"].size(), 5u);
  EXPECT_TRUE((*hm)["col_label_images"][0].is_null()) << "the class token has no pixels";
  for (size_t t = 1; t < 5; ++t) EXPECT_FALSE((*hm)["col_label_images"][t].is_null()) << "patch " << t;

  const AppRun drawn = run_app("", "load:" + vit + ",vision-digit:3,vision-clear,vision-pixel:4:5:16,open:gradflow");
  ASSERT_EQ(drawn.exit_code, 0) << drawn.output;
  const std::string msg = drawn.state["gradient_flow"]["message"];
  EXPECT_NE(msg.find("no true class"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Vision tab"), std::string::npos) << msg;
}

TEST(GuiGradientFlow, EncoderDecoderShowsTheEncodersStreamToo) {
  const std::string ed = kAssets + "ed.safetensors";
  const AppRun r = gui::run_app_sized(1280, 720, "--no-ini",
                                      "load:" + ed + ",context:12 march 2024,prompt:2024-03-12,open:gradflow");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& g = r.state["gradient_flow"];
  ASSERT_TRUE(g["current"].get<bool>()) << g.dump();
  sf::Session s;
  s.set_model(sf::load_checkpoint(ed).model, "ed");
  s.set_context("12 march 2024");
  s.set_prompt("2024-03-12");
  ASSERT_EQ(tokens_of(r.state), s.tokens());
  expect_flow(g, sf::gradient_flow(s.model(), sf::next_token_batch(s.tokens_z(), s.tokens())));
  EXPECT_NE(stream_heatmap(r.state, "‖∇Z‖"), nullptr);
  EXPECT_EQ(r.state["content_overflow"]["Inspector"].get<double>(), 0.0) << "nothing wider than the tab";
  std::vector<std::string> labels;
  for (const json& b : g["heads"]) labels.push_back(b["label"]);
  EXPECT_EQ(labels, (std::vector<std::string>{"encoder layer 1", "encoder layer 2", "decoder layer 1, self-attention",
                                              "decoder layer 1, cross-attention", "decoder layer 2, self-attention",
                                              "decoder layer 2, cross-attention"}));
}

// A model over Session::async_min_params (5M) is computed only when asked, on a worker thread: the
// tab offers the button until then, and then shows core's numbers.
TEST(GuiGradientFlow, BigModelIsComputedOnDemandOffTheUiThread) {
  sf::ModelConfig c = gui::small_config("gpt", 1024);
  c.L = 7;
  c.d_e = 256;
  c.d_attn = c.d_mid = 64;
  const std::string path = gui::temp_checkpoint(c, "gradflow-big", 1);
  const sf::Model m = sf::load_checkpoint(path).model;
  ASSERT_GT(m.table.total(), 5'000'000u);
  const std::string open = "load:" + path + ",wait-trace,prompt:hello,wait-trace,open:gradflow,wait";
  const AppRun before = run_app("", open);
  ASSERT_EQ(before.exit_code, 0) << before.output;
  const json& b = before.state["gradient_flow"];
  EXPECT_TRUE(b["async"].get<bool>());
  EXPECT_FALSE(b["current"].get<bool>());
  EXPECT_FALSE(b["computing"].get<bool>());
  EXPECT_FALSE(b.contains("loss")) << "nothing computed before the button";
  ASSERT_NE(gui::widget(before.state, "Compute the gradient"), nullptr);

  const AppRun r = run_app("", open + ",gradient-flow:compute,wait,gradient-flow:wait,wait,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& g = r.state["gradient_flow"];
  ASSERT_TRUE(g["current"].get<bool>()) << g.dump().substr(0, 400);
  expect_flow(g, sf::gradient_flow(m, sf::next_token_batch({}, tokens_of(r.state))));
}

TEST(GuiGradientFlow, OneTokenHasNoLossToDifferentiate) {
  const AppRun r = run_app("", "prompt:,open:gradflow");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.state["gradient_flow"]["message"].get<std::string>().find("x has one token"), std::string::npos);
}

// Lesson 10's stops, and the numbers its notes quote (assets/lessons/10-…; the models are made by
// scripts/make_ln_lesson_models.sh). Each stop opens the Gradient flow tab on its model.
TEST(GuiGradientFlow, PreLnLessonStopsShowWhatTheirNotesSay) {
  std::vector<json> at;  // the tab's numbers at stops 1 … 6
  for (int n = 1; n <= 6; ++n) {
    const AppRun r = run_app("", "lesson-open:10-why-pre-ln-trains-more-stably,lesson-go:" + std::to_string(n));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    SCOPED_TRACE(r.state["lesson"]["stop_title"].get<std::string>());
    EXPECT_TRUE(r.state["lesson"]["resolved"].get<bool>()) << r.state["lesson"]["error"];
    EXPECT_EQ(r.state["inspector_tab"], "Gradient flow");
    ASSERT_TRUE(r.state["gradient_flow"]["current"].get<bool>());
    EXPECT_EQ(r.state["variants"].dump().find("post-LN") != std::string::npos, n == 3 || n == 4) << r.state["variants"];
    at.push_back(r.state["gradient_flow"]);
  }
  auto layers = [](const json& g) { return g["x"]["layer_norms"].get<std::vector<double>>(); };
  // Stop 2: pre-LN's ‖∂loss/∂X_l‖_F between 12.0 and 12.5 at all nine boundaries.
  ASSERT_EQ(layers(at[1]).size(), 9u);
  for (double v : layers(at[1])) {
    EXPECT_GE(v, 12.0);
    EXPECT_LE(v, 12.5);
  }
  // Stop 3: post-LN's about 0.365 at l = 2 … 8, 0.377 at l = 9, 13.0 at l = 1.
  const std::vector<double> post = layers(at[2]);
  for (size_t l = 1; l < 8; ++l) EXPECT_NEAR(post[l], 0.365, 0.001) << "l = " << l + 1;  // "about"
  EXPECT_NEAR(post[8], 0.377, 0.0005);
  EXPECT_NEAR(post[0], 13.0, 0.05);
  const std::vector<double> pre = layers(at[1]);  // "over 30 times smaller than pre-LN's"
  EXPECT_GT(*std::min_element(pre.begin(), pre.end()) / *std::max_element(post.begin() + 1, post.end()), 30);
  // Stop 4: post-LN layer 1's ‖∇W_q^h‖, ‖∇W_k^h‖ < 2e-7; layers 2 … 8 between 6.7e-5 and 3.9e-4;
  // ‖∇W_v^h‖ 0.012 … 0.032 everywhere.
  // "over 380 times larger": the smallest of layers 2 … 8 over the largest of layer 1.
  double layer1_max = 0, others_min = INFINITY;
  for (const json& b : at[3]["heads"])
    for (const char* k : {"q", "k"})
      for (double v : b[k].get<std::vector<double>>()) {
        if (b["layer"] == 1) {
          EXPECT_LT(v, 2e-7);
          layer1_max = std::max(layer1_max, v);
        } else {
          EXPECT_GE(v, 6.7e-5);
          EXPECT_LE(v, 3.9e-4);
          others_min = std::min(others_min, v);
        }
      }
  EXPECT_GT(others_min / layer1_max, 380);
  for (const json& b : at[3]["heads"])
    for (double v : b["v"].get<std::vector<double>>()) {
      EXPECT_GE(v, 0.0115);
      EXPECT_LE(v, 0.0325);
    }
  // Stop 5: pre-LN's ‖∇W_q^h‖ 0.0022 … 0.014 in every layer (stop 6: within a factor 7), ‖∇W_v^h‖
  // 0.37 … 0.95, about 30 times post-LN's (their means' ratio).
  double q_min = INFINITY, q_max = 0, v_pre = 0, v_post = 0;
  for (const json& b : at[4]["heads"])
    for (double v : b["q"].get<std::vector<double>>()) q_min = std::min(q_min, v), q_max = std::max(q_max, v);
  EXPECT_LT(q_max / q_min, 7);
  for (size_t b = 0; b < at[4]["heads"].size(); ++b)
    for (size_t h = 0; h < 4; ++h) {
      v_pre += at[4]["heads"][b]["v"][h].get<double>();
      v_post += at[3]["heads"][b]["v"][h].get<double>();
    }
  EXPECT_NEAR(v_pre / v_post, 30, 3);
  for (const json& b : at[4]["heads"]) {
    for (double v : b["q"].get<std::vector<double>>()) {
      EXPECT_GE(v, 0.0021);
      EXPECT_LE(v, 0.0145);
    }
    for (double v : b["v"].get<std::vector<double>>()) {
      EXPECT_GE(v, 0.365);
      EXPECT_LE(v, 0.955);
    }
  }
}

}  // namespace test_gui_gradient_flow
