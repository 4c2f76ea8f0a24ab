#include "app/widgets/heatmap_labels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/io/export.hpp"

namespace sf {

namespace {

// Whole numbers up to this are written with all their digits (a count, a token id, 1234567).
constexpr float kWholeLimit = 1e7f;

std::string legend_number(float x, int digits) {
  if (!std::isfinite(x)) return exact_number(x);
  char buf[40];
  if (x == std::round(x) && std::abs(x) < kWholeLimit)
    std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(x == 0 ? 0.0f : x));  // no "-0"
  else
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(x));
  return buf;
}

}  // namespace

// The shortest form that reads back as x (the exporters' rule), with the UI's ∞ and NaN.
std::string exact_number(float x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x < 0 ? "−∞" : "+∞";
  return export_number(x);
}

LegendEnds legend_ends(float lo, float hi) {
  // 9 significant digits tell any two different floats apart (FLT_DECIMAL_DIG).
  for (int digits = 3; digits < 9; ++digits) {
    LegendEnds e{legend_number(lo, digits), legend_number(hi, digits)};
    if (lo == hi || e.lo != e.hi) return e;
  }
  return {legend_number(lo, 9), legend_number(hi, 9)};
}

int label_step(float cell_px, float label_px) {
  if (!(cell_px > 0)) return 1;
  return std::max(1, static_cast<int>(std::ceil(label_px / cell_px)));
}

std::vector<int> thinned_labels(int n, int step) {
  std::vector<int> out;
  if (n <= 0) return out;
  step = std::max(step, 1);
  // As many labels as fit `step` apart over the n − 1 gaps, spread evenly: neighbours are
  // (n − 1) / (count − 1) ≥ step cells apart, the first at 0 and the last at n − 1.
  const int count = (n - 1) / step + 1;
  if (count == 1) return {0};
  for (int i = 0; i < count; ++i)
    out.push_back(static_cast<int>(std::lround(static_cast<double>(i) * (n - 1) / (count - 1))));
  return out;
}

}  // namespace sf
