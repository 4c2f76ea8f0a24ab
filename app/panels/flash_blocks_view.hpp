// The Attention tab on a step of Algorithm 4-F (FlashAttention, not in the paper): the whole
// ℓ_z×ℓ_x score matrix of the call, each block in its place as line 8 computed it (S_blk, already
// divided by √d_attn), the block being computed outlined, blocks not reached yet greyed out, and
// blocks line 7 skipped (every pair masked) crossed out; hovering a block names it and gives its m and
// ℓ. Everything comes from the trace (app/logic/flash_blocks.hpp). Above it, B_r and B_c: changing
// them re-runs the forward pass with the cursor kept on its line (Session::set_flash_blocks).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "app/logic/flash_blocks.hpp"

namespace sf {

class App;

// Puts Algorithm 4-F's listing in the stepper, at the first FlashAttention call of the trace: for a
// model that runs Algorithm 4 it first re-runs the forward pass with "attention": "flash" (its block_r and
// block_c, θ unchanged), and with the GPU's attention on it first returns to the CPU (4-F's steps are
// core's). The GPU tab's button.
void step_into_flash_attention(App& app);

class FlashBlocksView {
 public:
  // Draws the blocks when the cursor is in an Algorithm 4-F call; false (nothing drawn) otherwise.
  bool draw(App& app);
  // For a trace with no Algorithm 4 call: where the model runs Algorithm 4-F, says so with a button
  // to its first call. False (nothing drawn) when the trace has no Algorithm 4-F call either.
  bool draw_no_call(App& app);
  // --dump-state: the blocks at the cursor (found, B_r, B_c, n_i, n_j, i, j, each block's state),
  // whether the view was drawn this frame, the heatmap's cells on screen, the hovered block and its text,
  // line 16's comparison as the tab writes it, the last error.
  void dump(const App& app, nlohmann::ordered_json& j) const;
  const std::string& error() const { return error_; }

 private:
  void draw_block_sizes(App& app);
  void draw_overlay(const App& app, const FlashBlocks& f, float x, float y, float w, float h);

  int edit_r_ = 0, edit_c_ = 0;  // the B_r and B_c being typed
  int shown_r_ = 0, shown_c_ = 0;  // the model's, when edit_r_/edit_c_ were last taken from it
  std::string error_;            // why the last block sizes were refused
  size_t drawn_frame_ = SIZE_MAX;  // the frame the blocks were last drawn in
  int hovered_i_ = 0, hovered_j_ = 0;
  std::string hovered_text_;
  float cells_[4] = {0, 0, 0, 0};  // the heatmap's cells on screen (x, y, w, h), for tests to point at a block
  Value S_;                      // the assembled S, kept for the heatmap's right-click menu
};

}  // namespace sf
