// Inspector › Head view (issue 26, item 2): BertViz's head view of the traced attention weights
// (app/logic/head_view.hpp): the keys' tokens on the left, the queries' on the right, one line per
// pair at opacity softmax(S/√d_attn)[t_z, t_x], each head in its colour; hovering a token keeps only
// its lines. It follows the cursor's layer while the cursor is inside an attention line. Right-click:
// export as PNG or SVG (head_view_figure.hpp). --actions head-view:LAYER[:H+H…],
// head-view-group:ALG:LINE, head-view-export:png|svg:FILE. --dump-state: "head_view".
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {

std::unique_ptr<Feature> make_head_view_feature();

}  // namespace sf
