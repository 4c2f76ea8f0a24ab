#include "app/logic/figure_layout.hpp"
#include "app/widgets/heatmap_parts.hpp"

namespace sf::heatmap_detail {

// The scale rule is the exported figures' (figure_layout.hpp), so that screen and figure agree.
Scale resolve_scale(const MatView& m, const HeatmapOptions& o) {
  FigureSpec spec;
  spec.scale = o.scale == ColorScale::Diverging    ? FigureScaleKind::Diverging
               : o.scale == ColorScale::Sequential ? FigureScaleKind::Sequential
                                                   : FigureScaleKind::Auto;
  spec.lo = o.lo;
  spec.hi = o.hi;
  const FigureScale f = figure_scale(m, spec);
  Scale s;
  s.diverging = f.diverging;
  s.lo = f.lo;
  s.hi = f.hi;
  s.nan = static_cast<int>(f.nan);
  s.neg_inf = static_cast<int>(f.neg_inf);
  s.pos_inf = static_cast<int>(f.pos_inf);
  s.nan_label = o.nan_label;
  return s;
}

}  // namespace sf::heatmap_detail
