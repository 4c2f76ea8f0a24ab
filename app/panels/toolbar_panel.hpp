// The stepping toolbar: step buttons, the "step k of N" timeline, and the prompt editor.
#pragma once
#include <string>

#include "app/app.hpp"

namespace sf {
struct ToolbarPanel {
  void draw(App& app);
 private:
  std::string prompt_buf_;
  std::string context_buf_;
  bool synced_ = false;
};
}  // namespace sf
