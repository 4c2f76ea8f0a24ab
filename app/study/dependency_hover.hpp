// Dependency tracing on hover (issue 12, part 6): a hovered cell of a traced value sets
// app.ui.sources (value name → the blocks of cells it was computed from, by the rules of
// core/trace/dependencies.hpp) for the shown event, so that every heatmap of those values frames
// them, and adds "← K[:, 3] and Q[:, 5]" with the rule to the cell's tooltip. App::draw clears
// the sources a frame after nothing sets them (UiState::sources_frame).
#pragma once
#include <cstddef>

#include "app/widgets/heatmap.hpp"

namespace sf {

class App;

// After heatmap(…) drew value v (shown at event k): traces the hovered cell, if any.
void trace_dependencies(App& app, size_t k, const Value& v, const HeatmapHover& hover);

}  // namespace sf
