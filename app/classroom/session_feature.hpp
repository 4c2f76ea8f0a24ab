// Sessions (File › Save session / Open session, recent files, a missing or changed model) and the themes.
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {

std::unique_ptr<Feature> make_session_feature();

}  // namespace sf
