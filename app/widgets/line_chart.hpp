// A line chart drawn on the window's draw list (the Training tab's loss and accuracy curves):
// axes with tick labels thinned to the room they have, optional log-y, EMA smoothing, min/max
// decimation per pixel column, an optional target line (the 95% of the accuracy chart), and a
// hover crosshair with a tooltip.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "core/training/training.hpp"
#include "imgui.h"

namespace sf {

struct ChartSeries {
  const std::vector<LossPoint>* pts;
  ImU32 color;
  const char* name;
};

// Axis ranges a chart is held to (NaN: the data's), so that two charts share their x axis; and a
// horizontal target line (NaN: none) with its label.
struct ChartRange {
  double x0 = NAN, x1 = NAN, y0 = NAN, y1 = NAN;
  double target = NAN;
  std::string target_label;
  const char* empty = "no losses yet: press Play or one update";
};

// What a chart drew, in screen pixels (for --dump-state and the GUI tests).
struct ChartDrawn {
  ImVec4 rect{0, 0, 0, 0};              // the chart (x, y, w, h)
  std::vector<ImVec4> x_ticks;          // each x tick label's box (x, y, w, h), left to right
  std::vector<std::string> x_labels;    // … and its text
  float target_y = NAN;                 // the target line's y (NaN: none drawn)
};

// How many intervals the x axis is cut into: at most `most`, fewer when `labels_px` (the widest
// tick label plus a gap) would not fit `span_px` / intervals; at least 1.
int tick_intervals(float span_px, float labels_px, int most = 4);

ChartDrawn line_chart(const char* id, const std::vector<ChartSeries>& series, ImVec2 size, bool log_y, float ema,
                      bool dark, const ChartRange& range = {});

}  // namespace sf
