// Updates of θ: the paper's plain SGD (Algorithm 13 line 6, θ ← θ − η·∇loss(θ)) and what §7–8
// say practice uses instead: Adam (Kingma & Ba 2015) with optional decoupled weight decay
// (AdamW, Loshchilov & Hutter 2019), a learning rate that warms up linearly and then decays
// along a cosine, and clipping of the gradient's global norm. All act on the flat θ buffer of a
// ParamTable, so the one table drives the optimizer loop too.
#pragma once
#include <cstdint>
#include <vector>

#include "core/model/params.hpp"

namespace sf {

// Updates touch θ only by one multiplication (weight decay) or one subtraction per entry, the
// arithmetic done beforehand in aligned buffers: a vectorised loop handles the first entries of
// an unaligned θ one by one, and a compiler may fuse a scalar a − b·c where the vector code does
// not, so anything more would make the last bit of θ depend on where θ happens to lie in memory
// (and resuming from a checkpoint would not repeat a run exactly).
using AlignedFloats = std::vector<float, Eigen::aligned_allocator<float>>;

// θ ← θ − η · ∇loss(θ) over n entries. `grad` (aligned) is scaled in place to η·∇loss(θ).
void sgd_update(float* theta, float* grad, size_t n, float eta);

struct AdamOptions {
  double beta1 = 0.9;         // β₁, decay of the first-moment estimate
  double beta2 = 0.99;        // β₂, decay of the second-moment estimate
  double eps = 1e-8;          // ε in √v̂ + ε
  double weight_decay = 0.0;  // λ of AdamW: θ ← θ − η·λ·θ, applied to weight matrices only
};

// Adam's state: m, v in θ's layout and the step count t (for the bias corrections).
struct AdamState {
  AlignedFloats m, v;
  int64_t t = 0;
  AlignedFloats step;  // scratch: the update subtracted from θ
};

// One Adam(W) step, as PyTorch's torch.optim.AdamW computes it:
//   t ← t + 1;  m ← β₁m + (1−β₁)g;  v ← β₂v + (1−β₂)g²
//   θ ← θ − η·λ·θ   (only entries of role Weight, OutputWeight, Embedding or Position: never
//                    biases, γ or β)
//   θ ← θ − (η / (1 − β₁ᵗ)) · m / (√v / √(1 − β₂ᵗ) + ε)
// The state is sized to the table on the first call.
void adam_update(const ParamTable& table, float* theta, const float* grad, double lr, const AdamOptions& opt,
                 AdamState& state);

// The learning rate of update number `step` (1-based): linear warmup from lr/warmup to lr over
// the first `warmup` updates, then a cosine from lr down to min_lr at update `total`; min_lr
// after that. warmup = 0 starts at lr.
double scheduled_lr(int64_t step, double lr, double min_lr, int64_t warmup, int64_t total);

// ‖g‖ over all n entries, accumulated in double. (A vectorised sum: its order, so its last bit,
// depends on how `grad` is aligned; GptGradient's buffer is aligned.)
double global_norm(const float* grad, size_t n);
// ‖g‖ of each tensor of the table, in the table's order.
std::vector<double> tensor_norms(const ParamTable& table, const float* grad);
// When norm > max_norm > 0, scales every entry by max_norm / norm (gradient clipping).
void clip_to_norm(float* grad, size_t n, double norm, double max_norm);

}  // namespace sf
