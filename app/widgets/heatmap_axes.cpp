// A heatmap's axes: the titles, the 1-based indices and the token labels (or token images), thinned
// evenly where they would overlap (heatmap_labels.hpp), and the tooltip that names a hovered label.
#include <algorithm>
#include <cmath>

#include "app/mathtext.hpp"
#include "app/widgets/heatmap_parts.hpp"

namespace sf::heatmap_detail {

namespace {

// Turns the vertices added to dl since `first` by 90° counter-clockwise, so that text drawn
// across from (x0, y0) reads upwards from (x0, y0 + its width) instead: ImGui 1.86 draws no
// rotated text, and its glyphs are textured quads, which turn like any other.
void turn_upwards(ImDrawList* dl, int first, ImVec2 origin, float bottom) {
  for (int i = first; i < dl->VtxBuffer.Size; ++i) {
    ImVec2& p = dl->VtxBuffer[i].pos;
    const float dx = p.x - origin.x, dy = p.y - origin.y;
    p = ImVec2(origin.x + dy, bottom - dx);
  }
}

void draw_titles(ImDrawList* dl, const Layout& L, const Fonts& f, const HeatmapOptions& o, ImU32 dim) {
  if (L.title_h <= 0) return;
  float x = L.p0.x;
  if (!o.rows.title.empty()) x += draw_math(f, ImVec2(x, L.p0.y), "↓ " + o.rows.title, dim) + L.F;
  if (!o.cols.title.empty()) draw_math(f, ImVec2(std::max(x, L.gx), L.p0.y), o.cols.title + " →", dim);
}

float col_centre(const Layout& L, int c) { return L.gx + (static_cast<float>(c) + 0.5f) * L.cell_w; }
// Where a column's index, `w` wide, starts: centred under its column, but kept within the grid's
// span, so that the last index does not overhang the grid (and the window's edge) when it is
// wider than a cell.
float col_index_x(const Layout& L, int c, float w) {
  const float grid_right = L.gx + static_cast<float>(L.C) * L.cell_w;
  return std::clamp(col_centre(L, c) - w * 0.5f, L.gx, std::max(L.gx, grid_right - w));
}
float row_centre(const Layout& L, int r) { return L.gy + (static_cast<float>(r) + 0.5f) * L.cell_h; }

// A token image with its top-left pixel at `at` (rounded to a whole pixel, so that each image pixel
// is a square of img_px whole screen pixels in exactly its grey), framed just outside; returns
// where its pixels went (x, y, w, h).
ImVec4 draw_token_image(ImDrawList* dl, const Layout& L, const TokenImage& im, ImVec2 at, ImU32 frame) {
  const ImVec2 p(std::round(at.x), std::round(at.y)), size = L.image_size(im);
  const float q = L.img_px;
  for (int r = 0; r < im.h; ++r)
    for (int c = 0; c < im.w; ++c) {
      const int g = im.at(r, c);
      const ImVec2 a(p.x + static_cast<float>(c) * q, p.y + static_cast<float>(r) * q);
      dl->AddRectFilled(a, ImVec2(a.x + q, a.y + q), IM_COL32(g, g, g, 255));
    }
  const float f = kImageFrame;
  dl->AddRect(ImVec2(p.x - f, p.y - f), ImVec2(p.x + size.x + f, p.y + size.y + f), frame, 0.0f, 0, f);
  return ImVec4(p.x, p.y, size.x, size.y);
}

// The image standing for index i of an axis, or nullptr where its text label is drawn.
const TokenImage* image_of(const HeatmapAxis& ax, bool images, int i) {
  if (!images) return nullptr;
  const TokenImage& im = ax.images[static_cast<size_t>(i)];
  return im.empty() ? nullptr : &im;
}

// The column indices, under the token labels; then the token labels, upright where they fit
// across their column, else turned to read upwards, all ending just above the indices.
void draw_column_labels(ImDrawList* dl, const Layout& L, const HeatmapOptions& o, ImU32 ink, ImU32 dim,
                        std::vector<std::string>& drawn, std::vector<ImVec4>& images) {
  const float band_y = L.p0.y + L.title_h;
  const float num_y = band_y + L.col_chr_h;
  for (int c : thinned_labels(L.C, L.num_step)) {
    const std::string n = std::to_string(L.win.c0 + c + 1);
    dl->AddText(L.small, L.Fs, ImVec2(col_index_x(L, c, text_w(L.small, n)), num_y), dim, n.c_str());
  }
  if (!L.col_chars) return;
  const float F = L.col_F;
  for (int c : thinned_labels(L.C, L.col_step)) {
    const std::string l = fit_text(L.col_font, o.cols.labels[static_cast<size_t>(L.win.c0 + c)], max_col_label(L.F));
    drawn[static_cast<size_t>(c)] = l;
    if (const TokenImage* im = image_of(o.cols, L.col_images, L.win.c0 + c)) {  // above the index, centred
      const ImVec2 size = L.image_size(*im);
      const ImVec2 at(col_centre(L, c) - size.x * 0.5f, num_y - L.gap * 0.5f - kImageFrame - size.y);
      images[static_cast<size_t>(c)] = draw_token_image(dl, L, *im, at, dim);
      continue;
    }
    const float w = text_w(L.col_font, l);
    if (w + L.gap <= L.cell_w) {  // fits across its column: upright, just above the indices
      dl->AddText(L.col_font, F, ImVec2(col_centre(L, c) - w * 0.5f, num_y - F), ink, l.c_str());
      continue;
    }
    const ImVec2 at(col_centre(L, c) - F * 0.5f, band_y);
    const float bottom = band_y + L.col_chr_h - L.gap * 0.5f;
    // Laid out across first, unclipped (AddText would drop the glyphs that lie outside the clip
    // rectangle before they are turned); the GPU still clips the turned label to the window.
    const int first = dl->VtxBuffer.Size;
    const ImVec4 unclipped(-1e9f, -1e9f, 1e9f, 1e9f);
    L.col_font->RenderText(dl, F, at, ink, unclipped, l.c_str(), nullptr);
    turn_upwards(dl, first, at, bottom);
  }
}

// The row indices, right-aligned, then the token labels, centred in their column.
void draw_row_labels(ImDrawList* dl, const Layout& L, const HeatmapOptions& o, ImU32 ink, ImU32 dim,
                     std::vector<std::string>& drawn, std::vector<ImVec4>& images) {
  const float x = L.p0.x;
  for (int r : thinned_labels(L.R, L.row_step)) {
    const float cy = row_centre(L, r);
    const std::string n = std::to_string(L.win.r0 + r + 1);
    dl->AddText(L.small, L.Fs, ImVec2(x + L.row_idx_w - text_w(L.small, n), cy - L.Fs * 0.5f), dim, n.c_str());
    if (!L.row_chars) continue;
    const std::string l = fit_text(L.big, o.rows.labels[static_cast<size_t>(L.win.r0 + r)], L.row_chr_w);
    drawn[static_cast<size_t>(r)] = l;
    if (const TokenImage* im = image_of(o.rows, L.row_images, L.win.r0 + r)) {  // centred in the label column
      const ImVec2 size = L.image_size(*im);
      const ImVec2 at(x + L.row_idx_w + L.gap + (L.row_chr_w - size.x) * 0.5f, cy - size.y * 0.5f);
      images[static_cast<size_t>(r)] = draw_token_image(dl, L, *im, at, dim);
      continue;
    }
    dl->AddText(L.big, L.F, ImVec2(x + L.row_idx_w + L.gap + (L.row_chr_w - text_w(L.big, l)) * 0.5f, cy - L.F * 0.5f),
                ink, l.c_str());
  }
}

}  // namespace

AxisLabels draw_axes(ImDrawList* dl, const Layout& L, const Fonts& f, const HeatmapOptions& o) {
  const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  AxisLabels drawn;
  drawn.rows.resize(L.row_chars ? static_cast<size_t>(L.R) : 0);
  drawn.cols.resize(L.col_chars ? static_cast<size_t>(L.C) : 0);
  drawn.row_images.resize(L.row_images ? static_cast<size_t>(L.R) : 0);
  drawn.col_images.resize(L.col_images ? static_cast<size_t>(L.C) : 0);
  draw_titles(dl, L, f, o, dim);
  draw_column_labels(dl, L, o, ink, dim, drawn.cols, drawn.col_images);
  draw_row_labels(dl, L, o, ink, dim, drawn.rows, drawn.row_images);
  return drawn;
}

bool axis_label_tooltip(const Layout& L, const Fonts& f, const HeatmapOptions& o, ImVec2 mouse) {
  const bool in_cols = mouse.y >= L.p0.y + L.title_h && mouse.y < L.gy;
  const bool in_rows = mouse.x >= L.p0.x && mouse.x < L.gx;
  const int c = in_cols ? L.col_at(mouse.x) : -1;
  const int r = in_rows ? L.row_at(mouse.y) : -1;
  if (c < 0 && r < 0) return false;
  ImGui::BeginTooltip();
  if (c >= 0)
    axis_line(f, o.cols, false, L.win.c0 + c);
  else
    axis_line(f, o.rows, true, L.win.r0 + r);
  ImGui::EndTooltip();
  return true;
}

}  // namespace sf::heatmap_detail
