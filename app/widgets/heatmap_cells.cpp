// A heatmap's cells (from a texture or one by one, with their values where they fit), and the
// frames drawn over them: the selection, the marked and hovered cells, the regions.
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "app/panels/panel.hpp"  // ink_for
#include "app/widgets/heatmap_parts.hpp"

namespace sf::heatmap_detail {

namespace {

// The cells inside the clip rectangle, one by one.
void draw_cell_by_cell(ImDrawList* dl, const MatView& m, const Layout& L, const Scale& sc, bool cell_values) {
  const float cell_w = L.cell_w, cell_h = L.cell_h, Fs = L.Fs;
  const float sep = cell_w >= 8 && cell_h >= 8 ? 1.0f : 0.0f;  // a hairline between large cells
  const ImVec2 cmin = dl->GetClipRectMin(), cmax = dl->GetClipRectMax();
  const int c0 = std::max(0, static_cast<int>((cmin.x - L.gx) / cell_w)),
            c1 = std::min(L.C, static_cast<int>((cmax.x - L.gx) / cell_w) + 1);
  const int r0 = std::max(0, static_cast<int>((cmin.y - L.gy) / cell_h)),
            r1 = std::min(L.R, static_cast<int>((cmax.y - L.gy) / cell_h) + 1);
  const bool fits_h = cell_h >= Fs;
  auto centred = [&](ImVec2 a, const char* text, ImU32 ink) {
    const float w = text_w(L.small, text);
    if (!fits_h || w + 2 > cell_w) return false;
    dl->AddText(L.small, Fs, ImVec2(a.x + (cell_w - sep - w) * 0.5f, a.y + (cell_h - sep - Fs) * 0.5f), ink, text);
    return true;
  };
  for (int c = c0; c < c1; ++c)
    for (int r = r0; r < r1; ++r) {
      const float x = m(L.win.r0 + r, L.win.c0 + c);
      const ImVec2 a(L.gx + static_cast<float>(c) * cell_w, L.gy + static_cast<float>(r) * cell_h);
      const ImVec2 b(a.x + cell_w - sep, a.y + cell_h - sep);
      if (std::isnan(x)) {
        dl->AddRectFilled(a, b, sc.nan_cell());
        if (sc.nan_label.empty()) centred(a, "NaN", IM_COL32(0, 0, 0, 255));
        continue;
      }
      if (std::isinf(x)) {
        // Written "−∞" where it fits, else hatched.
        dl->AddRectFilled(a, b, inf_color());
        if (!centred(a, x < 0 ? "−∞" : "+∞", hatch_ink())) dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, a.y), hatch_ink());
        continue;
      }
      const ImU32 col = sc.color(x);
      dl->AddRectFilled(a, b, col);
      if (cell_values) {
        char buf[16];
        // Whole numbers (mask entries, a softmax weight of exactly 0 or 1) are written without
        // decimals, so that "0.00" always means a rounded small number.
        std::snprintf(buf, sizeof buf, x == std::round(x) ? "%.0f" : "%.2f", static_cast<double>(x));
        centred(a, buf, ink_for(col));
      }
    }
}

// A black-and-white outline around cell (r, c) of the matrix (0-based), if it is shown.
void outline(ImDrawList* dl, const Layout& L, int r, int c) {
  r -= L.win.r0;
  c -= L.win.c0;
  if (r < 0 || r >= L.R || c < 0 || c >= L.C) return;
  const ImVec2 a(L.gx + static_cast<float>(c) * L.cell_w - 1, L.gy + static_cast<float>(r) * L.cell_h - 1);
  const ImVec2 b(a.x + L.cell_w + 2, a.y + L.cell_h + 2);
  dl->AddRect(a, b, IM_COL32(0, 0, 0, 255), 0.0f, 0, 3.0f);
  dl->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0.0f, 0, 1.5f);
}

}  // namespace

void draw_cells(ImDrawList* dl, const MatView& m, const Layout& L, const Scale& sc, const CachedTexture* tex,
                const HeatmapOptions& o) {
  if (tex)
    dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(tex->tex)), ImVec2(L.gx, L.gy),
                 ImVec2(L.gx + L.gw, L.gy + L.gh));
  else
    draw_cell_by_cell(dl, m, L, sc, o.cell_values);
}

void draw_marks(ImDrawList* dl, const Layout& L, const HeatmapOptions& o, const HeatmapHover& hover) {
  const float gx = L.gx, gy = L.gy;
  if (o.frame_color)
    dl->AddRect(ImVec2(gx - 2, gy - 2), ImVec2(gx + L.gw + 2, gy + L.gh + 2), o.frame_color, 0.0f, 0, 2.0f);
  outline(dl, L, o.mark_row, o.mark_col);
  if (hover.hovered) outline(dl, L, hover.row, hover.col);
  // Regions another view points at (the cells a hovered value was computed from, changed cells):
  // a bright frame around each block, clipped to the part shown.
  const MatWindow& w = L.win;
  for (const CellRegion& g : o.regions) {
    const int r0 = std::max(g.row0, w.r0) - w.r0, r1 = std::min(g.row0 + g.rows, w.r1) - w.r0;
    const int c0 = std::max(g.col0, w.c0) - w.c0, c1 = std::min(g.col0 + g.cols, w.c1) - w.c0;
    if (r0 >= r1 || c0 >= c1) continue;
    const ImVec2 a(gx + static_cast<float>(c0) * L.cell_w - 1, gy + static_cast<float>(r0) * L.cell_h - 1);
    const ImVec2 b(gx + static_cast<float>(c1) * L.cell_w + 1, gy + static_cast<float>(r1) * L.cell_h + 1);
    dl->AddRect(a, b, IM_COL32(0, 0, 0, 255), 0.0f, 0, 4.0f);
    dl->AddRect(a, b, o.region_color ? o.region_color : IM_COL32(255, 200, 0, 255), 0.0f, 0, 2.0f);
  }
}

}  // namespace sf::heatmap_detail
