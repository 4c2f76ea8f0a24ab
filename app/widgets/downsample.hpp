// Drawing a matrix larger than the screen or the GL texture limit (GPT-2's W_e is 768×50257,
// its P 50257×ℓ): a window of the matrix reduced to at most so many texels per side, each texel
// the entry of largest |value| in its block of rows × columns (so that a single large weight, a
// peak of P or a −∞ mask entry stays visible). Pure functions, no GL: tests check them headless.
#pragma once
#include <string>

#include <Eigen/Core>

#include "core/model/types.hpp"

namespace sf {

// A read-only matrix of any strides: a MatF, or a trace value (a copy, or a view into θ that may
// be a transposed one) without copying it.
using MatView = Eigen::Ref<const MatF, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

// Rows [r0, r1) and columns [c0, c1) of a matrix (0-based, half-open).
struct MatWindow {
  int r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  int rows() const { return r1 - r0; }
  int cols() const { return c1 - c0; }
  bool operator==(const MatWindow&) const = default;
};
// The whole of a rows × cols matrix.
inline MatWindow whole(int rows, int cols) { return {0, rows, 0, cols}; }

// How one side of a window maps to texels: `n` source indices drawn as `texels` texels, texel i
// covering source indices [first + i·factor, min(first + (i+1)·factor, first + n)).
struct AxisReduction {
  int n = 0, texels = 0, factor = 1;
};
// factor = ⌈n / max_texels⌉ (1 when it fits), texels = ⌈n / factor⌉.
AxisReduction reduce_axis(int n, int max_texels);

// The window of m reduced to at most max_rows × max_cols entries: each the entry of largest
// |value| in its block (−∞ counts as the largest; a NaN in the block makes it NaN).
struct Downsampled {
  MatF m;              // (rows.texels, cols.texels)
  AxisReduction rows, cols;
  bool reduced() const { return rows.factor > 1 || cols.factor > 1; }
};
Downsampled downsample(const MatView& m, const MatWindow& w, int max_rows, int max_cols);

// What the heatmap writes under a reduced matrix, e.g. "50257 rows shown as 3866, each pixel the
// largest |value| of 13 rows"; "" when nothing is reduced.
std::string downsample_caption(const AxisReduction& rows, const AxisReduction& cols);

// Zooming the window by `factor` (< 1: in) about the source position (row, col), kept inside
// the rows × cols matrix and at least 32 entries (or the whole side, if shorter) on each side.
MatWindow zoom_window(const MatWindow& w, int rows, int cols, double factor, double row, double col);
MatWindow pan_window(const MatWindow& w, int rows, int cols, int d_rows, int d_cols);

}  // namespace sf
