// The heatmap's text decisions that need no ImGui (tested headless): how a number and the colour
// scale's two ends are written, and which labels of a crowded axis are drawn.
#pragma once
#include <string>
#include <vector>

namespace sf {

// The shortest decimal that reads back as exactly x ("0.8", "-1.2345678"); "−∞", "+∞", "NaN".
std::string exact_number(float x);

// The colour scale's ends as the legend writes them: whole numbers below 10⁷ in full
// ("1234567"), others with 3 significant digits, or as many more as it takes to tell two
// different ends apart (0.12341 and 0.12349 read "0.1234" and "0.1235"); never cut.
struct LegendEnds {
  std::string lo, hi;
};
LegendEnds legend_ends(float lo, float hi);

// Every how many'th label of an axis is drawn so that labels `label_px` long (along the axis,
// gap included) do not overlap on cells `cell_px` apart: 1 where every label fits.
int label_step(float cell_px, float label_px);
// The indices (0-based) of n labels drawn at least `step` apart: all of them for step 1, else
// evenly spread with the first and the last always kept.
std::vector<int> thinned_labels(int n, int step);

}  // namespace sf
