// Lessons: Lesson › Add stop here…, the stop editor, playback with PageDown / PageUp and the caption box.
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {

std::unique_ptr<Feature> make_lesson_feature();

}  // namespace sf
