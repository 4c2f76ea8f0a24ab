#include "app/classroom/presentation_feature.hpp"

namespace sf {

namespace {

class PresentationFeature : public Feature {};

}  // namespace

std::unique_ptr<Feature> make_presentation_feature() { return std::make_unique<PresentationFeature>(); }

}  // namespace sf
