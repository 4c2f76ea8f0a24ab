// Export: a tensor as CSV, NPY, PNG or SVG, the window or a panel as PNG, the trace as JSON.
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {

std::unique_ptr<Feature> make_export_feature();

}  // namespace sf
