// The heatmap's text decisions (app/widgets/heatmap_labels.hpp), headless: the legend's numbers
// and the thinning of crowded axes.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "app/widgets/heatmap_labels.hpp"

namespace test_session_heatmap_labels {

namespace {

using sf::legend_ends;
using sf::thinned_labels;

TEST(HeatmapLegend, EndsAreWrittenInFull) {
  // The numbers issue 21 saw cut ("0." and "33.!"), and their mirror images.
  EXPECT_EQ(legend_ends(0.0124f, 33.5f).lo, "0.0124");
  EXPECT_EQ(legend_ends(0.0124f, 33.5f).hi, "33.5");
  EXPECT_EQ(legend_ends(-33.5f, 33.5f).lo, "-33.5");
  // Tiny and large ends: an exponent, and a whole number with all its digits.
  EXPECT_EQ(legend_ends(-1e-7f, 1e-7f).lo, "-1e-07");
  EXPECT_EQ(legend_ends(-1e-7f, 1e-7f).hi, "1e-07");
  EXPECT_EQ(legend_ends(0.0f, 1234567.0f).lo, "0");
  EXPECT_EQ(legend_ends(0.0f, 1234567.0f).hi, "1234567");
  EXPECT_EQ(legend_ends(-0.0f, 1.0f).lo, "0");  // never "-0"
  // A probability scale.
  EXPECT_EQ(legend_ends(0.0f, 1.0f).lo, "0");
  EXPECT_EQ(legend_ends(0.0f, 1.0f).hi, "1");
}

TEST(HeatmapLegend, EqualEndsReadTheSame) {
  EXPECT_EQ(legend_ends(0.5f, 0.5f).lo, "0.5");
  EXPECT_EQ(legend_ends(0.5f, 0.5f).hi, "0.5");
  EXPECT_EQ(legend_ends(2.0f / 3.0f, 2.0f / 3.0f).lo, "0.667");
}

TEST(HeatmapLegend, CloseEndsGetTheDigitsThatTellThemApart) {
  // Three significant digits read "0.123" twice; four tell them apart.
  EXPECT_EQ(legend_ends(0.12341f, 0.12349f).lo, "0.1234");
  EXPECT_EQ(legend_ends(0.12341f, 0.12349f).hi, "0.1235");
  // Neighbouring floats: 1 and 1 + 2⁻²³ = 1.00000012 first differ at 8 digits.
  const sf::LegendEnds e = legend_ends(1.0f, std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(e.lo, "1");
  EXPECT_EQ(e.hi, "1.0000001");
}

TEST(HeatmapAxis, LabelsThatFitAreAllDrawn) {
  EXPECT_EQ(sf::label_step(20.0f, 14.45f), 1);
  EXPECT_EQ(sf::label_step(20.0f, 20.0f), 1);  // exactly a cell apart still fits
  EXPECT_EQ(thinned_labels(7, 1), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(HeatmapAxis, TooManyLabelsAreThinnedEvenlyKeepingFirstAndLast) {
  // 15 rows 5 px apart, a label 14.45 px high: every 3rd at least.
  const int step = sf::label_step(5.0f, 14.45f);
  EXPECT_EQ(step, 3);
  const std::vector<int> shown = thinned_labels(15, step);
  EXPECT_EQ(shown, (std::vector<int>{0, 4, 7, 11, 14}));
  for (size_t i = 1; i < shown.size(); ++i) EXPECT_GE(shown[i] - shown[i - 1], step) << "labels would overlap";
  // Where step divides n − 1 the spacing is exact.
  EXPECT_EQ(thinned_labels(9, 4), (std::vector<int>{0, 4, 8}));
  // Too long an axis for two labels: the first alone.
  EXPECT_EQ(thinned_labels(3, 5), (std::vector<int>{0}));
  EXPECT_TRUE(thinned_labels(0, 1).empty());
}

}  // namespace

}  // namespace test_session_heatmap_labels
