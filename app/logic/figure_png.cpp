#include "app/logic/figure_png.hpp"

#include <stb/stb_image_write.h>

#include <algorithm>
#include <cmath>

#include "app/logic/figure_font.hpp"
#include "core/io/fileio.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

void fill(RgbaImage& img, const FigRect& r, Rgb8 c) {
  const int x0 = std::max(0, static_cast<int>(std::lround(r.x))), y0 = std::max(0, static_cast<int>(std::lround(r.y)));
  const int x1 = std::min(img.w, static_cast<int>(std::lround(r.x + r.w)));
  const int y1 = std::min(img.h, static_cast<int>(std::lround(r.y + r.h)));
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      uint8_t* p = &img.px[(static_cast<size_t>(y) * img.w + x) * 4];
      p[0] = c.r, p[1] = c.g, p[2] = c.b, p[3] = 255;
    }
}

// ±∞: the infinity colour crossed by diagonal lines, as on screen.
void hatch(RgbaImage& img, const FigRect& r) {
  fill(img, r, infinity_color());
  const Rgb8 h = hatch_color();
  const int x0 = static_cast<int>(std::lround(r.x)), y0 = static_cast<int>(std::lround(r.y));
  const int w = static_cast<int>(std::lround(r.w)), hh = static_cast<int>(std::lround(r.h));
  if (w < 4 || hh < 4) return;
  for (int y = 0; y < hh; ++y)
    for (int x = 0; x < w; ++x)
      if ((x + hh - 1 - y) % 6 == 0 && x0 + x < img.w && y0 + y < img.h)
        fill(img, {static_cast<float>(x0 + x), static_cast<float>(y0 + y), 1, 1}, h);
}

// Blends coverage a (0–255) of colour c into pixel (x, y).
void blend(RgbaImage& img, int x, int y, uint8_t a, Rgb8 c) {
  if (!a || x < 0 || y < 0 || x >= img.w || y >= img.h) return;
  const float f = a / 255.0f;
  uint8_t* p = &img.px[(static_cast<size_t>(y) * img.w + x) * 4];
  p[0] = static_cast<uint8_t>(std::lround(p[0] + (c.r - p[0]) * f));
  p[1] = static_cast<uint8_t>(std::lround(p[1] + (c.g - p[1]) * f));
  p[2] = static_cast<uint8_t>(std::lround(p[2] + (c.b - p[2]) * f));
}

// The text is drawn into a strip of its own, then blended at (x, y): as it is, or (vertical)
// turned a quarter left with the strip's bottom-left at (x, y).
void draw_text(RgbaImage& img, const FigureFont& font, const FigText& t) {
  const float fx = t.x - std::floor(t.x);
  const int len = static_cast<int>(std::ceil(font.width(t.s, t.px) + fx)) + 2;
  const int th = static_cast<int>(std::ceil(t.px * 1.3f));
  std::vector<uint8_t> strip(static_cast<size_t>(len) * th, 0);
  font.draw(strip, len, th, fx, 0, t.s, t.px);
  const int x0 = static_cast<int>(std::floor(t.x)), y0 = static_cast<int>(std::lround(t.y));
  for (int sy = 0; sy < th; ++sy)
    for (int sx = 0; sx < len; ++sx) {
      const uint8_t a = strip[static_cast<size_t>(sy) * len + sx];
      if (t.vertical) blend(img, x0 + sy, y0 - sx, a, t.color);
      else blend(img, x0 + sx, y0 + sy, a, t.color);
    }
}

}  // namespace

RgbaImage render_png_figure(const Figure& fig) {
  RgbaImage img;
  img.w = fig.w, img.h = fig.h;
  img.px.assign(static_cast<size_t>(img.w) * img.h * 4, 255);
  fill(img, {0, 0, static_cast<float>(img.w), static_cast<float>(img.h)}, kFigureBackground);
  for (const FigCell& c : fig.cells) c.hatched ? hatch(img, c.r) : fill(img, c.r, c.fill);
  // The legend's gradient: one column of pixels at a time.
  const FigRect& b = fig.legend_bar;
  const int bx = static_cast<int>(std::lround(b.x)), bw = static_cast<int>(std::lround(b.w));
  for (int i = 0; i < bw; ++i)
    fill(img, {static_cast<float>(bx + i), b.y, 1, b.h}, fig.scale.color_at(bw > 1 ? i / float(bw - 1) : 0.5f));
  for (const FigCell& s : fig.swatches) s.hatched ? hatch(img, s.r) : fill(img, s.r, s.fill);
  for (const FigRect& f : fig.label_frames) fill(img, f, kFigureDim);  // the pixels then cover all but its edge
  for (const FigCell& p : fig.label_pixels) fill(img, p.r, p.fill);
  const FigureFont& font = FigureFont::sans();
  for (const FigText& t : fig.texts) draw_text(img, font, t);
  return img;
}

std::string encode_png(const RgbaImage& img) {
  std::string out;
  auto sink = [](void* ctx, void* data, int size) { static_cast<std::string*>(ctx)->append(static_cast<char*>(data), size); };
  stbi_flip_vertically_on_write(0);
  if (!stbi_write_png_to_func(sink, &out, img.w, img.h, 4, img.px.data(), img.w * 4))
    throw Error("cannot encode the figure as PNG");
  return out;
}

void write_png_figure(const std::string& path, const MatView& m, const FigureSpec& spec) {
  write_file_atomic(path, encode_png(render_png_figure(layout_figure(m, spec))));
}

}  // namespace sf
