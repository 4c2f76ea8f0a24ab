#include "app/logic/head_view_figure.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/logic/figure_font.hpp"
#include "app/logic/figure_svg.hpp"
#include "core/io/fileio.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

constexpr float kMargin = 16;
constexpr float kGapW = 220;  // the band the lines cross
constexpr float kLabelPad = 8;

std::string hex(Rgb8 c) {
  char b[8];
  std::snprintf(b, sizeof b, "#%02x%02x%02x", c.r, c.g, c.b);
  return b;
}

// Draws `c` over pixel (x, y) at opacity a (0–1): out = (1 − a)·out + a·c.
void blend(RgbaImage& img, int x, int y, float a, Rgb8 c) {
  if (x < 0 || y < 0 || x >= img.w || y >= img.h || a <= 0) return;
  uint8_t* p = &img.px[(static_cast<size_t>(y) * img.w + x) * 4];
  a = std::min(a, 1.0f);
  p[0] = static_cast<uint8_t>(std::lround(p[0] * (1 - a) + c.r * a));
  p[1] = static_cast<uint8_t>(std::lround(p[1] * (1 - a) + c.g * a));
  p[2] = static_cast<uint8_t>(std::lround(p[2] * (1 - a) + c.b * a));
}

// An anti-aliased line of width 1.5 px at opacity a (Xiaolin Wu's: each step along the major
// axis shares its coverage between the two pixels the line passes between, plus half a pixel).
void draw_line(RgbaImage& img, float x1, float y1, float x2, float y2, float a, Rgb8 c) {
  const bool steep = std::abs(y2 - y1) > std::abs(x2 - x1);
  if (steep) std::swap(x1, y1), std::swap(x2, y2);
  if (x1 > x2) std::swap(x1, x2), std::swap(y1, y2);
  const float slope = x2 == x1 ? 0 : (y2 - y1) / (x2 - x1);
  for (int x = static_cast<int>(std::lround(x1)); x <= static_cast<int>(std::lround(x2)); ++x) {
    const float y = y1 + slope * (x - x1);
    const int y0 = static_cast<int>(std::floor(y));
    const float f = y - y0;
    auto put = [&](int u, int v, float cov) { steep ? blend(img, v, u, a * cov, c) : blend(img, u, v, a * cov, c); };
    put(x, y0, std::min(1.0f, 1.5f - f));
    put(x, y0 + 1, std::min(1.0f, 0.5f + f));
  }
}

void draw_text(RgbaImage& img, const FigureFont& font, float px, const HeadViewFigure::Label& l) {
  const float x = l.right_aligned ? l.x - font.width(l.text, px) : l.x;
  std::vector<uint8_t> mask(static_cast<size_t>(img.w) * img.h, 0);
  font.draw(mask, img.w, img.h, x, l.y, l.text, px);
  for (int y = 0; y < img.h; ++y)
    for (int xx = 0; xx < img.w; ++xx)
      if (const uint8_t m = mask[static_cast<size_t>(y) * img.w + xx]) blend(img, xx, y, m / 255.0f, {20, 20, 20});
}

}  // namespace

HeadViewFigure layout_head_view(const HeadView& v, const std::string& caption, HeadViewHover hover) {
  const FigureFont& font = FigureFont::sans();
  HeadViewFigure f;
  const float px = f.font_px, row = px * 1.6f;
  float left_w = font.width("keys", px), right_w = font.width("queries", px);
  for (const std::string& s : v.keys) left_w = std::max(left_w, font.width(s, px));
  for (const std::string& s : v.queries) right_w = std::max(right_w, font.width(s, px));
  const float lx = kMargin + left_w, rx = lx + kLabelPad * 2 + kGapW;  // right edge of the left column; left edge of the right one
  float y = kMargin;
  f.labels.push_back({kMargin, y, caption, false});
  y += row * 1.5f;
  f.labels.push_back({lx, y, v.cross ? "keys: z" : "keys: x", true});
  f.labels.push_back({rx, y, "queries: x", false});
  y += row * 1.2f;
  const float top = y;
  auto row_mid = [&](int t) { return top + (t - 1) * row + px * 0.55f; };
  for (size_t i = 0; i < v.keys.size(); ++i) f.labels.push_back({lx, top + i * row, v.keys[i], true});
  for (size_t i = 0; i < v.queries.size(); ++i) f.labels.push_back({rx, top + i * row, v.queries[i], false});
  for (const HeadViewLine& l : visible_lines(v, hover))
    f.lines.push_back({lx + kLabelPad, row_mid(l.t_z), rx - kLabelPad, row_mid(l.t_x), l});
  y = top + std::max(v.keys.size(), v.queries.size()) * row + row * 0.5f;
  float x = kMargin;
  for (int h : v.heads) {
    f.legend.push_back({x, y + 2, px, h});
    const std::string name = "head " + std::to_string(h);
    f.labels.push_back({x + px * 1.4f, y, name, false});
    x += px * 1.4f + font.width(name, px) + px;
  }
  y += row * 1.5f;
  f.w = static_cast<int>(std::ceil(std::max({rx + right_w + kMargin, x + kMargin, kMargin * 2 + font.width(caption, px)})));
  f.h = static_cast<int>(std::ceil(y));
  return f;
}

std::string head_view_svg(const HeadViewFigure& f) {
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  std::to_string(f.w) + "\" height=\"" + std::to_string(f.h) + "\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"" +
                  std::to_string(static_cast<int>(f.font_px)) + "\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  char b[512];
  for (const HeadViewFigure::Line& l : f.lines) {
    // The exact weight (data-weight, %.9g: a float's round trip) and the opacity it is drawn at.
    std::snprintf(b, sizeof b,
                  "<line class=\"attn\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"1.5\" "
                  "stroke-opacity=\"%.9g\" data-head=\"%d\" data-tz=\"%d\" data-tx=\"%d\" data-weight=\"%.9g\"/>\n",
                  l.x1, l.y1, l.x2, l.y2, hex(head_color(l.of.head)).c_str(), l.of.weight, l.of.head, l.of.t_z, l.of.t_x,
                  l.of.weight);
    s += b;
  }
  for (const HeadViewFigure::Swatch& w : f.legend) {
    std::snprintf(b, sizeof b, "<rect class=\"head\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" data-head=\"%d\"/>\n",
                  w.x, w.y, w.size, w.size, hex(head_color(w.head)).c_str(), w.head);
    s += b;
  }
  for (const HeadViewFigure::Label& l : f.labels) {
    std::snprintf(b, sizeof b, "<text x=\"%.2f\" y=\"%.2f\" dominant-baseline=\"hanging\"%s>", l.x, l.y,
                  l.right_aligned ? " text-anchor=\"end\"" : "");
    s += b + xml_escape(l.text) + "</text>\n";
  }
  return s + "</svg>\n";
}

RgbaImage render_head_view_png(const HeadViewFigure& f) {
  RgbaImage img;
  img.w = f.w, img.h = f.h;
  img.px.assign(static_cast<size_t>(f.w) * f.h * 4, 255);
  for (const HeadViewFigure::Line& l : f.lines)
    draw_line(img, l.x1, l.y1, l.x2, l.y2, static_cast<float>(l.of.weight), head_color(l.of.head));
  for (const HeadViewFigure::Swatch& w : f.legend)
    for (int y = static_cast<int>(w.y); y < static_cast<int>(w.y + w.size); ++y)
      for (int x = static_cast<int>(w.x); x < static_cast<int>(w.x + w.size); ++x) blend(img, x, y, 1, head_color(w.head));
  const FigureFont& font = FigureFont::sans();
  for (const HeadViewFigure::Label& l : f.labels) draw_text(img, font, f.font_px, l);
  return img;
}

void export_head_view(const std::string& format, const std::string& path, const HeadView& v, const std::string& caption,
                      HeadViewHover hover) {
  if (format != "svg" && format != "png")
    throw Error("the head view exports as svg or png, not \"" + format + "\"");
  const HeadViewFigure f = layout_head_view(v, caption, hover);
  write_file_atomic(path, format == "svg" ? head_view_svg(f) : encode_png(render_head_view_png(f)));
}

}  // namespace sf
