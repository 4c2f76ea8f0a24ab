// heatmap()'s parts (app/widgets/heatmap*.cpp), internal to the widget: its colour scale, the
// texture cache of large matrices, its layout, and the functions that draw the cells, the axes,
// the legend and the tooltip. heatmap.cpp puts them together.
#pragma once
#include <glad/gl.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "app/widgets/colormap.hpp"
#include "app/widgets/heatmap.hpp"

namespace sf {

namespace heatmap_detail {

inline ImU32 to_imu32(Rgb8 c) { return IM_COL32(c.r, c.g, c.b, 255); }
inline ImU32 inf_color() { return to_imu32(infinity_color()); }
inline ImU32 hatch_ink() { return to_imu32(hatch_color()); }
inline ImU32 nan_ink() { return to_imu32(nan_color()); }

float text_w(const ImFont* font, const std::string& s);

// --- colour scale (heatmap_scale.cpp) ---------------------------------------------------------

// The resolved colour scale and the counts of the cells it cannot colour.
struct Scale {
  bool diverging = false;
  float lo = 0, hi = 1;
  int neg_inf = 0, pos_inf = 0, nan = 0;
  std::string nan_label;  // HeatmapOptions::nan_label: NaN is "no value yet", drawn grey

  ImU32 nan_cell() const { return nan_label.empty() ? nan_ink() : ImGui::GetColorU32(ImGuiCol_TextDisabled, 0.45f); }

  ImU32 color_at(float t) const { return to_imu32(colormap(t, diverging, heatmap_palette())); }
  ImU32 color(float x) const {
    if (std::isnan(x)) return nan_cell();
    if (std::isinf(x)) return inf_color();
    return color_at(hi > lo ? (x - lo) / (hi - lo) : 0.5f);
  }
};
// The options' scale made concrete for m (the exported figures' rule, figure_layout.hpp).
Scale resolve_scale(const MatView& m, const HeatmapOptions& o);

// --- textures for large matrices (heatmap_texture.cpp) ----------------------------------------

struct CachedTexture {
  // Which matrix (its storage and strides: a view of Wᵀ reads W's storage), which colour request
  // and which kind of view (a thumbnail and the tensor view of one matrix differ).
  const float* data = nullptr;
  Eigen::Index rows = 0, cols = 0, outer = 0, inner = 0;
  ColorScale requested = ColorScale::Auto;
  float req_lo = NAN, req_hi = NAN;
  bool thumbnail = false;
  Palette palette = Palette::Standard;
  // What the texture holds now.
  uint64_t hash = 0;
  MatWindow window;
  int max_rows = 0, max_cols = 0;
  AxisReduction red_rows, red_cols;
  Scale scale;
  GLuint tex = 0;
  int last_frame = 0;
};
// The window `w` of m reduced to at most max_rows × max_cols texels (each the largest |value| of
// its block), coloured by the scale of the whole matrix; uploaded again only when they change.
const CachedTexture& texture_for(const MatView& m, const HeatmapOptions& o, const MatWindow& w, int max_rows,
                                 int max_cols);
// The largest texture side GL allows (queried once).
int max_texture_side();

// Matrices up to this size in both dimensions may be drawn cell by cell (else from a texture).
constexpr int kMaxCellByCell = 128;

// --- layout (heatmap_layout.cpp) ----------------------------------------------------------------

// Where everything of one heatmap goes. Lengths in pixels; p0 is the item's top-left corner,
// (gx, gy) the cells' top-left corner.
struct Layout {
  MatWindow win;            // the part of the matrix shown
  int R = 0, C = 0;         // its rows and columns
  int R_all = 0, C_all = 0;  // the matrix's
  bool zoomed = false, full = true;
  const ImFont* big = nullptr;
  const ImFont* small = nullptr;
  float F = 0, Fs = 0, gap = 0;
  float avail_w = 0;  // the width the heatmap may take
  ImVec2 p0;
  // Row labels: the 1-based index right-aligned in row_idx_w, then the token label in row_chr_w.
  bool row_chars = false;
  float row_idx_w = 0, row_chr_w = 0, row_w = 0;
  int row_step = 1;  // every row_step'th row is labelled (thinned_labels)
  // Column labels: the axis titles (title_h), then the token labels (col_chr_h: one line, or,
  // when some do not fit across a column (col_rotated), those turned to read upwards), then the
  // indices.
  bool col_chars = false, col_rotated = false;
  float title_h = 0, col_chr_h = 0, col_h = 0;
  float col_chr_w = 0;  // the widest (cut) token label
  const ImFont* col_font = nullptr;  // the token labels' font (big, or small where only that fits across)
  float col_F = 0;                   // its size
  int col_step = 1, num_step = 1;
  float cell_w = 0, cell_h = 0, gw = 0, gh = 0, gx = 0, gy = 0;
  // Token images in place of labels (HeatmapAxis::images): each image pixel img_px × img_px screen
  // pixels (0: no images), in a frame of kImageFrame; the tallest image on each axis, frame included.
  bool row_images = false, col_images = false;
  float img_px = 0;
  float row_img_h = 0, col_img_h = 0;

  // An image's size on screen, frame excluded.
  ImVec2 image_size(const TokenImage& im) const {
    return ImVec2(static_cast<float>(im.w) * img_px, static_cast<float>(im.h) * img_px);
  }

  // The cell (0-based, within the window) under a point, or −1.
  int col_at(float x) const;
  int row_at(float y) const;
};
// The frame around a token image, outside its pixels (a black patch still shows on the dark theme).
constexpr float kImageFrame = 1.0f;
// The screen pixels per image pixel for token images whose longer side is `side` pixels: about a
// line and a quarter of text in all, at least 2 per pixel so that the pixels read as squares.
inline float token_image_px(float F, int side) {
  return side > 0 ? std::max(2.0f, std::round(F * 1.25f / static_cast<float>(side))) : 0.0f;
}
// Token labels are cut to a few characters' width (GPT-2's pieces can be long words).
inline float max_row_label(float F) { return F * 6.0f; }
inline float max_col_label(float F) { return F * 4.0f; }
Layout layout_heatmap(const MatWindow& win, int R_all, int C_all, const Fonts& f, const HeatmapOptions& o);

// --- legend (heatmap_legend.cpp) ----------------------------------------------------------------

// The legend: lo, the colour bar, hi on one line (or the bar, then the ends), then swatches for the cells the scale cannot
// colour (on a second line where one is too narrow), then the reduction or zoom caption.
struct Legend {
  LegendEnds ends;
  float x0 = 0;          // where it starts, from the item's left edge
  bool stacked = false;  // the ends on a line under the bar (a narrow heatmap)
  float lo_w = 0, hi_w = 0, bar_w = 0, bar_h = 0;
  std::vector<std::pair<bool, std::string>> swatches;  // (hatched, text)
  bool wrap_swatches = false;
  float w = 0, h = 0;  // its extent, from the item's left edge
  std::string caption;
  // Where lo and hi were written (x, y, w, h; set by draw_legend).
  ImVec4 lo_rect, hi_rect;
};
Legend layout_legend(const Layout& L, const Scale& sc, std::string caption);
// The height of the legend's line (the ends and the bar), a little over a line of text.
inline float legend_line_h(float F) { return std::round(F * 1.6f); }
void draw_legend(ImDrawList* dl, const Layout& L, const Scale& sc, Legend& lg);

// --- cells, axes, tooltip (heatmap_cells.cpp, heatmap_axes.cpp, heatmap_tooltip.cpp) -----------

void draw_cells(ImDrawList* dl, const MatView& m, const Layout& L, const Scale& sc, const CachedTexture* tex,
                const HeatmapOptions& o);
// The selected frame, the marked and hovered cells' outlines, and the framed regions.
void draw_marks(ImDrawList* dl, const Layout& L, const HeatmapOptions& o, const HeatmapHover& hover);
// The token labels drawn, one per row and column shown ("" where thinned out; none without labels).
struct AxisLabels {
  std::vector<std::string> rows, cols;
  // Where token images were drawn in their place (x, y, w, h, frame excluded; all 0 where none).
  std::vector<ImVec4> row_images, col_images;
};
AxisLabels draw_axes(ImDrawList* dl, const Layout& L, const Fonts& f, const HeatmapOptions& o);
// Over an axis label: its full name in a tooltip; returns whether the pointer was on one.
bool axis_label_tooltip(const Layout& L, const Fonts& f, const HeatmapOptions& o, ImVec2 mouse);
void cell_tooltip(const MatView& m, const Layout& L, const Fonts& f, const HeatmapOptions& o, const HeatmapHover& hv,
                  const CachedTexture* tex);
// "t_z = 3" (paper notation) then " “l”" in plain text, on one tooltip line.
void axis_line(const Fonts& f, const HeatmapAxis& ax, bool is_row, int i);

}  // namespace heatmap_detail

}  // namespace sf
