// Presentation mode (View › Presentation): projector fonts, high contrast, only the stop's panels, the pointer highlighted.
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {

std::unique_ptr<Feature> make_presentation_feature();

}  // namespace sf
