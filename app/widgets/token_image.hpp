// A token drawn as a small greyscale image on a heatmap's axis instead of its text label: a vision
// transformer's patch (not in the paper; app/logic/vision.hpp makes them). Headless.
#pragma once
#include <vector>

namespace sf {

struct TokenImage {
  int w = 0, h = 0;                 // in image pixels
  std::vector<unsigned char> grey;  // w·h values, row by row: 0 black … 255 white; empty: no image
  bool empty() const { return grey.empty(); }
  unsigned char at(int row, int col) const { return grey[static_cast<size_t>(row * w + col)]; }
};

}  // namespace sf
