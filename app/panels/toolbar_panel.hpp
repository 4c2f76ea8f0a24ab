// The stepping toolbar: step buttons, the "step k of N" timeline, and the prompt editor.
#pragma once
#include <string>

#include "app/app.hpp"

namespace sf {
struct ToolbarPanel {
  void draw(App& app);
  // The toolbar's height in a window `width` wide: its rows of buttons, timeline and prompt
  // (the timeline gets a row of its own where it does not fit beside the buttons), and a line
  // under the prompt per input error.
  static float height(const App& app, float width);
 private:
  std::string prompt_buf_;
  std::string context_buf_;
  bool synced_ = false;
};
}  // namespace sf
