// The current step in three notations (core/pseudocode/notations): Phuong & Hutter's line and
// column vectors, Carpenter's fifty-line listing with row vectors (the bound matrices
// transposed: rows are tokens, xs[n, 1:V]), and Dinan–Yaida–Zhang's index form (one entry
// written as its equation with its value, e.g. q^2_{1;3;5} = 0.123, and a table indexed by t
// and the feature). Every number shown is the current trace event's.
#pragma once
#include "app/app.hpp"
#include "core/pseudocode/notations.hpp"

namespace sf {

struct NotationPanel {
  void draw(App& app);
  Notation notation = Notation::PhuongHutter;

 private:
  // The DYZ table cell under the mouse last frame: (value name, t, k); t = 0 when none.
  std::string hover_value_;
  int hover_t_ = 0, hover_k_ = 0;
};

}  // namespace sf
