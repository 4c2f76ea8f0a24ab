#include "app/study/study_feature.hpp"

namespace sf {

namespace {

class StudyFeature : public Feature {};

}  // namespace

std::unique_ptr<Feature> make_study_feature() { return std::make_unique<StudyFeature>(); }

}  // namespace sf
