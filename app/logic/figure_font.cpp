#include "app/logic/figure_font.hpp"

#include <stb/stb_truetype.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include "core/io/fileio.hpp"
#include "core/model/error.hpp"

namespace sf {

struct FigureFont::Info {
  stbtt_fontinfo f;
};

const FigureFont& FigureFont::sans() {
  static const std::string path = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  if (!std::filesystem::exists(path))
    throw Error("the figure font " + path + " is missing: install fonts-dejavu-core to export figures");
  static const FigureFont font(read_file(path, size_t(64) << 20));
  return font;
}

FigureFont::FigureFont(std::string ttf_bytes) : ttf_(std::move(ttf_bytes)), info_(std::make_shared<Info>()) {
  const auto* data = reinterpret_cast<const unsigned char*>(ttf_.data());
  if (!stbtt_InitFont(&info_->f, data, stbtt_GetFontOffsetForIndex(data, 0)))
    throw Error("the figure font cannot be read (not a TrueType font)");
}

std::vector<uint32_t> utf8_codepoints(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    uint32_t c = n == 1 ? b : b & (0x7F >> n);
    for (int k = 1; k < n; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(c);
    i += n;
  }
  return out;
}

float FigureFont::ascent(float px) const {
  int asc = 0, desc = 0, gap = 0;
  stbtt_GetFontVMetrics(&info_->f, &asc, &desc, &gap);
  return static_cast<float>(asc) * stbtt_ScaleForPixelHeight(&info_->f, px);
}

float FigureFont::width(const std::string& s, float px) const {
  const float scale = stbtt_ScaleForPixelHeight(&info_->f, px);
  const std::vector<uint32_t> cps = utf8_codepoints(s);
  float w = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    int adv = 0, lsb = 0;
    stbtt_GetCodepointHMetrics(&info_->f, static_cast<int>(cps[i]), &adv, &lsb);
    w += static_cast<float>(adv) * scale;
    if (i + 1 < cps.size())
      w += static_cast<float>(stbtt_GetCodepointKernAdvance(&info_->f, static_cast<int>(cps[i]),
                                                            static_cast<int>(cps[i + 1]))) * scale;
  }
  return w;
}

void FigureFont::draw(std::vector<uint8_t>& a, int w, int h, float x, float y, const std::string& s, float px) const {
  const float scale = stbtt_ScaleForPixelHeight(&info_->f, px);
  const float baseline = y + ascent(px);
  const std::vector<uint32_t> cps = utf8_codepoints(s);
  float pen = x;
  for (size_t i = 0; i < cps.size(); ++i) {
    const int cp = static_cast<int>(cps[i]);
    const float fx = pen - std::floor(pen);
    int gw = 0, gh = 0, ox = 0, oy = 0;
    unsigned char* g = stbtt_GetCodepointBitmapSubpixel(&info_->f, scale, scale, fx, 0, cp, &gw, &gh, &ox, &oy);
    const int x0 = static_cast<int>(std::floor(pen)) + ox, y0 = static_cast<int>(std::lround(baseline)) + oy;
    for (int r = 0; r < gh; ++r)
      for (int c = 0; c < gw; ++c) {
        const int X = x0 + c, Y = y0 + r;
        if (X < 0 || Y < 0 || X >= w || Y >= h) continue;
        uint8_t& d = a[static_cast<size_t>(Y) * w + X];
        d = std::max(d, g[r * gw + c]);
      }
    stbtt_FreeBitmap(g, nullptr);
    int adv = 0, lsb = 0;
    stbtt_GetCodepointHMetrics(&info_->f, cp, &adv, &lsb);
    pen += static_cast<float>(adv) * scale;
    if (i + 1 < cps.size())
      pen += static_cast<float>(stbtt_GetCodepointKernAdvance(&info_->f, cp, static_cast<int>(cps[i + 1]))) * scale;
  }
}

std::string FigureFont::fit(const std::string& s, float px, float max_w) const {
  if (width(s, px) <= max_w) return s;
  const float ell = width("…", px);
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t n = 1;
    const auto b = static_cast<unsigned char>(s[i]);
    if (b >= 0xF0) n = 4;
    else if (b >= 0xE0) n = 3;
    else if (b >= 0xC0) n = 2;
    if (width(s.substr(0, i + n), px) + ell > max_w) break;
    i += n;
    out = s.substr(0, i);
  }
  return out + "…";
}

}  // namespace sf
