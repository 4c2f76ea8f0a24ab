#include "app/logic/figure_svg.hpp"

#include <algorithm>
#include <cstdio>

#include "app/logic/figure_font.hpp"
#include "core/io/export.hpp"
#include "core/io/fileio.hpp"

namespace sf {

namespace {

std::string hex(Rgb8 c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

std::string num(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(x));
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string rect(const FigRect& r, const std::string& fill, const std::string& extra = "") {
  return "<rect x=\"" + num(r.x) + "\" y=\"" + num(r.y) + "\" width=\"" + num(r.w) + "\" height=\"" + num(r.h) +
         "\" fill=\"" + fill + "\"" + extra;
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  return out;
}

std::string svg_figure(const Figure& fig) {
  const FigureFont& font = FigureFont::sans();
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(fig.w) + "\" height=\"" +
       std::to_string(fig.h) + "\" viewBox=\"0 0 " + std::to_string(fig.w) + " " + std::to_string(fig.h) +
       "\" font-family=\"DejaVu Sans, Verdana, sans-serif\">\n";
  // The legend's gradient and the hatching of ±∞ cells.
  o += "<defs>\n<linearGradient id=\"scale\" x1=\"0\" y1=\"0\" x2=\"1\" y2=\"0\">\n";
  constexpr int kStops = 16;
  for (int i = 0; i <= kStops; ++i) {
    const float t = static_cast<float>(i) / kStops;
    o += "<stop offset=\"" + num(t) + "\" stop-color=\"" + hex(fig.scale.color_at(t)) + "\"/>\n";
  }
  o += "</linearGradient>\n<pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
       "<path d=\"M0,6 L6,0\" stroke=\"" + hex(hatch_color()) + "\" stroke-width=\"1\"/></pattern>\n</defs>\n";
  o += rect({0, 0, static_cast<float>(fig.w), static_cast<float>(fig.h)}, hex(kFigureBackground)) + "/>\n";
  o += "<g class=\"cells\" shape-rendering=\"crispEdges\">\n";
  const std::string name = xml_escape(fig.value_name.empty() ? "value" : fig.value_name);
  for (const FigCell& c : fig.cells) {
    const std::string r = std::to_string(c.row + 1), col = std::to_string(c.col + 1), v = export_number(c.value);
    o += rect(c.r, hex(c.fill), " class=\"cell\" data-row=\"" + r + "\" data-col=\"" + col + "\" data-value=\"" + v + "\"") +
         "><title>" + name + "[" + r + ", " + col + "] = " + v + "</title></rect>\n";
    if (c.hatched) o += rect(c.r, "url(#hatch)", " class=\"hatch\"") + "/>\n";
  }
  o += "</g>\n";
  o += rect(fig.legend_bar, "url(#scale)", " class=\"legend-bar\"") + "/>\n";
  for (const FigCell& s : fig.swatches) {
    o += rect(s.r, hex(s.fill), " class=\"swatch\"") + "/>\n";
    if (s.hatched) o += rect(s.r, "url(#hatch)", " class=\"hatch\"") + "/>\n";
  }
  if (!fig.label_pixels.empty()) {  // token images in place of labels
    o += "<g class=\"label-image\" shape-rendering=\"crispEdges\">\n";
    for (const FigRect& f : fig.label_frames) o += rect(f, hex(kFigureDim), " class=\"frame\"") + "/>\n";
    for (const FigCell& p : fig.label_pixels) o += rect(p.r, hex(p.fill)) + "/>\n";
    o += "</g>\n";
  }
  for (const FigText& t : fig.texts) {
    const std::string x = num(t.x), y = num(t.y + font.ascent(t.px));
    o += "<text class=\"" + std::string(t.role) + "\" x=\"" + x + "\" y=\"" + y + "\" font-size=\"" + num(t.px) +
         "\" fill=\"" + hex(t.color) + "\"" +
         (t.vertical ? " transform=\"rotate(-90 " + num(t.x) + " " + num(t.y) + ")\"" : std::string()) + ">" +
         xml_escape(t.s) + "</text>\n";
  }
  o += "</svg>\n";
  return o;
}

void write_svg_figure(const std::string& path, const MatView& m, const FigureSpec& spec) {
  FigureSpec s = spec;
  s.max_rows = std::min(s.max_rows, kSvgMaxCells);
  s.max_cols = std::min(s.max_cols, kSvgMaxCells);
  write_file_atomic(path, svg_figure(layout_figure(m, s)));
}

}  // namespace sf
