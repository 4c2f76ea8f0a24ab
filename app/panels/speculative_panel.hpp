// The Sampling tab's section for Algorithm 14-S, speculative decoding (not in the paper): the draft
// model (bundled or opened, with the target's vocabulary), K, τ, ℓ_gen and the seed; a button that
// traces it; the target passes saved; and per round the draft's proposals with q and p as bars, the
// acceptance draws u and ratios r, and the residual distribution as bars.
#pragma once
#include <cstddef>
#include <string>

#include "app/app.hpp"

namespace sf {

struct SpeculativePanel {
  // Draws the section: collapsed under Algorithm 14's controls until Algorithm 14-S is traced, then
  // open with its rounds in the tab's place of Algorithm 14 (with a button back to it).
  void draw(App& app);
  // "Round 2 of 4: 3 of 4 proposals accepted, …" for the round shown ("" when none), for --dump-state.
  const std::string& heading() const { return heading_; }

 private:
  void draw_controls(App& app);
  void draw_draft_picker(App& app);
  void draw_counter(const App& app) const;
  int selected_round(const App& app);
  void draw_round_buttons(const App& app, int sel);
  void draw_round(const App& app, int sel);
  void draw_proposal_row(const App& app, const SpeculativeRound& r, int i) const;
  void draw_residual(const App& app, const SpeculativeRound& r) const;

  int round_ = -1;               // selected round (0-based); -1: follows the cursor
  size_t followed_ = SIZE_MAX;   // the shown event the selection last followed
  std::string heading_;
};

}  // namespace sf
