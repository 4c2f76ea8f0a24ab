// Predict, then reveal: the study mode that hides the next step's value until the learner guesses, and its score.
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {

std::unique_ptr<Feature> make_study_feature();

}  // namespace sf
