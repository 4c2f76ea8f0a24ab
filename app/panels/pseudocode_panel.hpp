// The pseudocode as the paper prints it (as the open model runs it: a variant's lines are
// rewritten, coloured and tagged "variant", under a banner naming the variants), the current
// line highlighted, lines already run marked, breakpoints in the gutter, and a plain-words
// tooltip on every line. On a backward event (Pass::Backward) the panel shows that algorithm's
// backward listing instead, labelled "not in the paper: Stepformer's backward listing", its
// current line and sub-step highlighted (app/panels/backward_listing_view.hpp).
#pragma once
#include <string>

#include "app/app.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace sf {
struct PseudocodePanel {
  void draw(App& app);

  // What the panel drew last (--dump-state): the listing, the current line and sub-step.
  struct Shown {
    size_t frame = SIZE_MAX;  // the frame that drew it
    int alg = 0, line = 0;    // line 0: the algorithm's entry (no line current)
    Pass pass = Pass::Forward;
    std::string label;        // kBackwardListingLabel above a backward listing, else ""
    std::string title;        // "Algorithm 4: Ṽ ← Attention(X, Z | W_qkv, Mask)"
    std::string line_text;    // the current line's text ("" when none)
    int step = -1;            // the highlighted sub-step of a backward line (0-based), −1 none
    std::string step_text;
  };
  const Shown& shown() const { return shown_; }

 private:
  // What the current line was last checked against: the event, the text size and the window's size.
  struct ViewKey {
    size_t event = SIZE_MAX;
    float font = 0, w = 0, h = 0;
    bool operator==(const ViewKey&) const = default;
  };
  void keep_in_view(size_t event);
  void draw_line(App& app, const PseudoLine& pl, size_t k, int cur_line, int cur_step);
  ViewKey scrolled_for_;
  Shown shown_;
};
}  // namespace sf
