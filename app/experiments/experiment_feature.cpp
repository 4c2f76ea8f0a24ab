#include "app/experiments/experiment_feature.hpp"

namespace sf {

namespace {

class ExperimentFeature : public Feature {};

}  // namespace

std::unique_ptr<Feature> make_experiment_feature() { return std::make_unique<ExperimentFeature>(); }

}  // namespace sf
