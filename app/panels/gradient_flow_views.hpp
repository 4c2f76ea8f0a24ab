// The three views of the Gradient flow tab (gradient_flow_panel.hpp), drawn from core's numbers:
// the saliency per input token, the residual stream's heatmap and per-layer bars, the per-head table.
// Every number has a tooltip with its exact value (double) and its definition.
#pragma once
#include "app/app.hpp"
#include "core/gradients/gradient_flow.hpp"

namespace sf {

// ‖∇e_t‖ on x's token chips and as a bar per token (`stream` names it: "x" or "z").
void draw_saliency(const App& app, const Tokens& tokens, const std::vector<double>& saliency, const char* stream);
// ‖∂loss/∂X_l[:, t]‖ as a heatmap (rows: entering layer l = 1 … L+1, columns: tokens), then
// ‖∂loss/∂X_l‖_F per layer boundary as bars. `X` names the stream ("X", or the encoder's "Z").
void draw_stream(const App& app, const Tokens& tokens, const StreamFlow& f, const char* X);
// ‖∇W_q^h‖_F, ‖∇W_k^g‖_F, ‖∇W_v^g‖_F per attention block and head.
void draw_heads(const App& app, const std::vector<HeadGradNorms>& heads, int H, int H_kv);

}  // namespace sf
