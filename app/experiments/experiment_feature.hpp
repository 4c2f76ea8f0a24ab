// Experiments: edit a value and re-run, ablate a head, activation patching, compare two prompts or checkpoints, undo.
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {

std::unique_ptr<Feature> make_experiment_feature();

}  // namespace sf
