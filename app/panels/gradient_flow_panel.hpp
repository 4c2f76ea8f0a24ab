// Inspector › Gradient flow (issue 24, item 4): not in the paper, the gradient of the training loss
// (Algorithms 11–13) for the session's one sequence x (and context z), computed by core
// (core/gradients/gradient_flow.hpp) for the current model and input and recomputed when they
// change: each input token's saliency ‖∇e_t‖, the residual stream's ‖∇X_l[:, t]‖ per layer
// boundary and token, and each attention head's ‖∇W_q^h‖, ‖∇W_k^h‖, ‖∇W_v^h‖. A model with more
// parameters than Session::async_min_params (GPT-2) is computed on a worker thread, on demand
// (the tab's button, or --actions gradient-flow:compute; gradient-flow:wait waits for it).
// --dump-state: "gradient_flow".
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {

std::unique_ptr<Feature> make_gradient_flow_feature();

}  // namespace sf
