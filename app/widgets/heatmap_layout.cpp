// Where a heatmap's titles, labels and cells go, and how large its cells are.
#include <algorithm>

#include "app/app.hpp"
#include "app/widgets/heatmap_parts.hpp"

namespace sf::heatmap_detail {

namespace {

// A label's extent across the axis it labels: a line of text is about 0.85 F high without
// its leading, so labels that far apart do not touch.
constexpr float kLineFill = 0.85f;
// The largest cell: past this a heatmap stops growing into free space (3 lines of text).
constexpr float kMaxCell = 3.0f;

// Whether an axis of n indices carries token images, one per index (some may be empty: text labels).
bool has_images(const HeatmapAxis& ax, int n) {
  return ax.images.size() == static_cast<size_t>(n) &&
         std::any_of(ax.images.begin(), ax.images.end(), [](const TokenImage& im) { return !im.empty(); });
}

// The longest side of the images on either axis, in image pixels.
int longest_image_side(const HeatmapOptions& o) {
  int side = 0;
  for (const HeatmapAxis* ax : {&o.rows, &o.cols})
    for (const TokenImage& im : ax->images) side = std::max({side, im.w, im.h});
  return side;
}

// The widest of the labels [i0, i1) cut to max_w, an image (with its frame) counting its width;
// max_w when there are too many to measure every frame (a vocabulary axis).
float widest_label(const ImFont* font, const HeatmapAxis& ax, bool images, int i0, int i1, float max_w,
                   const Layout& L) {
  if (i1 - i0 > 1024) return max_w;
  float w = 0;
  for (int i = i0; i < i1; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (images && !ax.images[k].empty())
      w = std::max(w, L.image_size(ax.images[k]).x + 2 * kImageFrame);
    else
      w = std::max(w, text_w(font, fit_text(font, ax.labels[k], max_w)));
  }
  return w;
}

// The tallest image of [i0, i1) with its frame, 0 without images.
float tallest_image(const HeatmapAxis& ax, bool images, int i0, int i1, const Layout& L) {
  float h = 0;
  if (!images) return h;
  for (int i = i0; i < i1; ++i)
    if (!ax.images[static_cast<size_t>(i)].empty())
      h = std::max(h, L.image_size(ax.images[static_cast<size_t>(i)]).y + 2 * kImageFrame);
  return h;
}

// The cells' size in a full heatmap given the room for them: square where it fits; a very tall
// or wide matrix gets cells stretched up to a label's size along its short side, so that its
// columns (or rows) stay readable. The cells are at least min_h high in all.
void size_full_cells(Layout& L, float W, float H, float min_h) {
  const float cw = std::max(W - L.row_w, L.F) / static_cast<float>(L.C);
  const float ch = std::max(H, min_h) / static_cast<float>(L.R);
  const float c = std::min({cw, ch, L.F * kMaxCell});
  L.cell_w = std::max(c, std::min(cw, L.F * 1.5f));
  L.cell_h = std::max(c, std::min(ch, L.F * 1.5f));
}

void size_thumbnail_cells(Layout& L, const HeatmapOptions& o, float avail_w) {
  const float W = o.max_width > 0 ? o.max_width : std::min(avail_w, 96.0f);
  const float H = o.max_height > 0 ? o.max_height : 48.0f;
  const float R = static_cast<float>(L.R), C = static_cast<float>(L.C);
  const float h = std::clamp(W * R / C, std::min(12.0f, H), H);
  const float w = std::clamp(h * C / R, std::min(16.0f, W), W);
  L.cell_w = w / C;
  L.cell_h = h / R;
}

}  // namespace

int Layout::col_at(float x) const {
  const int c = static_cast<int>(std::floor((x - gx) / cell_w));
  return c >= 0 && c < C ? c : -1;
}
int Layout::row_at(float y) const {
  const int r = static_cast<int>(std::floor((y - gy) / cell_h));
  return r >= 0 && r < R ? r : -1;
}

namespace {

// The layout with token images of at most max_img_px screen pixels per image pixel (0: no limit).
Layout layout_with(const MatWindow& win, int R_all, int C_all, const Fonts& f, const HeatmapOptions& o,
                   float max_img_px) {
  Layout L;
  L.win = win;
  L.R = win.rows();
  L.C = win.cols();
  L.R_all = R_all;
  L.C_all = C_all;
  L.zoomed = win != whole(R_all, C_all);
  L.full = !o.thumbnail;
  L.big = f.text;
  L.small = f.small;
  L.F = L.big->FontSize;
  L.Fs = L.small->FontSize;
  L.gap = std::round(L.F * 0.3f);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  L.avail_w = o.max_width > 0 ? o.max_width : avail.x;
  L.p0 = ImGui::GetCursorScreenPos();
  if (!L.full) {
    size_thumbnail_cells(L, o, avail.x);
  } else {
    const float F = L.F, gap = L.gap;
    L.row_chars = o.rows.labels.size() == static_cast<size_t>(R_all);
    L.col_chars = o.cols.labels.size() == static_cast<size_t>(C_all);
    L.row_images = L.row_chars && has_images(o.rows, R_all);
    L.col_images = L.col_chars && has_images(o.cols, C_all);
    if (L.row_images || L.col_images) {
      L.img_px = token_image_px(F, longest_image_side(o));
      if (max_img_px > 0) L.img_px = std::min(L.img_px, max_img_px);
    }
    L.row_img_h = tallest_image(o.rows, L.row_images, win.r0, win.r1, L);
    L.col_img_h = tallest_image(o.cols, L.col_images, win.c0, win.c1, L);
    if (L.row_chars) L.row_chr_w = widest_label(L.big, o.rows, L.row_images, win.r0, win.r1, max_row_label(F), L);
    L.row_idx_w = text_w(L.small, std::to_string(win.r1));
    L.row_w = L.row_idx_w + gap + (L.row_chars ? L.row_chr_w + gap : 0.0f);
    if (L.col_chars) L.col_chr_w = widest_label(L.big, o.cols, L.col_images, win.c0, win.c1, max_col_label(F), L);
    L.title_h = !o.rows.title.empty() || !o.cols.title.empty() ? std::round(F * 1.35f) : 0.0f;
    // The caption under the legend is there for a zoomed or large matrix (drawn from a texture).
    const bool caption = L.zoomed || L.R > kMaxCellByCell || L.C > kMaxCellByCell;
    const float legend_h = legend_line_h(F), caption_h = caption ? std::round(F * 1.3f) : 0.0f;
    const float W = L.avail_w;
    const float H = o.max_height > 0 ? o.max_height : std::max(avail.y, F * 10.0f);
    // Two lines of cells at least; where the height is a hard limit, half a line (a strip of
    // colour still shows; a tall matrix's rows are then downsampled into it).
    const float min_cells_h = o.fit_height && o.max_height > 0 ? F * 0.5f : F * 2.0f;
    // First with the token labels across the columns; where the widest does not fit across a
    // column, those that do not are turned upwards, which takes the widest's width in height.
    auto size_with = [&](float chr_h) {
      L.col_chr_h = L.col_chars ? std::max(chr_h, L.col_img_h > 0 ? L.col_img_h + gap : 0.0f) : 0.0f;
      L.col_h = L.Fs + L.col_chr_h + gap;
      size_full_cells(L, W, H - L.title_h - L.col_h - legend_h - caption_h, min_cells_h);
    };
    size_with(F);
    // A label wider than its column widens the columns where the width allows (a short, wide
    // heatmap: a presentation's focus view under its caption), in the small font if only that
    // fits, and is turned upwards only where neither does: turned, it would take its width from
    // the rows' height.
    L.col_font = L.big;
    L.col_F = F;
    if (L.col_chars && L.col_chr_w + gap > L.cell_w) {
      const float widest_column = std::max(W - L.row_w, F) / static_cast<float>(L.C);
      const float small_w = widest_label(L.small, o.cols, L.col_images, win.c0, win.c1, max_col_label(F), L);
      if (L.col_chr_w + gap <= widest_column) {
        L.cell_w = L.col_chr_w + gap;
      } else if (small_w + gap <= widest_column) {
        L.col_font = L.small;
        L.col_F = L.Fs;
        L.col_chr_w = small_w;
        size_with(L.Fs);
        L.cell_w = std::max(L.cell_w, small_w + gap);
      } else {
        L.col_rotated = true;
        size_with(L.col_chr_w + gap);
      }
    }
    L.row_step = label_step(L.cell_h, std::max((L.row_chars ? F : L.Fs) * kLineFill, L.row_img_h + 1.0f));
    L.num_step = label_step(L.cell_w, text_w(L.small, std::to_string(win.c1)) + gap);
    L.col_step = label_step(L.cell_w, L.col_rotated ? F * kLineFill : L.col_chr_w + gap);
  }
  L.gw = L.cell_w * static_cast<float>(L.C);
  L.gh = L.cell_h * static_cast<float>(L.R);
  L.gx = std::round(L.p0.x + L.row_w);
  L.gy = std::round(L.p0.y + L.title_h + L.col_h);
  return L;
}

}  // namespace

Layout layout_heatmap(const MatWindow& win, int R_all, int C_all, const Fonts& f, const HeatmapOptions& o) {
  const Layout L = layout_with(win, R_all, C_all, f, o, 0);
  // Token images taller than their rows or wider than their columns would be thinned out: smaller
  // ones, down to 2 screen pixels per image pixel, that fit the cells (and a pixel between).
  const float cell = std::min(L.row_images ? L.cell_h : 1e9f, L.col_images ? L.cell_w : 1e9f);
  const float need = std::max(L.row_img_h, L.col_img_h) + 1.0f;
  if (L.img_px <= 2 || need <= cell) return L;
  const int side = longest_image_side(o);
  const float fits = std::floor((cell - 1.0f - 2 * kImageFrame) / static_cast<float>(side));
  return layout_with(win, R_all, C_all, f, o, std::max(2.0f, fits));
}

}  // namespace sf::heatmap_detail

namespace sf {

float heatmap_height_to_label_rows(const MatView& m, const Fonts& f, HeatmapOptions o) {
  const int R = static_cast<int>(m.rows()), C = static_cast<int>(m.cols());
  if (R == 0 || C == 0 || o.thumbnail) return 0;
  o.max_height = 1e6f;  // no limit: the label band as the width alone makes it
  const heatmap_detail::Layout L = heatmap_detail::layout_heatmap(whole(R, C), R, C, f, o);
  // A pixel over the fill per row, so that rounding never thins them.
  const float rows_h = static_cast<float>(R) * (std::max(L.F * heatmap_detail::kLineFill, L.row_img_h) + 1.0f);
  return L.title_h + L.col_h + rows_h + heatmap_detail::legend_line_h(L.F);
}

}  // namespace sf
