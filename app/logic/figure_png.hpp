// An exported heatmap figure as PNG (layout: figure_layout.hpp), rasterised in software into an
// RGBA buffer, so that it works without a window and in tests.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "app/logic/figure_layout.hpp"

namespace sf {

struct RgbaImage {
  int w = 0, h = 0;
  std::vector<uint8_t> px;  // w × h × 4, top row first
  Rgb8 at(int x, int y) const {
    const size_t i = (static_cast<size_t>(y) * w + x) * 4;
    return {px[i], px[i + 1], px[i + 2]};
  }
};

RgbaImage render_png_figure(const Figure& fig);
// PNG bytes of an RGBA image (throws sf::Error when encoding fails).
std::string encode_png(const RgbaImage& img);
// Lays out, renders and writes the figure of m atomically; throws sf::Error.
void write_png_figure(const std::string& path, const MatView& m, const FigureSpec& spec);

}  // namespace sf
