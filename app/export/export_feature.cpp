#include "app/export/export_feature.hpp"

namespace sf {

namespace {

class ExportFeature : public Feature {};

}  // namespace

std::unique_ptr<Feature> make_export_feature() { return std::make_unique<ExportFeature>(); }

}  // namespace sf
