// Inspector tab "Vision" (a vision transformer, arch "vit", not in the paper: Dosovitskiy et al.;
// shown for models whose output is OutputKind::Classification): the image x drawn large with its
// p×p patches numbered in token order, the class token's attention (Algorithm 4 line 6) over it for
// a layer and head (or the mean), P[:, 1] over the classes as bars, a test-digit picker and an 8×8
// drawing grid (left button paints, right erases) that re-runs Algorithm 9 as the image changes.
// Scripted: --actions vision-layer:L, vision-head:H|mean (the image's verbs are the Session's:
// vision-digit, vision-pixel, vision-clear). --dump-state: "vision".
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {

std::unique_ptr<Feature> make_vision_feature();

}  // namespace sf
