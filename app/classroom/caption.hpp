// The lesson's caption box: the stop's heading and its Markdown note (app/logic/markdown.hpp) in
// large type, wrapped, at the bottom of the screen over the layout. **bold** is drawn heavier and
// brighter, *italic* slanted, `code` in the monospace font on a faint box, "- " items with a
// bullet; the paper's W_q, ℓ_max, ℝ^{d_e} get real sub- and superscripts (app/mathtext.hpp).
#pragma once
#include <string>

namespace sf {

class App;

struct Caption {
  std::string heading;  // "Stop 3 of 7 — Masking"
  std::string note;     // Markdown
  std::string error;    // why the stop did not resolve ("" : it did), in red under the note
};

// Draws the box, as high as its text needs up to a third of the screen; `collapsed` shows the
// heading alone (its button toggles it). Returns its height in pixels with its margin (the
// layout leaves room for it).
float draw_caption(App& app, const Caption& c, bool& collapsed);

}  // namespace sf
