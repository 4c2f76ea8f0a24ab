// An exported heatmap figure as SVG (layout: figure_layout.hpp), a vector figure for papers and
// slides: one <rect class="cell"> per cell (its 1-based data-row, data-col and exact data-value,
// a <title> tooltip in a browser), up to 200 × 200 cells (beyond: reduced, and the caption says
// so), <text> labels (UTF-8, XML-escaped), a gradient legend and the caption.
#pragma once
#include <string>

#include "app/logic/figure_layout.hpp"

namespace sf {

// The most cells an SVG figure draws per side.
inline constexpr int kSvgMaxCells = 200;

std::string svg_figure(const Figure& fig);
// Lays out the figure of m (at most kSvgMaxCells per side) and writes it atomically; throws sf::Error.
void write_svg_figure(const std::string& path, const MatView& m, const FigureSpec& spec);
// `s` with & < > " ' escaped for XML text and attributes.
std::string xml_escape(const std::string& s);

}  // namespace sf
