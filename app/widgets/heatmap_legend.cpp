// The colour-scale legend under a heatmap's cells. Its numbers are never cut: the bar shrinks to
// leave them room within the heatmap's width, and the legend takes the width its labels need.
#include <algorithm>

#include "app/widgets/heatmap_parts.hpp"

namespace sf::heatmap_detail {

namespace {

// The colour bar: at most 12 F long (it is a key, not a chart), at least 1.5 F so that its
// colours still read, and 5 F where there is room.
constexpr float kBarMax = 12.0f, kBarMin = 1.5f, kBarRoomy = 5.0f;

void hatch(ImDrawList* dl, ImVec2 a, ImVec2 b) {
  dl->AddRectFilled(a, b, inf_color());
  dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, a.y), hatch_ink(), 1.0f);
}

}  // namespace

Legend layout_legend(const Layout& L, const Scale& sc, std::string caption) {
  Legend lg;
  lg.caption = std::move(caption);
  const float F = L.F, gap = L.gap;
  lg.ends = legend_ends(sc.lo, sc.hi);
  lg.lo_w = text_w(L.big, lg.ends.lo);
  lg.hi_w = text_w(L.big, lg.ends.hi);
  lg.bar_h = std::round(F * 0.85f);
  // On one line from the cells' left edge; where the bar would be too short there, from the
  // item's left edge (under the row labels); where even that is too narrow, the ends go on a
  // line of their own under the bar.
  const float labels_w = lg.lo_w + lg.hi_w + 2 * gap;
  const float want = std::clamp(L.gw - labels_w, F * kBarRoomy, F * kBarMax);
  lg.x0 = L.gx - L.p0.x;
  float room = L.avail_w - lg.x0 - labels_w;  // what the bar may take in the space given
  if (room < F * kBarMin) {
    lg.x0 = 0;
    room = L.avail_w - labels_w;
  }
  lg.stacked = room < F * kBarMin;
  if (lg.stacked)
    lg.bar_w = std::max(std::min(L.avail_w, F * kBarMax), lg.lo_w + gap + lg.hi_w);
  else
    lg.bar_w = std::max(std::min(want, room), F * kBarMin);
  const float scale_w = lg.stacked ? lg.bar_w : labels_w + lg.bar_w;
  if (sc.neg_inf) lg.swatches.emplace_back(true, "−∞ masked: " + std::to_string(sc.neg_inf));
  if (sc.pos_inf) lg.swatches.emplace_back(true, "+∞: " + std::to_string(sc.pos_inf));
  if (sc.nan) lg.swatches.emplace_back(false, (sc.nan_label.empty() ? "NaN" : sc.nan_label) + ": " + std::to_string(sc.nan));
  float swatch_w = 0;
  for (const auto& sw : lg.swatches) swatch_w += F + lg.bar_h + gap + text_w(L.big, sw.second);
  // The swatches go on a second line (from the item's left edge) where one line is too wide.
  lg.wrap_swatches = !lg.swatches.empty() && lg.x0 + scale_w + swatch_w > std::max(L.avail_w, L.row_w + L.gw);
  const float line_h = std::round(F * 1.3f);
  lg.w = lg.wrap_swatches ? std::max(lg.x0 + scale_w, swatch_w - F) : lg.x0 + scale_w + swatch_w;
  lg.h = legend_line_h(F) + (lg.stacked ? line_h : 0.0f) + (lg.wrap_swatches ? line_h : 0.0f) +
         (lg.caption.empty() ? 0.0f : line_h);
  return lg;
}

void draw_legend(ImDrawList* dl, const Layout& L, const Scale& sc, Legend& lg) {
  const float F = L.F, Fs = L.Fs, gap = L.gap, bh = lg.bar_h;
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float line_h = std::round(F * 1.3f);
  const float ly = L.gy + L.gh + std::round(F * 0.4f), by = ly + (F - bh) * 0.5f;
  const float x0 = L.p0.x + lg.x0;
  // One line: lo, the bar, hi. Stacked: the bar, then lo under its start and hi under its end.
  const float bar_x = lg.stacked ? x0 : x0 + lg.lo_w + gap;
  const ImVec2 lo_at(x0, lg.stacked ? ly + line_h : ly);
  const ImVec2 hi_at(lg.stacked ? x0 + lg.bar_w - lg.hi_w : bar_x + lg.bar_w + gap, lo_at.y);
  dl->AddText(L.big, F, lo_at, text_col, lg.ends.lo.c_str());
  dl->AddText(L.big, F, hi_at, text_col, lg.ends.hi.c_str());
  lg.lo_rect = ImVec4(lo_at.x, lo_at.y, lg.lo_w, F);
  lg.hi_rect = ImVec4(hi_at.x, hi_at.y, lg.hi_w, F);
  constexpr int kSegments = 32;
  for (int i = 0; i < kSegments; ++i) {
    const float t0 = static_cast<float>(i) / kSegments, t1 = static_cast<float>(i + 1) / kSegments;
    const ImU32 a = sc.color_at(t0), b = sc.color_at(t1);
    dl->AddRectFilledMultiColor(ImVec2(bar_x + lg.bar_w * t0, by), ImVec2(bar_x + lg.bar_w * t1, by + bh), a, b, b, a);
  }
  if (sc.diverging && sc.lo < 0 && sc.hi > 0) {  // 0 is written on the bar of a diverging scale
    const float zx = bar_x + lg.bar_w * (-sc.lo / (sc.hi - sc.lo));
    dl->AddText(L.small, Fs, ImVec2(zx - text_w(L.small, "0") * 0.5f, by + (bh - Fs) * 0.5f), IM_COL32(0, 0, 0, 255),
                "0");
  }
  float x = lg.stacked ? bar_x + lg.bar_w + F : hi_at.x + lg.hi_w + F;
  float sy = lo_at.y;  // the swatches follow on the line of the ends, or on one of their own
  if (lg.wrap_swatches) {
    x = L.p0.x;
    sy += line_h;
  }
  for (const auto& [hatched, what] : lg.swatches) {
    const ImVec2 a(x, sy + (F - bh) * 0.5f), b(x + bh, sy + (F + bh) * 0.5f);
    if (hatched)
      hatch(dl, a, b);
    else
      dl->AddRectFilled(a, b, sc.nan_cell());
    dl->AddText(L.big, F, ImVec2(b.x + gap, sy), text_col, what.c_str());
    x = b.x + gap + text_w(L.big, what) + F;
  }
  // What was reduced or zoomed, under the legend.
  if (!lg.caption.empty()) dl->AddText(L.small, Fs, ImVec2(L.p0.x, sy + line_h), dim, lg.caption.c_str());
}

}  // namespace sf::heatmap_detail
