// The Variables panel: every variable in scope at the shown event, named as in the paper,
// its shape with the numbers filled in (Q ∈ ℝ^{16×7}), and its value: a heatmap thumbnail,
// a number, or the characters of a token sequence. What the current step changed is
// highlighted; clicking a row shows that value in the Tensor view.
#pragma once
#include "app/app.hpp"

namespace sf {
struct VariablesPanel {
  void draw(App& app);
};
}  // namespace sf
