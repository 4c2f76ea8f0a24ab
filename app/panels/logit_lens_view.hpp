// What the Logit lens tab shows, computed by core (core/interpret/logit_lens.hpp) and kept until the
// model or the input changes: the lens of every layer, the token the model finally predicts at each
// position, and the attribution at the chosen position. Drawn by logit_lens_draw.cpp.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/interpret/logit_lens.hpp"

namespace sf {

class App;

struct LensView {
  std::shared_ptr<const Model> model;  // what it was computed for
  Tokens z, x;
  std::unique_ptr<LensRun> run;        // null: error says why
  std::string error;
  std::vector<int> predicted;          // per position (0-based index): argmax of the final P, 1-based id
  std::vector<int> masked;             // BERT: the 1-based positions holding mask_token
  int pos = 0;                         // the attributed position (1-based)
  std::optional<LogitAttribution> dla; // empty: dla_error says why
  std::string dla_error;
  bool sort_bars = false;              // the bars by |contribution| (else in the stream's order)
  bool asked = false;                  // the tab has been shown or scripted (--dump-state then has it)

  // Recomputes when the open model or the input changed since the last call.
  void refresh(const App& app);
  // Lets the cache go once another model is open: it held the old model and its lens's trace (up to
  // megabytes) until the tab was shown again. refresh makes it again.
  void release_if_stale(const App& app);
  // Chooses the attributed position (1-based) and recomputes the attribution; false when out of range.
  bool set_position(int t);
  // The probability the lens at layer l gives the finally predicted token at position t (0-based).
  float p_final(int l, int t) const { return run->lens.P[l](predicted[t] - 1, t); }
};

// The tab: the grid and the bars side by side (stacked when the tab is narrow).
void draw_logit_lens(App& app, LensView& v);

}  // namespace sf
