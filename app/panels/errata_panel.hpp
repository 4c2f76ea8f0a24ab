// Help › Errata: every slip (and silent departure) of the seeds' pseudocode — the paper's, Carpenter's
// and Dinan–Yaida–Zhang's (data in core/pseudocode/errata) — with where it is, what is printed,
// what Stepformer does, and "Show me": the stepper jumps to the step of the current trace where
// it shows, traces the run that has it (generation, translation, one training update), or says
// which model to open when this architecture does not run that algorithm.
#pragma once
#include <string>

#include "app/app.hpp"
#include "core/pseudocode/errata.hpp"

namespace sf {

class ErrataPanel {
 public:
  void draw(App& app);
  // Moves the cursor to where `e` shows; false when this model does not run it. Either way the
  // panel and the status bar say where the cursor went or which model to open.
  bool show(App& app, const Erratum& e);

 private:
  bool locate(App& app, const Erratum& e, std::string& message);

  int seed_filter_ = 0;  // 0 every seed, 1 the paper, 2 Carpenter, 3 Dinan–Yaida–Zhang
  std::string result_;   // the last "Show me" outcome
  std::string shown_;    // the id of the erratum it was for
  bool scroll_to_shown_ = false;
  bool result_error_ = false;
};

}  // namespace sf
