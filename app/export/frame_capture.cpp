#include "app/export/frame_capture.hpp"

#include <glad/gl.h>

#include <algorithm>
#include <cstring>

namespace sf {

RgbaImage read_back_buffer(int w, int h) {
  RgbaImage bottom_up;
  bottom_up.w = w, bottom_up.h = h;
  bottom_up.px.resize(static_cast<size_t>(w) * h * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, bottom_up.px.data());
  RgbaImage img = bottom_up;  // GL's first row is the bottom one
  const size_t row = static_cast<size_t>(w) * 4;
  for (int y = 0; y < h; ++y) std::memcpy(&img.px[y * row], &bottom_up.px[(h - 1 - y) * row], row);
  for (size_t i = 3; i < img.px.size(); i += 4) img.px[i] = 255;  // opaque, whatever the buffer's alpha
  return img;
}

RgbaImage crop(const RgbaImage& img, int x, int y, int w, int h) {
  const int x0 = std::clamp(x, 0, img.w), y0 = std::clamp(y, 0, img.h);
  const int x1 = std::clamp(x + w, 0, img.w), y1 = std::clamp(y + h, 0, img.h);
  RgbaImage out;
  out.w = std::max(0, x1 - x0), out.h = std::max(0, y1 - y0);
  out.px.resize(static_cast<size_t>(out.w) * out.h * 4);
  for (int r = 0; r < out.h; ++r)
    std::memcpy(&out.px[static_cast<size_t>(r) * out.w * 4], &img.px[(static_cast<size_t>(y0 + r) * img.w + x0) * 4],
                static_cast<size_t>(out.w) * 4);
  return out;
}

}  // namespace sf
