// The traced backward pass, per architecture: Stepformer's backward listings (core/backprop/
// adjoints.hpp; NOT IN THE PAPER) run on one sequence, every line an event in Pass::Backward.
//
// traced_backward runs the architecture's batched forward (core/gradients/, B = 1, the paper's
// SUMMED loss, loss_weight 1) untraced, to get the forward values, then the architecture's adjoint
// frame (alg 10, 9 or 8) with the loss line's adjoint first: in a tracer's trace it makes exactly
// the events that Algorithm 13's line 6 (12's line 10, 11's line 6) nests before its own event.
// Its ∇θ equals the batched backward's on the same batch (two implementations of the same
// gradient; tests/core/test_backprop_*.cpp): training and stepping never disagree.
#pragma once
#include <vector>

#include "core/gradients/grad.hpp"
#include "core/model/params.hpp"
#include "core/trace/trace.hpp"

namespace sf {

template <class T>
struct TracedGradient {
  T loss = 0;             // Σ over the batch's targets t of −log P[target_t, t] (the paper's summed loss)
  std::vector<T> grad;    // (table.total()) ∇loss(θ) in θ's layout (ParamEntry::offset, column-major)
  // ∂loss/∂X (d_e, ℓ) as X enters layer l = 1 … L and after layer L, as sequence_gradient keeps
  // them (ResidualGradients); the encoder-decoder's decoder X and encoder Z.
  ResidualGradients<T> stream;
};

// loss(θ), ∇loss(θ) and the stream's gradients of `batch` (B = 1: next_token_batch, masked_batch,
// or Algorithm 13's own batch with the prefix-LM's targets) under m's architecture, θ cast to T.
// With a tracer, the backward's events are appended to its trace at the tracer's current depth
// (one frame of the architecture's forward algorithm, Pass::Backward). Throws sf::Error on a
// batch of more than one sequence or one the model cannot take.
template <class T>
TracedGradient<T> traced_backward(const Model& m, const Batch& batch, Tracer* tr);

// Algorithm 13's batch for one sequence x_n (B = 1, the loss of its line 5): position t targets
// x_n[t+1] for t = 1 … ℓ − 1; under the prefix-LM variant only after the prefix (t ≥ p: inside it
// every position sees x[t+1]). DTraining trains on it and its traced line 6 steps through it, so
// training and stepping score the same positions.
Batch dtraining_batch(const Tokens& x, const ModelConfig& c);

}  // namespace sf
