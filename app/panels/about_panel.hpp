// Help › About (F1): what Stepformer is, the paper it adapts, the keyboard shortcuts, the
// versions of what it runs on, and the licences of what it uses.
#pragma once
#include "app/app.hpp"

namespace sf {

struct AboutPanel {
  void draw(App& app);
};

}  // namespace sf
