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
  // What the current line was last checked against: the event, the text size and the window's size.
  struct ViewKey {
    size_t event = SIZE_MAX;
    float font = 0, w = 0, h = 0;
    bool operator==(const ViewKey&) const = default;
  };
  void keep_in_view(size_t event);
  ViewKey scrolled_for_;
};
}  // namespace sf
