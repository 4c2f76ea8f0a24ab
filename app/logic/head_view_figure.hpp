// The head view exported as a figure (SVG and PNG, as the heatmaps are: figure_svg.hpp,
// figure_png.hpp): the two token columns, one line per pair with weight > 0 in its head's colour at
// opacity = the weight, the heads' legend and a caption. One layout feeds both writers.
#pragma once
#include <string>

#include "app/logic/figure_png.hpp"
#include "app/logic/head_view.hpp"

namespace sf {

struct HeadViewFigure {
  int w = 0, h = 0;
  float font_px = 14;
  struct Label {
    float x, y;  // top-left
    std::string text;
    bool right_aligned = false;
  };
  std::vector<Label> labels;  // the columns' tokens, their titles, the legend, the caption
  struct Line {
    float x1, y1, x2, y2;
    HeadViewLine of;
  };
  std::vector<Line> lines;
  struct Swatch {
    float x, y, size;
    int head;
  };
  std::vector<Swatch> legend;
};

HeadViewFigure layout_head_view(const HeadView& v, const std::string& caption, HeadViewHover hover = {});
std::string head_view_svg(const HeadViewFigure& f);
RgbaImage render_head_view_png(const HeadViewFigure& f);
// Writes v as "svg" or "png" to path, atomically; throws sf::Error (also for another format).
void export_head_view(const std::string& format, const std::string& path, const HeadView& v, const std::string& caption,
                      HeadViewHover hover = {});

}  // namespace sf
