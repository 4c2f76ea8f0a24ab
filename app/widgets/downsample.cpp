#include "app/widgets/downsample.hpp"

#include <algorithm>
#include <cmath>

namespace sf {

AxisReduction reduce_axis(int n, int max_texels) {
  AxisReduction a;
  a.n = std::max(0, n);
  const int cap = std::max(1, max_texels);
  a.factor = std::max(1, (a.n + cap - 1) / cap);
  a.texels = (a.n + a.factor - 1) / a.factor;
  return a;
}

Downsampled downsample(const MatView& m, const MatWindow& w, int max_rows, int max_cols) {
  Downsampled d;
  d.rows = reduce_axis(w.rows(), max_rows);
  d.cols = reduce_axis(w.cols(), max_cols);
  d.m.resize(d.rows.texels, d.cols.texels);  // (texel rows, texel columns)
  for (int j = 0; j < d.cols.texels; ++j) {
    const int c_begin = w.c0 + j * d.cols.factor, c_end = std::min(c_begin + d.cols.factor, w.c1);
    for (int i = 0; i < d.rows.texels; ++i) {
      const int r_begin = w.r0 + i * d.rows.factor, r_end = std::min(r_begin + d.rows.factor, w.r1);
      float best = m(r_begin, c_begin);
      for (int c = c_begin; c < c_end && !std::isnan(best); ++c)
        for (int r = r_begin; r < r_end; ++r) {
          const float x = m(r, c);
          if (std::isnan(x)) {
            best = x;
            break;
          }
          if (std::abs(x) > std::abs(best)) best = x;
        }
      d.m(i, j) = best;
    }
  }
  return d;
}

namespace {

std::string side(const AxisReduction& a, const char* what) {
  return std::to_string(a.n) + " " + what + " shown as " + std::to_string(a.texels);
}

}  // namespace

std::string downsample_caption(const AxisReduction& rows, const AxisReduction& cols) {
  if (rows.factor == 1 && cols.factor == 1) return "";
  std::string s, block;
  if (rows.factor > 1) {
    s = side(rows, "rows");
    block = std::to_string(rows.factor) + " rows";
  }
  if (cols.factor > 1) {
    s += (s.empty() ? "" : ", ") + side(cols, "columns");
    block += (block.empty() ? "" : " × ") + std::to_string(cols.factor) + " columns";
  }
  return s + ", each pixel the largest |value| of " + block;
}

namespace {

// One side of a zoom: the new [lo, hi) about `at`, within [0, n), at least kMinZoom entries
// (a side with fewer, such as P's ℓ columns, stays whole).
constexpr int kMinZoom = 32;
void zoom_side(int& lo, int& hi, int n, double factor, double at) {
  const double len = std::clamp((hi - lo) * factor, static_cast<double>(std::min(n, kMinZoom)), static_cast<double>(n));
  const double frac = hi > lo ? (at - lo) / (hi - lo) : 0.5;
  double a = at - frac * len;
  a = std::clamp(a, 0.0, n - len);
  lo = static_cast<int>(std::lround(a));
  hi = std::min(n, lo + std::max(1, static_cast<int>(std::lround(len))));
}

void pan_side(int& lo, int& hi, int n, int d) {
  const int len = hi - lo;
  lo = std::clamp(lo + d, 0, std::max(0, n - len));
  hi = lo + len;
}

}  // namespace

MatWindow zoom_window(const MatWindow& w, int rows, int cols, double factor, double row, double col) {
  MatWindow z = w;
  zoom_side(z.r0, z.r1, rows, factor, row);
  zoom_side(z.c0, z.c1, cols, factor, col);
  return z;
}

MatWindow pan_window(const MatWindow& w, int rows, int cols, int d_rows, int d_cols) {
  MatWindow p = w;
  pan_side(p.r0, p.r1, rows, d_rows);
  pan_side(p.c0, p.c1, cols, d_cols);
  return p;
}

}  // namespace sf
