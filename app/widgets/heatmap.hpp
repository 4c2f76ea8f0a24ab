// A heatmap for any matrix, as one ImGui layout item.
//
// Colours: a diverging map centred on 0 (blue, grey, red: Moreland's cool-warm) for signed
// data, a sequential one (viridis) for non-negative data such as probabilities and masks.
// Both read on the dark and the light theme. −∞ cells are dark grey and hatched (with "−∞"
// written in them where they are large enough), +∞ the same with "+∞", NaN magenta.
// Full mode adds axis titles, 1-based index labels (token characters on token axes) and a
// colour-scale legend; thumbnail mode draws the cells alone. Hovering a cell shows its exact
// value and its 1-based indices. Matrices over 128 in either dimension, or whose cells would
// be under 2 px, are drawn from an RGBA8 texture (GL_NEAREST) re-uploaded only when the
// matrix or the view changes; smaller ones are drawn cell by cell. A matrix with more entries
// than pixels (or than the GL texture limit) is reduced first (downsample.hpp: each pixel the
// largest |value| of its block), and the heatmap says so under it. Given a zoom window, the
// mouse wheel zooms about the pointer, dragging pans and a double-click shows the whole; a
// window small enough is drawn at full resolution. Token labels that do not fit across a column
// are turned to read upwards, and where even then they would overlap, every k-th is drawn
// (first and last kept); long ones are cut with "…". Hovering a label names it in full. An axis may
// carry small images in place of its labels (a vision transformer's patches), framed, each image
// pixel a square of whole screen pixels.
// The parts (layout, cells, axes, legend, tooltip, textures) are in heatmap_*.cpp; each heatmap
// drawn is recorded for --dump-state (heatmap_report.hpp).
#pragma once
#include <cmath>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/widgets/downsample.hpp"
#include "app/widgets/heatmap_labels.hpp"  // exact_number, legend_ends
#include "app/widgets/heatmap_region.hpp"
#include "app/widgets/token_image.hpp"
#include "core/trace/trace.hpp"
#include "imgui.h"

namespace sf {

// The entries of a matrix by kind, and min / max / Σx / Σx² over the finite ones
// (the colour scale and the tensor view's statistics both start from this).
struct EntryCounts {
  long finite = 0, neg_inf = 0, pos_inf = 0, nan = 0;
  double min = INFINITY, max = -INFINITY, sum = 0, sum2 = 0;
};
EntryCounts count_entries(const MatView& m);
// FNV-1a over the entries (evenly spaced samples past 65536 of them), to tell when a matrix at
// the same address has new contents.
uint64_t content_hash(const MatView& m);


struct Fonts;
class App;

enum class ColorScale { Auto, Diverging, Sequential };


struct HeatmapAxis {
  std::string title;                // paper notation, e.g. "t_z (keys)"; empty: no title
  std::string index;                // the index's name in the tooltip ("t_z", "token id"); empty: "row"/"column"
  std::vector<std::string> labels;  // one per index (token characters); empty: numbers only
  // One per index, drawn in place of its label where not empty (a vision transformer's patches, in
  // grey); the label stays for the tooltip, the state dump, an index without an image and exports.
  std::vector<TokenImage> images;
};

struct HeatmapOptions {
  std::string value_name;  // the tooltip says "S[3, 5] = …"
  HeatmapAxis rows, cols;
  // Auto: sequential when no finite entry is negative and some are positive, else diverging
  // (an all-zero matrix is then the neutral grey of 0).
  ColorScale scale = ColorScale::Auto;
  // The colour range; NaN takes it from the data (diverging: ±max|x|, sequential: [0, max]).
  float lo = NAN, hi = NAN;
  bool thumbnail = false;                          // cells only: no titles, labels or legend (the tooltip stays)
  bool cell_values = false;                        // write each value in its cell where it fits (0/1 for masks)
  float max_width = 0;                             // 0: the available width
  float max_height = 0;                            // 0: the available height (at least a few lines)
  // max_height is a hard limit (a view that must show all of it): the cells give up the height of
  // a legend longer than one line, and where the labels and legend leave them less than the usual
  // floor (two lines), they shrink below it, to half a line.
  bool fit_height = false;
  int mark_row = -1, mark_col = -1;                // outline this cell (0-based), e.g. one hovered in a linked view
  ImU32 frame_color = 0;                           // a frame around the cells (a selected thumbnail); 0: none
  std::function<void(int row, int col)> on_click;  // a cell was clicked (0-based)
  // The part of the matrix shown, kept by the caller between frames; the wheel, dragging and
  // a double-click change it. nullptr: the whole matrix, no zoom.
  MatWindow* zoom = nullptr;
  // Blocks of cells framed in a bright colour (region_color; 0: amber): the cells a hovered
  // value was computed from, or the cells an experiment changed.
  std::vector<CellRegion> regions;
  ImU32 region_color = 0;
  // What a NaN cell stands for where NaN means "no value yet" rather than an error (Algorithm 4-F's
  // blocks not computed yet: "not computed yet"): such cells are grey, not NaN's magenta, and the
  // tooltip and the legend's swatch say this. Empty: NaN, in magenta.
  std::string nan_label;
  // Where the matrix comes from, for the right-click menu (export, experiments): the traced value
  // and the event it is shown at (heatmap_options sets them; SIZE_MAX / nullptr: not a traced
  // value), and a caption in the paper's notation for figures, e.g. "softmax(S/√d_attn), layer 2,
  // head 3, prompt 'hello='".
  const Value* value = nullptr;
  size_t event = SIZE_MAX;
  std::string caption;
};

// The hovered cell (0-based), if any.
struct HeatmapHover {
  bool hovered = false;
  int row = -1, col = -1;
  std::string caption;  // what was written under the cells (the reduction, the zoom), "" if nothing
  ImVec4 cells;         // the cells' rectangle on screen (x, y, w, h)
};

// A right-click on a heatmap: the matrix (a shared copy of the traced value, or a copy of the
// matrix), its options (without callbacks) and the cell under the pointer (−1: none). App::draw
// opens the heatmap menu from it (app/heatmap_menu.cpp) and clears it.
struct HeatmapMenuRequest {
  Value value;
  HeatmapOptions opt;
  int row = -1, col = -1;
  MatWindow window;  // the part that was shown
};
std::optional<HeatmapMenuRequest>& heatmap_menu_request();

HeatmapHover heatmap(const char* id, const MatView& m, const Fonts& fonts, const HeatmapOptions& opt);

// The height a full heatmap of m drawn with options o (in the width they give) needs for every
// row to be labelled: its titles, label band, rows and legend. A panel that can give it that
// much does; one that cannot gets thinned labels.
float heatmap_height_to_label_rows(const MatView& m, const Fonts& f, HeatmapOptions o);

// `s` cut to at most max_w pixels in `font`, ending in "…" when cut (whole UTF-8 characters).
std::string fit_text(const ImFont* font, const std::string& s, float max_w);

// The labels of a token axis of n tokens: the tokenizer's text of `tokens` (when it has n), or for a
// model that reads an image (a vision transformer, not in the paper) "CLS" and the patches, each
// patch with its pixels as the image drawn in place of its label.
void label_token_axis(const App& app, const Tokens* tokens, Eigen::Index n, HeatmapAxis& ax);
// Options for a traced value shown at event k: axis titles and labels from its Axis kinds
// (token characters from the sequence at k, vocabulary labels for ids 1…N_V), masks as 0/1.
HeatmapOptions heatmap_options(const App& app, size_t k, const Value& v);
// The colour scale of traced value v shown at event k, the same in every view of it (a Variables
// thumbnail, the Tensor view, the Attention tab, a figure): masks and matrices whose columns are
// probability distributions (softmax(S/√d_attn), P) on [0, 1], so that a near-uniform softmax
// over 15 keys is the same dark colour everywhere; Algorithm 4's S before and after masking on
// ±max|S| of line 4; any other value by its data (Auto). heatmap_options applies it.
void apply_value_scale(const Trace& t, size_t k, const Value& v, HeatmapOptions& o);
// A figure caption for value v at event k, in the paper's notation: the value, the layer and head
// in force, the algorithm and line, and the prompt ("softmax(S/√d_attn), layer 2, head 3,
// Algorithm 4 line 6, prompt 'hello='").
std::string value_caption(const App& app, size_t k, const Value& v);

// A heatmap's texture is freed once no heatmap has drawn it for this many frames.
inline constexpr int kHeatmapTextureLifeFrames = 120;

}  // namespace sf
