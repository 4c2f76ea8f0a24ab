// The colour-blind palette (app/widgets/colormap.hpp): PuOr and cividis. Checked against a
// simulation of dichromacy (Viénot, Brettel & Mollon 1999, in linear RGB): under deuteranopia and
// protanopia the diverging map's two arms stay apart and each grows away from its middle, so
// the sign and the size of a value both stay readable; the sequential map's lightness rises.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "app/widgets/colormap.hpp"

namespace test_session_palette {

using namespace sf;

namespace {

using Vec3 = std::array<double, 3>;

double linear(uint8_t c) {
  const double v = c / 255.0;
  return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
}

// How a dichromat sees the colour (linear RGB), Viénot et al. 1999.
Vec3 simulate(Rgb8 c, bool protan) {
  const Vec3 x{linear(c.r), linear(c.g), linear(c.b)};
  static const double P[3][3] = {{0.11238, 0.88762, 0}, {0.11238, 0.88762, 0}, {0.00401, -0.00401, 1}};
  static const double D[3][3] = {{0.29275, 0.70725, 0}, {0.29275, 0.70725, 0}, {-0.02234, 0.02234, 1}};
  const double(*m)[3] = protan ? P : D;
  Vec3 y{};
  for (int i = 0; i < 3; ++i) y[i] = m[i][0] * x[0] + m[i][1] * x[1] + m[i][2] * x[2];
  return y;
}

double distance(const Vec3& a, const Vec3& b) {
  return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

double luminance(Rgb8 c) { return 0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b); }

}  // namespace

TEST(Palette, TheTwoPalettesDiffer) {
  for (bool diverging : {true, false})
    for (float t : {0.0f, 0.25f, 1.0f})
      EXPECT_FALSE(colormap(t, diverging, Palette::Standard) == colormap(t, diverging, Palette::ColorBlind))
          << diverging << " " << t;
  // Both diverging maps are near-white/grey at zero.
  const Rgb8 mid = colormap(0.5f, true, Palette::ColorBlind);
  EXPECT_EQ(mid, (Rgb8{247, 247, 247}));
}

TEST(Palette, ColorBlindDivergingKeepsSignAndSizeForDichromats) {
  for (bool protan : {false, true}) {
    const Vec3 lo = simulate(colormap(0, true, Palette::ColorBlind), protan);
    const Vec3 hi = simulate(colormap(1, true, Palette::ColorBlind), protan);
    const Vec3 mid = simulate(colormap(0.5f, true, Palette::ColorBlind), protan);
    EXPECT_GT(distance(lo, hi), 0.2) << protan;  // the two signs look different
    EXPECT_GT(lo[2], hi[2] + 0.1) << protan;     // negative is the blue(-purple) arm, positive has no blue
    // Each arm moves away from zero's colour as |value| grows.
    double prev_neg = 0, prev_pos = 0;
    for (int i = 1; i <= 10; ++i) {
      const float d = 0.05f * i;
      const double neg = distance(simulate(colormap(0.5f - d, true, Palette::ColorBlind), protan), mid);
      const double pos = distance(simulate(colormap(0.5f + d, true, Palette::ColorBlind), protan), mid);
      EXPECT_GT(neg, prev_neg) << protan << " " << d;
      EXPECT_GT(pos, prev_pos) << protan << " " << d;
      prev_neg = neg, prev_pos = pos;
    }
  }
}

TEST(Palette, RedAndGreenOfTheStandardMapWouldMergeButThePaletteHasNone) {
  // The test's simulation is sharp enough to see the problem it guards against: pure red and a
  // green of the same lightness look alike to a deuteranope.
  EXPECT_LT(distance(simulate({200, 60, 40}, false), simulate({110, 120, 40}, false)), 0.05);
  // The colour-blind arms never pair such colours: at every |value| the two arms differ.
  for (int i = 1; i <= 10; ++i) {
    const float d = 0.05f * i;
    EXPECT_GT(distance(simulate(colormap(0.5f - d, true, Palette::ColorBlind), false),
                       simulate(colormap(0.5f + d, true, Palette::ColorBlind), false)),
              0.15)
        << d;
  }
}

TEST(Palette, CividisLightnessRisesMonotonically) {
  double prev = -1;
  for (int i = 0; i <= 40; ++i) {
    const double y = luminance(colormap(i / 40.0f, false, Palette::ColorBlind));
    EXPECT_GT(y, prev) << i;
    prev = y;
  }
  EXPECT_GT(prev, 0.7);                                                // light yellow at the top
  EXPECT_LT(luminance(colormap(0, false, Palette::ColorBlind)), 0.03);  // dark blue at the bottom
}

}  // namespace test_session_palette
