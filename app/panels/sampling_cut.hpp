// Top-k / top-p in the Sampling and Translation tabs (not in the paper; core/algorithms/sampling.hpp):
// the two controls, and the cut drawn on the p and q bars (kept tokens as they are, cut tokens faded,
// a labelled line between them).
#pragma once
#include <string>

#include "app/app.hpp"
#include "core/algorithms/algorithms.hpp"

namespace sf {
// top-k (0 = off) and top-p (1 = off) with their tooltips; `id` makes the widgets' ids unique per tab.
void draw_top_k_top_p_controls(TopKTopP& cut, int N_V, const char* id);
// The cut as traced for generation step i at `line` (Algorithm 14 line 5 or 15 line 6): "cut by
// top-k = 5, top-p = 0.9: n = 3 of 28 kept, Σ q = 0.812 (renormalised to 1)"; "" when step i drew
// without a cut (the trace has no cut sub-step for it).
std::string traced_cut_label(const Trace& tr, LineRef line, int i, int N_V);
// A table row across all columns: a line in the accent colour with `label`, between the kept and the cut tokens.
void draw_cut_line_row(const App& app, const std::string& label);
// A cut token's bar colour: `col` faded to a third.
ImU32 cut_color(ImU32 col);
}  // namespace sf
