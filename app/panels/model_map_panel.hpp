// Inspector › Model map (issue 26, item 1): the open model as one diagram (app/logic/model_map.hpp),
// the current step's box lit (orange in a backward step), a box's tooltip saying what it computes;
// clicking a box jumps the cursor to its first step (also --actions map-click:<box id>). An
// Inspector tab rather than a tile: it has the height GPT-2's 12 layers need and sits beside the
// other views of the current step, and the tiles keep the pseudocode, call stack and variables.
// --dump-state: "model_map" (every box's id, kind, screen rectangle, whether it shows whole, the lit box).
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {

std::unique_ptr<Feature> make_model_map_feature();

}  // namespace sf
