// The Attention view (Inspector tab "Attention"): for one layer l and head h, the scores
// S = KᵀQ (Algorithm 4 line 4), S after masking (line 5, −∞ cells), the mask itself, and
// softmax(S/√d_attn) (line 6), each with token labels on both axes; under them, every head of
// every layer as a thumbnail of its softmax, a click moving the cursor to that head's call.
// After a traced training step's backward pass (issue 24; not in the paper), the views are S after
// masking and A, and ∇S and ∇A of the head (from its Attention adjoint frame): all four where each can
// label every row, else ∇S and ∇A alone, large enough for a projector, and a switch picks the pair or
// all four. All matrices are read from the trace.
#pragma once
#include <cstddef>
#include <cstdint>

#include <string>
#include <vector>

#include "app/app.hpp"
#include "app/attention_calls.hpp"
#include "app/panels/flash_blocks_view.hpp"
#include "app/panels/rfa_view.hpp"
#include "app/widgets/heatmap.hpp"

namespace sf {
struct AttentionPanel {
  void draw(App& app);
  // After a traced backward, which of S, A, ∇S and ∇A the large views show: all four (side by side
  // where the panel is wide enough, else two over two), or two of them, each twice as tall. Auto
  // (until the learner picks): all four where each has room to label every row, else ∇S and ∇A.
  enum class GradientViews { Auto, Both, Forward, Gradient };
  void set_gradient_views(GradientViews v) { gradient_views_ = v; }
  // What the large views showed in the last frame (--dump-state): the head, and its ∇S and ∇A
  // when a traced backward reached it (empty otherwise).
  struct Shown {
    int l = 0, h = 0;
    bool gradients = false;
    MatF A, dS, dA, mask;
    std::string views;  // with the gradients: "both", "forward" or "gradient"
    int columns = 0;    // the views side by side
  };
  const Shown& shown() const { return shown_; }
  // On a step of Algorithm 4-F (FlashAttention) the tab shows its blocks instead (flash_blocks_view.hpp).
  const FlashBlocksView& flash() const { return flash_; }
  // Random-feature attention (Algorithm 4-R): the comparison view shown instead of Algorithm 4's.
  const RfaView& rfa() const { return rfa_; }

 private:
  void follow_cursor(const Session& s, const std::vector<HeadCall>& calls, const std::vector<AttentionGroup>& groups);
  void draw_selectors(const std::vector<AttentionGroup>& groups, int L_g, int H, int max_i, const char* step_format);
  void draw_cursor_link(App& app, const HeadCall& call);
  // S, the Mask, S after masking and softmax(S/√d_attn) of one call, as tall as their rows need
  // to be labelled, within what the panel (avail_y high, grid_h of it for the grid) can give.
  void draw_views(App& app, const HeadCall& call, const AttentionGroup& group, float avail_y, float grid_h);
  // The switch between the gradient views, `shown` selected; a click sets gradient_views_.
  void draw_gradient_switch(GradientViews shown);
  void draw_head_grid(App& app, const std::vector<HeadCall>& calls, const std::vector<AttentionGroup>& groups,
                      float thumb);

  int g_ = 0;                   // the group shown (which transformer line's attention)
  int l_ = 1, h_ = 1, i_ = 0;   // the head shown; i_: Algorithm 14's generation step (0: none)
  size_t followed_ = SIZE_MAX;  // the cursor position whose indices were last taken over
  HeatmapHover hover_;          // the cell hovered last frame, outlined in all the views
  Shown shown_;
  GradientViews gradient_views_ = GradientViews::Auto;
  FlashBlocksView flash_;
  RfaView rfa_;
};
}  // namespace sf
