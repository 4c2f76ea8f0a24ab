// The Attention view (Inspector tab "Attention"): for one layer l and head h, the scores
// S = KᵀQ (Algorithm 4 line 4), S after masking (line 5, −∞ cells), the mask itself, and
// softmax(S/√d_attn) (line 6), each with token labels on both axes; under them, every head of
// every layer as a thumbnail of its softmax, a click moving the cursor to that head's call.
// All matrices are read from the trace.
#pragma once
#include <cstddef>
#include <cstdint>

#include "app/app.hpp"
#include "app/widgets/heatmap.hpp"

namespace sf {
struct AttentionPanel {
  void draw(App& app);

 private:
  int g_ = 0;                   // the group shown (which transformer line's attention)
  int l_ = 1, h_ = 1, i_ = 0;   // the head shown; i_: Algorithm 14's generation step (0: none)
  size_t followed_ = SIZE_MAX;  // the cursor position whose indices were last taken over
  HeatmapHover hover_;          // the cell hovered last frame, outlined in all four views
};
}  // namespace sf
