// An exported heatmap figure, laid out once and drawn twice: as PNG pixels (figure_png.hpp) and
// as SVG (figure_svg.hpp). It has what the on-screen heatmap has: the cells in the same colours
// (colormap.hpp, the palette in use) on the same scale (diverging ±max|x| for signed data,
// sequential [0, max] otherwise, masks on [0, 1]), axis titles, 1-based index labels and token
// labels, the colour legend with its range and swatches for −∞ / +∞ / NaN when present, and a
// caption in the paper's notation. A matrix with more cells than the figure can draw is reduced
// as on screen (downsample.hpp: each cell the largest |value| of its block) and the caption says
// so. No ImGui, no GL: headless tests render and check figures.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "app/widgets/colormap.hpp"
#include "app/widgets/downsample.hpp"
#include "app/widgets/token_image.hpp"

namespace sf {

enum class FigureScaleKind { Auto, Diverging, Sequential };

struct FigureAxis {
  std::string title;                // "t_z (keys)"; empty: "rows" / "columns"
  std::vector<std::string> labels;  // one per index (token pieces); empty: numbers only
  std::vector<TokenImage> images;   // one per index, drawn in place of its label where not empty (HeatmapAxis's)
};

// What to draw (the exported twin of the heatmap's HeatmapOptions).
struct FigureSpec {
  std::string value_name;  // "P"
  std::string caption;     // "softmax(S/√d_attn), layer 2, head 3, Algorithm 4 line 6, prompt 'hello='"
  FigureAxis rows, cols;
  FigureScaleKind scale = FigureScaleKind::Auto;
  float lo = NAN, hi = NAN;  // the range; NaN: from the data
  Palette palette = Palette::Standard;
  // The most cells drawn per side (beyond: reduced); the SVG writes one element per cell.
  int max_rows = 720, max_cols = 960;
};

// The colour scale resolved for a matrix, as the heatmap resolves it.
struct FigureScale {
  bool diverging = false;
  float lo = 0, hi = 1;
  long neg_inf = 0, pos_inf = 0, nan = 0;
  Palette palette = Palette::Standard;
  Rgb8 color_at(float t) const { return colormap(t, diverging, palette); }
  Rgb8 color(float x) const;
};
FigureScale figure_scale(const MatView& m, const FigureSpec& spec);

struct FigRect {
  float x = 0, y = 0, w = 0, h = 0;
  bool contains(float px, float py) const { return px >= x && py >= y && px < x + w && py < y + h; }
};

// A cell: where, its colour, and which entry (0-based in the matrix drawn: the reduced one when
// `reduced`) it shows.
struct FigCell {
  FigRect r;
  Rgb8 fill;
  bool hatched = false;  // ±∞
  int row = 0, col = 0;
  float value = 0;
};

struct FigText {
  std::string s;
  float x = 0, y = 0;  // top-left of the line (for vertical text: bottom-left, read upwards)
  float px = 14;
  Rgb8 color;
  bool vertical = false;
  const char* role = "label";  // "title", "index", "label", "legend", "caption" (SVG class)
};

struct Figure {
  int w = 0, h = 0;
  std::vector<FigCell> cells;
  int rows = 0, cols = 0;        // cells per side
  bool reduced = false;          // the cells show a reduction of the matrix
  FigRect grid;                  // all cells
  FigRect legend_bar;            // the colour gradient, color_at(0) at its left end, color_at(1) at its right
  std::vector<FigCell> swatches; // −∞ / +∞ / NaN in the legend
  std::vector<FigCell> label_pixels;  // token images in place of labels, one square per image pixel (row, col, its grey)
  std::vector<FigRect> label_frames;  // around each token image, 1 pixel outside it (a white pixel meets the paper)
  FigRect caption_band;          // the caption lines
  std::vector<FigText> texts;
  FigureScale scale;
  std::string value_name;
};

// Lays out the figure of m (throws sf::Error when the font is missing or m is empty).
Figure layout_figure(const MatView& m, const FigureSpec& spec);

// The figure's colours besides the cells (white paper, dark ink).
inline constexpr Rgb8 kFigureBackground{255, 255, 255};
inline constexpr Rgb8 kFigureInk{25, 25, 30};
inline constexpr Rgb8 kFigureDim{95, 95, 105};

}  // namespace sf
