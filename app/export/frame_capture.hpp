// The rendered frame as an image (File › Export › Window / Panel as PNG): the back buffer read
// after the frame is rendered and before it is shown (Feature::after_render).
#pragma once
#include <string>

#include "app/logic/figure_png.hpp"

namespace sf {

// The back buffer (w × h framebuffer pixels), top row first.
RgbaImage read_back_buffer(int w, int h);
// The part of img in the rectangle (x, y, w, h), clipped to the image; empty when nothing is left.
RgbaImage crop(const RgbaImage& img, int x, int y, int w, int h);

}  // namespace sf
