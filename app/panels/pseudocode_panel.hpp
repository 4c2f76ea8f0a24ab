// The pseudocode as the paper prints it, the current line highlighted, lines already run
// marked, breakpoints in the gutter, and a plain-words tooltip on every line.
#pragma once
#include "app/app.hpp"

namespace sf {
struct PseudocodePanel {
  void draw(App& app);
};
}  // namespace sf
