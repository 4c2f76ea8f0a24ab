// Algorithm 13: θ̂ ← DTraining(x_{1:N_data}, θ)
//   /* Training next token prediction */
//   Input: {x_n}_{n=1}^{N_data}, a dataset of sequences. Input: θ, initial decoder-only
//          transformer parameters.
//   Output: θ̂, the trained parameters.
//   Hyperparameters: N_epochs ∈ ℕ, η ∈ (0, ∞)
//   1 for i = 1, 2, …, N_epochs do
//   2   for n = 1, 2, …, N_data do
//   3     ℓ ← length(x_n)
//   4     P(θ) ← DTransformer(x_n | θ)
//   5     loss(θ) = −Σ_{t=1}^{ℓ−1} log P(θ)[x_n[t+1], t]
//   6     θ ← θ − η · ∇loss(θ)
//   7   end
//   8 end
//   9 return θ̂ = θ
// Lines 1, 2 and 6 are PaperTraining's (core/training/paper_training.cpp); this file is lines
// 3–5. ∇loss(θ) is computed by reverse mode (core/gradients/), as §7 says automatic
// differentiation does; with a tracer, line 6's ∇loss(θ) is also stepped through (core/backprop/:
// Stepformer's backward listings, not in the paper), nested before line 6.
#include <cmath>

#include "core/algorithms/algorithms.hpp"
#include "core/backprop/traced_backward.hpp"
#include "core/gradients/grad.hpp"
#include "core/training/training.hpp"

namespace sf {

PaperTraining::Loss DTraining::loss_and_gradient(const Example& ex, const Model& model, const TrainOptions&,
                                                 ModelGradient& g, Rng&, Tracer* tr) {
  // θ changes at the update line while the trace lives: bind it by copy (trace.hpp).
  TraceParamCopies copies(tr);
  TraceParameters params(tr, model.table, model.theta.data());  // each bound tensor says its entry of θ
  const Tokens& x = ex.x;
  const TraceSequences labels(tr, x, x);  // lines 3–5 and their DTransformer call label token axes by x_n
  // L3: ℓ ← length(x_n)
  const int l = static_cast<int>(x.size());
  if (tr) tr->line(lines::d_training::length, {ttokens("x_n", x), tscalar("ℓ", l)});
  // L4: P(θ) ← DTransformer(x_n | θ)
  if (tr) {  // the stepped run: Algorithm 10 with its own trace, nested under this line
    const MatF P = dtransformer<float>(x, model.config, model.weights(), tr);  // (N_V, ℓ)
    tr->line(lines::d_training::forward, {tv("P", P, Axis::Vocab, Axis::TokenX)});
  }
  // L5: loss(θ) = −Σ_{t=1}^{ℓ−1} log P(θ)[x_n[t+1], t]   (and ∇loss(θ), for line 6)
  // (Prefix-LM, variant, seed 004: no loss term inside the prefix, t < p: position t sees x[t+1] there)
  const Batch batch = dtraining_batch(x, model.config);
  const float loss = g.loss_and_gradient(model, batch, 1.0f);
  if (tr)
    tr->line(lines::d_training::loss,
             {tv("−log P[x_n[t+1], t]", g.position_losses().head(std::max(0, l - 1)).transpose(), Axis::Feature,
                 Axis::TokenX),
              tscalar("loss", loss)});
  // L6's ∇loss(θ), stepped: the backward listings run on the same batch (core/backprop/), their frames
  // nested before line 6's event (PaperTraining's). The update itself uses the batched gradient above;
  // the traced one equals it (tests/core/test_backprop_training.cpp).
  if (tr && std::isfinite(loss)) traced_backward<float>(model, batch, tr);
  return {loss, l, std::max(0, l - 1)};
}

}  // namespace sf
