// The tooltip of a hovered heatmap cell: its exact value, its 1-based indices and their tokens.
#include <cstdio>

#include "app/app.hpp"  // Fonts
#include "app/mathtext.hpp"
#include "app/widgets/heatmap_parts.hpp"

namespace sf::heatmap_detail {

namespace {

std::string value_text(float x) { return x == -INFINITY ? "−∞ (masked)" : exact_number(x); }

}  // namespace

void axis_line(const Fonts& f, const HeatmapAxis& ax, bool is_row, int i) {
  const std::string name = ax.index.empty() ? (is_row ? "row" : "column") : ax.index;
  math_text(f, name + " = " + std::to_string(i + 1));
  if (static_cast<size_t>(i) < ax.labels.size()) {
    ImGui::SameLine(0, 0);
    ImGui::Text("  “%s”", ax.labels[static_cast<size_t>(i)].c_str());
  }
}

void cell_tooltip(const MatView& m, const Layout& L, const Fonts& f, const HeatmapOptions& o, const HeatmapHover& hv,
                  const CachedTexture* tex) {
  ImGui::BeginTooltip();
  std::string name = o.value_name.empty() ? "value" : o.value_name;
  if (name.find(' ') != std::string::npos) name = "(" + name + ")";
  char at[48];
  if (L.C_all == 1)
    std::snprintf(at, sizeof at, "[%d] = ", hv.row + 1);
  else
    std::snprintf(at, sizeof at, "[%d, %d] = ", hv.row + 1, hv.col + 1);
  math_text(f, name + at);
  ImGui::SameLine(0, 0);
  ImGui::PushFont(f.mono);
  const float x = m(hv.row, hv.col);
  ImGui::TextUnformatted(std::isnan(x) && !o.nan_label.empty() ? o.nan_label.c_str() : value_text(x).c_str());
  ImGui::PopFont();
  axis_line(f, o.rows, true, hv.row);
  if (L.C_all > 1) axis_line(f, o.cols, false, hv.col);
  if (tex && (tex->red_rows.factor > 1 || tex->red_cols.factor > 1))
    ImGui::TextDisabled("(this pixel: the largest |value| of %d × %d entries; zoom in to see each)",
                        tex->red_rows.factor, tex->red_cols.factor);
  ImGui::EndTooltip();
}

}  // namespace sf::heatmap_detail
