// The Vision tab's drawings (app/panels/vision_panel.hpp): the image with its patches and the
// class token's attention over it (also the drawing grid), and P[:, 1] as bars.
#pragma once
#include <string>
#include <vector>

#include "app/app.hpp"
#include "app/logic/vision.hpp"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {

// What the image canvas did this frame.
struct CanvasResult {
  ImRect rect;          // the image's rectangle (screen pixels)
  int row = 0, col = 0, value = -1;  // a pixel the mouse painted (1-based; value −1: none)
};

// The 8×8 image in `side`-pixel cells, the p×p patch grid numbered in token order (token 1 is the
// class token, patch k token k + 1), the class token's weights over the patches as a coloured
// overlay (when `overlay`), the class token's own weight in a swatch beside it, the weights on hover.
// Left button paints a pixel to 16, right erases it to 0.
CanvasResult draw_image_canvas(const App& app, const std::vector<int>& pixels, int patch, const VisionReadout& r,
                               bool overlay, const std::string& weights_of, float side);

// P[:, 1] over the classes as bars, the predicted class highlighted and the true class named (−1: none).
void draw_class_bars(const App& app, const VisionReadout& r, const std::vector<std::string>& classes, int true_class);

}  // namespace sf
