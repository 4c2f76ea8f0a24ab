#include "app/classroom/lesson_feature.hpp"

namespace sf {

namespace {

class LessonFeature : public Feature {};

}  // namespace

std::unique_ptr<Feature> make_lesson_feature() { return std::make_unique<LessonFeature>(); }

}  // namespace sf
