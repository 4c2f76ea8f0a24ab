// Algorithm 11: θ̂ ← EDTraining(z_{1:N_data}, x_{1:N_data}, θ)
//   /* Training a seq2seq model */
//   Input: {(z_n, x_n)}_{n=1}^{N_data}, a dataset of sequence pairs.
//   Input: θ, initial transformer parameters.
//   Output: θ̂, the trained parameters.
//   Hyperparameters: N_epochs ∈ ℕ, η ∈ (0, ∞)
//   1 for i = 1, 2, …, N_epochs do
//   2   for n = 1, 2, …, N_data do
//   3     ℓ ← length(x_n)
//   4     P(θ) ← EDTransformer(z_n, x_n | θ)
//   5     loss(θ) = −Σ_{t=1}^{ℓ−1} log P(θ)[x_n[t+1], t]
//   6     θ ← θ − η · ∇loss(θ)
//   7   end
//   8 end
//   9 return θ̂ = θ
// Lines 1, 2 and 6 are PaperTraining's (core/training/paper_training.cpp); this file is lines
// 3–5. ∇loss(θ) is computed by reverse mode (core/gradients/grad_edtransformer.cpp), through the
// cross-attention into the encoder; when traced, line 6 also nests Algorithm 8's traced backward
// (core/backprop/adjoint_edtransformer.cpp), which computes the same ∇θ.
#include <cmath>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/ed.hpp"
#include "core/backprop/traced_backward.hpp"
#include "core/gradients/grad.hpp"

namespace sf {

PaperTraining::Loss EdTraining::loss_and_gradient(const Example& ex, const Model& model, const TrainOptions& opt,
                                                  ModelGradient& g, Rng& rng, Tracer* tr) {
  // θ changes at the update line while the trace lives: bind it by copy (trace.hpp).
  TraceParamCopies copies(tr);
  TraceParameters params(tr, model.table, model.theta.data());  // each bound tensor says its entry of θ
  const Tokens &z = ex.z, &x = ex.x;
  TraceSequences labels(tr, x, z);  // this example's tokens label the values of lines 3–5
  // L3: ℓ ← length(x_n)
  const int l = static_cast<int>(x.size());
  if (tr) tr->line(lines::ed_training::length, {ttokens("z_n", z), ttokens("x_n", x), tscalar("ℓ", l)});
  // L4: P(θ) ← EDTransformer(z_n, x_n | θ)
  if (tr) {  // the stepped run: Algorithm 8 with its own trace, nested under this line
    const MatF P = edtransformer<float>(z, x, model.config, ed_weights(model), tr);  // (N_V, ℓ)
    tr->line(lines::ed_training::forward, {tv("P", P, Axis::Vocab, Axis::TokenX)});
  }
  // L5: loss(θ) = −Σ_{t=1}^{ℓ−1} log P(θ)[x_n[t+1], t]   (and ∇loss(θ), for line 6)
  Batch batch;
  EdArchitecture().make_batch(model.config, {ex}, {0}, l, static_cast<int>(z.size()), opt, rng, batch);
  const float loss = g.loss_and_gradient(model, batch, 1.0f);
  const VecF terms = g.position_losses().head(std::max(0, l - 1));  // (ℓ − 1)
  if (tr) tr->line(lines::ed_training::loss, {tv("−log P[x_n[t+1], t]", terms.transpose(), Axis::Feature, Axis::TokenX), tscalar("loss", loss)});
  // L6's ∇loss(θ), stepped: Algorithm 8's backward listing (not in the paper), nested before line 6's
  // event (PaperTraining makes it). The update uses g's batched gradient, which the traced one equals.
  if (tr && std::isfinite(loss)) traced_backward<float>(model, batch, tr);
  return {loss, l, std::max(0, l - 1)};
}

}  // namespace sf
