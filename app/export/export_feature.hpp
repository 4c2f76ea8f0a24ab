// Export (docs/export.md): a tensor as CSV, NPY, PNG or SVG (every heatmap's right-click menu,
// File › Export › Shown tensor), the window or one panel as PNG, the trace as JSON. A small
// save dialog takes the path (prefilled from the caption, in the last export folder); errors
// show in red and overwrite nothing (every file is written to a temporary name, then renamed).
//
// Actions: export:csv|npy|png|svg:PATH (the Tensor view's value), export-value:NAME:FORMAT:PATH
// (a value in scope at the shown event), export-window:PATH, export-panel:WINDOW:PATH,
// export-trace:PATH, export-trace-values:PATH, export-dialog:FORMAT (opens the dialog for the
// Tensor view's value). --dump-state: "export": {last_path, last_error, count, dialog}.
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {

std::unique_ptr<Feature> make_export_feature();

}  // namespace sf
