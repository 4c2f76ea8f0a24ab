#include "app/classroom/session_feature.hpp"

namespace sf {

namespace {

class SessionFeature : public Feature {};

}  // namespace

std::unique_ptr<Feature> make_session_feature() { return std::make_unique<SessionFeature>(); }

}  // namespace sf
