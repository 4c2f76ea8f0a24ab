// The Session with a vision transformer (arch "vit", not in the paper; issue 26 item 5): its input x
// is an image (a held-out test digit by default, or a drawn one), the traced run is Algorithm 9 on it,
// and what the Vision tab reads (vision_readout) is P[:, 1] of that run and the class token's column
// of Algorithm 4 line 6's softmax. Session files keep the image.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "app/logic/lesson_player.hpp"
#include "app/logic/session_actions.hpp"
#include "app/logic/session_state.hpp"
#include "app/logic/vision.hpp"
#include "app/session.hpp"
#include "core/arch/vit.hpp"
#include "core/model/error.hpp"
#include "core/trace/value_keys.hpp"
#include "core/training/digits.hpp"

namespace sf {
namespace test_session_vision {

std::string asset(const char* name) { return assets_dir() + "/" + name; }

void open_vit(Session& s) {
  std::string error;
  ASSERT_TRUE(s.load_model(asset("vit-digits.safetensors"), error)) << error;
  ASSERT_TRUE(s.reads_image());
}

// The tolerance between the traced P and core's untraced forward on the same image: both are float32
// runs of Algorithm 9 (L = 2), whose sums may associate differently (AVX2 vs AVX-512 kernels); each of
// P's entries lies in [0, 1], so a few float ulps (6e-8) per operation through two layers stay far
// below 1e-5, while a wrong image or column would move P by orders more.
constexpr double kPTol = 1e-5;

TEST(SessionVision, AVitOpensOnTestDigitOneAndTracesAlgorithm9OnIt) {
  Session s;
  EXPECT_FALSE(s.reads_image());  // the default model reads text
  open_vit(s);
  const Digit first = parse_digit_line(digits_test_lines(read_digit_lines()).front(), "test digit 1");
  EXPECT_EQ(s.vision().test_index(), 1);
  EXPECT_EQ(s.vision().test_count(), kDigitsTest);
  EXPECT_EQ(s.vision().pixels(), first.pixels);
  EXPECT_EQ(s.vision().true_class(), first.label);
  ASSERT_GT(s.trace().size(), 0u);
  EXPECT_EQ(s.trace().events.front().alg, 9);
  EXPECT_TRUE(s.prompt_input().error.empty()) << s.prompt_input().error;
  // x as the trace shows it: the 8×8 intensities, row by row (not token ids).
  const Value* image = nullptr;
  for (const Value& v : s.trace().events.front().values)
    if (v.name == "image") image = &v;
  ASSERT_NE(image, nullptr);
  ASSERT_EQ(image->m.rows(), kImageSide);
  ASSERT_EQ(image->m.cols(), kImageSide);
  for (int r = 0; r < kImageSide; ++r)
    for (int c = 0; c < kImageSide; ++c) EXPECT_EQ(image->m(r, c), first.pixels[static_cast<size_t>(r * 8 + c)]);
  // The token axes are the class token and the patches, never the prompt's tokens.
  EXPECT_TRUE(s.tokens_at(s.cursor()).empty());
}

TEST(SessionVision, TheReadoutsPIsCoresForwardOnTheSameImage) {
  Session s;
  open_vit(s);
  std::string error;
  for (int n : {1, 7, 360}) {
    ASSERT_TRUE(s.select_test_digit(n, error)) << error;
    const VisionReadout r = vision_readout(s.trace(), 1, 0);
    ASSERT_TRUE(r.error.empty()) << r.error;
    const MatF P = s.arch().forward(s.model(), {}, s.vision().pixels(), nullptr, {}, nullptr);  // (10, ℓ_x)
    ASSERT_EQ(r.P.size(), 10u);
    for (int c = 0; c < 10; ++c) EXPECT_NEAR(r.P[static_cast<size_t>(c)], P(c, 0), kPTol) << "digit " << n << " class " << c;
    EXPECT_EQ(r.predicted, vit_predict(s.model(), s.vision().pixels())) << "digit " << n;
    EXPECT_EQ(r.layers, s.model().config.L);
    EXPECT_EQ(r.heads, s.model().config.H);
  }
}

TEST(SessionVision, TheOverlayIsTheClassTokensColumnOfTheTracedSoftmax) {
  Session s;
  open_vit(s);
  const ModelConfig& c = s.model().config;
  const int l_x = vit_tokens(c.patch);
  for (int l = 1; l <= c.L; ++l) {
    std::vector<double> mean(static_cast<size_t>(l_x), 0.0);
    for (int h = 1; h <= c.H; ++h) {
      const TraceMat* A = nullptr;  // Algorithm 4 line 6's softmax(S/√d_attn) of layer l, head h
      for (const Event& e : s.trace().events)
        if (e.alg == 4 && e.line == 6 && e.kind == EventKind::Line && e.idx.l == l && e.idx.h == h)
          for (const Value& v : e.values)
            if (v.name == keys::attention_weights.symbol) A = &v.m;
      ASSERT_NE(A, nullptr) << "l " << l << " h " << h;
      ASSERT_EQ(A->rows(), l_x);
      const VisionReadout r = vision_readout(s.trace(), l, h);
      ASSERT_EQ(r.weights.size(), static_cast<size_t>(l_x));
      double sum = 0;
      for (int z = 0; z < l_x; ++z) {
        EXPECT_EQ(r.weights[static_cast<size_t>(z)], (*A)(z, 0));  // the same float, read from the trace
        mean[static_cast<size_t>(z)] += (*A)(z, 0) / c.H;
        sum += r.weights[static_cast<size_t>(z)];
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);  // a softmax column: float32 rounding of ℓ_x = 5 terms
    }
    const VisionReadout m = vision_readout(s.trace(), l, 0);
    for (int z = 0; z < l_x; ++z) EXPECT_NEAR(m.weights[static_cast<size_t>(z)], mean[static_cast<size_t>(z)], 1e-12);
  }
}

TEST(SessionVision, PickingDrawingAndBadInput) {
  Session s;
  open_vit(s);
  std::string error;
  EXPECT_FALSE(s.select_test_digit(0, error));
  EXPECT_NE(error.find("1 … 360"), std::string::npos) << error;
  EXPECT_FALSE(s.select_test_digit(361, error));
  EXPECT_FALSE(s.set_pixel(9, 1, 16, error));
  EXPECT_FALSE(s.set_pixel(1, 1, 17, error));
  EXPECT_NE(error.find("0 … 16"), std::string::npos) << error;
  EXPECT_EQ(s.vision().test_index(), 1);  // nothing changed
  const size_t serial = s.trace_serial();
  ASSERT_TRUE(s.set_pixel(4, 5, 16, error)) << error;
  EXPECT_GT(s.trace_serial(), serial);  // re-traced
  EXPECT_EQ(s.vision().test_index(), 0);  // drawn now
  EXPECT_EQ(s.vision().true_class(), -1);
  EXPECT_EQ(s.vision().pixels()[3 * 8 + 4], 16);
  s.clear_image();
  EXPECT_EQ(s.vision().pixels(), Tokens(64, 0));
  const VisionReadout r = vision_readout(s.trace(), 1, 0);
  const MatF P = s.arch().forward(s.model(), {}, Tokens(64, 0), nullptr, {}, nullptr);
  for (int c = 0; c < 10; ++c) EXPECT_NEAR(r.P[static_cast<size_t>(c)], P(c, 0), kPTol);
  // The verbs: the same, and refused for a text model.
  EXPECT_EQ(apply_session_action(s, "vision-digit", "12", error), ActionResult::Done) << error;
  EXPECT_EQ(s.vision().test_index(), 12);
  EXPECT_EQ(apply_session_action(s, "vision-pixel", "1:1:9", error), ActionResult::Done) << error;
  EXPECT_EQ(s.vision().pixels()[0], 9);
  EXPECT_EQ(apply_session_action(s, "vision-pixel", "1:1", error), ActionResult::Failed);
  EXPECT_EQ(apply_session_action(s, "vision-clear", "", error), ActionResult::Done) << error;
  Session text;
  EXPECT_EQ(apply_session_action(text, "vision-digit", "1", error), ActionResult::Failed);
  EXPECT_NE(error.find("reads text"), std::string::npos) << error;
}

TEST(SessionVision, NextMisclassifiedIsTheFirstWrongPredictionAfterTheCurrentDigit) {
  Session s;
  open_vit(s);
  const std::vector<Digit>& test = s.vision().test_digits();
  const int m = next_misclassified(s.model(), s.vision(), 0);
  ASSERT_GT(m, 0);  // 19 of the 360 are wrong (docs/vision.md)
  EXPECT_NE(vit_predict(s.model(), test[static_cast<size_t>(m - 1)].pixels), test[static_cast<size_t>(m - 1)].label);
  for (int i = 1; i < m; ++i)
    EXPECT_EQ(vit_predict(s.model(), test[static_cast<size_t>(i - 1)].pixels), test[static_cast<size_t>(i - 1)].label);
  const int after = next_misclassified(s.model(), s.vision(), m);
  EXPECT_TRUE(after == 0 || after > m);
}

TEST(SessionVision, WithoutTheDigitsFileTheImageIsBlankAndDrawable) {
  VisionInput v;
  v.digits_path = "/nonexistent/digits.csv.gz";
  v.choose_default();
  EXPECT_EQ(v.test_count(), 0);
  EXPECT_FALSE(v.data_error().empty());
  EXPECT_EQ(v.pixels(), Tokens(64, 0));
  std::string error;
  EXPECT_FALSE(v.select_test(1, error));
  EXPECT_NE(error.find("draw"), std::string::npos) << error;
  EXPECT_TRUE(v.set_pixel(8, 8, 16, error)) << error;
  EXPECT_EQ(v.pixels()[63], 16);
}

TEST(SessionVision, ASessionFileKeepsTheImage) {
  Session a;
  open_vit(a);
  std::string error;
  ASSERT_TRUE(a.select_test_digit(42, error)) << error;
  SessionFile f;
  f.state = capture_session(a);
  ASSERT_TRUE(f.state.image.has_value());
  EXPECT_EQ(f.state.image->test_digit, 42);
  const SessionFile back = session_from_json(session_to_json(f));
  Session b;
  open_vit(b);
  EXPECT_TRUE(restore_session(b, back.state).empty());
  EXPECT_EQ(b.vision().test_index(), 42);
  EXPECT_EQ(b.vision().pixels(), a.vision().pixels());
  // A drawn image comes back drawn.
  ASSERT_TRUE(a.set_pixel(2, 3, 7, error)) << error;
  f.state = capture_session(a);
  EXPECT_EQ(f.state.image->test_digit, 0);
  EXPECT_TRUE(restore_session(b, session_from_json(session_to_json(f)).state).empty());
  EXPECT_EQ(b.vision().test_index(), 0);
  EXPECT_EQ(b.vision().pixels(), a.vision().pixels());
  // The reader checks the image: 64 values 0 … 16.
  SessionFile short_image = f;
  short_image.state.image->pixels.resize(63);
  try {
    session_from_json(session_to_json(short_image));
    ADD_FAILURE() << "a 63-pixel image was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("image.pixels"), std::string::npos) << e.what();
  }
  f.state.image->pixels[5] = 17;
  try {
    session_from_json(session_to_json(f));
    ADD_FAILURE() << "an intensity 17 was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("0–16"), std::string::npos) << e.what();
  }
  // A text model's session has no image; an image for a text model is a note, not a crash.
  Session text;
  EXPECT_FALSE(capture_session(text).image.has_value());
  const std::vector<std::string> notes = restore_session(text, back.state);
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(),
                          [](const std::string& n) { return n.find("The saved image: this model") == 0; }));
}


// Lesson 13 ("Images are tokens too"): its stops show the images their notes name, and the
// predict-then-reveal pair's note ("picks 1 with P ≈ 0.65, but the writer drew an 8") is what the
// committed model computes on test digit 117.
TEST(SessionVision, LessonThirteenShowsItsDigitsAndRevealsTheMistake) {
  LessonPlayer p;
  std::string error;
  ASSERT_TRUE(p.open(find_lesson("13-images-are-tokens-too"), error)) << error;
  ASSERT_EQ(p.size(), 9u);
  Session s;
  ASSERT_TRUE(p.go(s, 0, nullptr, error)) << error;
  ASSERT_TRUE(s.reads_image());
  EXPECT_EQ(s.vision().test_index(), 1);
  ASSERT_TRUE(p.go(s, 7, nullptr, error)) << error;  // stop 8: the reveal
  EXPECT_EQ(s.vision().test_index(), 117);
  EXPECT_EQ(s.vision().true_class(), 8);
  const VisionReadout r = vision_readout(s.trace(), 1, 0);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.predicted, 1);
  EXPECT_NEAR(r.P[1], 0.65, 0.005);  // the note rounds it to two digits
  ASSERT_TRUE(p.go(s, 8, nullptr, error)) << error;  // stop 9: a drawn 7
  EXPECT_EQ(s.vision().test_index(), 0);
  EXPECT_EQ(std::count(s.vision().pixels().begin(), s.vision().pixels().end(), 16), 12);
}


// The status line's description of a vit, from its configuration (not a tokenizer's "character-level"):
// in full for the "Opened …" notice and --dump-state's "tokenizer", shorter for the status line, whose
// configuration keys already say patch=4 and ℓ_max=5.
TEST(SessionVision, TheStatusLineNamesTheClassesAndTheImage) {
  Session s;
  open_vit(s);
  ModelConfig c = s.model().config;
  EXPECT_EQ(vision_model_description(c), "an 8×8 image in 4×4 patches (4 patch tokens + the class token), 10 classes (0 … 9)");
  EXPECT_EQ(vision_model_description(c, true), "classes=10 image=8×8");
  c.patch = 2;  // ℓ_x = 1 + (8/2)² = 17
  EXPECT_EQ(vision_model_description(c), "an 8×8 image in 2×2 patches (16 patch tokens + the class token), 10 classes (0 … 9)");
}

// The heatmaps' patch labels (heatmap.hpp's HeatmapAxis::images): token t of a vit is patch k = t − 1's
// p×p pixels, cut from the 8×8 image row by row as image_patches cuts them for W_patch, each
// intensity v drawn in the grey round(255 v / 16) of the Vision tab; the class token has none (it
// stays "CLS" as text).
TEST(SessionVision, APatchTokensImageIsItsPatchsPixelsInGrey) {
  EXPECT_EQ(intensity_grey(0), 0);
  EXPECT_EQ(intensity_grey(8), 128);  // 127.5, rounded half away from zero
  EXPECT_EQ(intensity_grey(16), 255);
  EXPECT_EQ(intensity_grey(5), 80);  // 79.6875
  Tokens image(kImagePixels);
  for (int i = 0; i < kImagePixels; ++i) image[static_cast<size_t>(i)] = (i * 7) % (kDigitMax + 1);  // every pixel its own
  for (int p : {2, 4}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    EXPECT_TRUE(vision_token_image(image, 1, p).empty());  // the class token
    EXPECT_TRUE(vision_token_image(image, vit_tokens(p) + 1, p).empty());  // past the last patch
    // Against the patches core feeds W_patch: column k − 1 of image_patches holds patch k's p² pixels
    // row by row, each v / 16, so 255 · that, rounded, is the label's grey.
    const Mat<double> patches = image_patches<double>(image, p);
    for (int t = 2; t <= vit_tokens(p); ++t) {
      const TokenImage im = vision_token_image(image, t, p);
      ASSERT_EQ(im.w, p);
      ASSERT_EQ(im.h, p);
      for (int r = 0; r < p; ++r)
        for (int c = 0; c < p; ++c)
          EXPECT_EQ(im.at(r, c), std::lround(255.0 * patches(r * p + c, t - 2))) << "t = " << t << ", " << r << ", " << c;
    }
  }
  // Where they are, written out: p = 4, token 3 is patch 2, rows 1–4 and columns 5–8 (its first row
  // pixels 4 … 7, its last 28 … 31); p = 2, token 17 is patch 16, rows 7–8 and columns 7–8.
  const TokenImage t3 = vision_token_image(image, 3, 4);
  EXPECT_EQ(t3.at(0, 0), intensity_grey(image[4]));
  EXPECT_EQ(t3.at(0, 3), intensity_grey(image[7]));
  EXPECT_EQ(t3.at(3, 0), intensity_grey(image[28]));
  EXPECT_EQ(t3.at(3, 3), intensity_grey(image[31]));
  const TokenImage t17 = vision_token_image(image, 17, 2);
  EXPECT_EQ(t17.at(0, 0), intensity_grey(image[6 * 8 + 6]));
  EXPECT_EQ(t17.at(1, 1), intensity_grey(image[7 * 8 + 7]));
  // Not an image: no label image (the text stays).
  EXPECT_TRUE(vision_token_image(Tokens(10, 0), 2, 4).empty());
  EXPECT_TRUE(vision_token_image(image, 2, 3).empty());  // 3 does not divide 8
}

}  // namespace test_session_vision
}  // namespace sf
