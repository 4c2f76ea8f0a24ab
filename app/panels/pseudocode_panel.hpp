// The pseudocode as the paper prints it (as the open model runs it: a variant's lines are
// rewritten, coloured and tagged "variant", under a banner naming the variants), the current
// line highlighted, lines already run marked, breakpoints in the gutter, and a plain-words
// tooltip on every line.
#pragma once
#include "app/app.hpp"

namespace sf {
struct PseudocodePanel {
  void draw(App& app);

 private:
  size_t scrolled_for_ = SIZE_MAX;  // the event whose line was last scrolled into view
};
}  // namespace sf
