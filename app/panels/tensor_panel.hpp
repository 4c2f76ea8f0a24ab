// The Tensor view (Inspector tab "Tensor"): one value in scope at the shown event, in full.
// Its name and shape in the paper's notation, the line that bound it, a heatmap with legend,
// min / max / mean / std of its finite entries with a histogram; scalars as exact numbers,
// token sequences as characters with their 1-based ids, masks as 0/1 matrices.
#pragma once
#include "app/app.hpp"

namespace sf {
struct TensorPanel {
  void draw(App& app);
};
}  // namespace sf
