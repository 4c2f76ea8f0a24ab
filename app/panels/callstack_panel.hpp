// The call stack: nested algorithm frames with their loop indices, e.g.
// DTransformer line 6 (l=2) › MHAttention line 2 (h=3) › Attention line 5. Clicking a frame
// shows that frame's line and variables.
#pragma once
#include "app/app.hpp"

namespace sf {
struct CallStackPanel {
  void draw(App& app);
};
}  // namespace sf
