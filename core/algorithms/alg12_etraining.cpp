// Algorithm 12: θ̂ ← ETraining(x_{1:N_data}, θ)
//   /* Training by masked language modelling */
//   Input: {x_n}_{n=1}^{N_data}, a dataset of sequences. Input: θ, initial encoder-only
//          transformer parameters.
//   Output: θ̂, the trained parameters.
//   Hyperparameters: N_epochs ∈ ℕ, η ∈ (0, ∞), p_mask ∈ (0, 1)
//   1  for i = 1, 2, …, N_epochs do
//   2    for n = 1, 2, …, N_data do
//   3      ℓ ← length(x_n)
//   4      for t = 1, 2, …, ℓ do
//   5        x̃_n[t] ← mask_token or x_n[t] randomly with probability p_mask or 1 − p_mask
//   6      end
//   7      T̃ ← {t ∈ [ℓ] : x̃_n[t] = mask_token}
//   8      P(θ) ← ETransformer(x̃_n | θ)
//   9      loss(θ) = −Σ_{t ∈ T̃} log P(θ)[x_n[t], t]
//   10     θ ← θ − η · ∇loss(θ)
//   11   end
//   12 end
//   13 return θ̂ = θ
// Lines 1, 2 and 10 are PaperTraining's (core/training/paper_training.cpp); this file is lines
// 3–9 (what T̃ holds with BERT's 80/10/10 rule or given masks: core/arch/bert.hpp). ∇loss(θ) is
// computed by reverse mode (core/gradients/grad_etransformer.cpp); when traced, line 10 also nests
// Algorithm 9's traced backward (core/backprop/adjoint_etransformer.cpp), which computes the same ∇θ.
#include <algorithm>
#include <cmath>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/bert.hpp"
#include "core/backprop/traced_backward.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

// The positions of T̃ given for update k (1-based) by opt.given_masks, as a 0/1 flag per position.
std::vector<bool> given_positions(const TrainOptions& opt, int k, int l) {
  if (k > static_cast<int>(opt.given_masks.size())) throw Error("--masks has no line " + std::to_string(k));
  std::vector<bool> masked(l, false);
  for (int p : opt.given_masks[k - 1]) {
    if (p < 1 || p > l)
      throw Error("--masks line " + std::to_string(k) + ": position " + std::to_string(p) +
                  " is outside the sequence (ℓ = " + std::to_string(l) + ")");
    masked[p - 1] = true;
  }
  return masked;
}

}  // namespace

PaperTraining::Loss ETraining::loss_and_gradient(const Example& ex, const Model& model, const TrainOptions& opt,
                                                 ModelGradient& g, Rng& rng, Tracer* tr) {
  // θ changes at the update line while the trace lives: bind it by copy (trace.hpp).
  TraceParamCopies copies(tr);
  TraceParameters params(tr, model.table, model.theta.data());  // each bound tensor says its entry of θ
  const ModelConfig& c = model.config;
  const Tokens& x = ex.x;
  // L3: ℓ ← length(x_n)
  const int l = static_cast<int>(x.size());
  if (tr) tr->line(lines::e_training::length, {ttokens("x_n", x), tscalar("ℓ", l)});
  const std::vector<bool> given =
      opt.given_masks.empty() ? std::vector<bool>{} : given_positions(opt, (i() - 1) * N_data() + n(), l);
  Tokens x_tilde = x;                // x̃_n: position t is replaced at step t of the loop
  std::vector<int> targets(l, 0);    // x_n[t] for t ∈ T̃, else 0
  // L4: for t = 1, 2, …, ℓ do
  for (int t = 1; t <= l; ++t) {
    TraceIndex it(tr, &Indices::t, t);
    if (tr) tr->line(lines::e_training::for_t, {tscalar("t", t)});
    // L5: x̃_n[t] ← mask_token or x_n[t] randomly with probability p_mask or 1 − p_mask
    MaskDraw d;
    if (given.empty()) {
      d = draw_mask(x[t - 1], c, opt, rng);
    } else {
      d.chosen = given[t - 1];
      d.token = d.chosen ? c.mask_token() : x[t - 1];
    }
    x_tilde[t - 1] = d.token;
    if (d.chosen) targets[t - 1] = x[t - 1];
    if (tr)
      tr->line(lines::e_training::mask_token,
               {with_note(tscalar("x̃_n[t]", d.token),
                          given.empty() ? "Drawn: u = " + std::to_string(d.u) + (d.chosen ? " < " : " ≥ ") +
                                              "p_mask = " + std::to_string(opt.p_mask) +
                                              (opt.bert_80_10_10 ? " (BERT's 80/10/10 rule, not the paper's)" : "")
                                        : std::string("Given by --masks (not drawn).")),
                ttokens("x̃_n", x_tilde)});
  }
  const TraceSequences labels(tr, x_tilde, x_tilde);  // lines 7–9 label their token axes by x̃_n
  // L7: T̃ ← {t ∈ [ℓ] : x̃_n[t] = mask_token}   (the chosen positions; a 1×ℓ row of 0/1)
  MatF T_tilde = MatF::Zero(1, l);  // (1, ℓ)
  std::string positions;
  for (int t = 1; t <= l; ++t)
    if (targets[t - 1]) {
      T_tilde(0, t - 1) = 1.0f;
      positions += (positions.empty() ? "" : ", ") + std::to_string(t);
    }
  if (tr)
    tr->line(lines::e_training::masked, {with_note(tv("T̃", T_tilde, Axis::Feature, Axis::TokenX),
                               "T̃ = {" + positions + "}: 1 marks a position t ∈ T̃, scored against x_n[t]." +
                                   (opt.bert_80_10_10 ? " With BERT's 80/10/10 rule T̃ is every chosen position, "
                                                        "also those replaced by a random token or kept."
                                                      : ""))});
  // L8: P(θ) ← ETransformer(x̃_n | θ)
  if (tr) {  // the stepped run: Algorithm 9 with its own trace, nested under this line
    const MatF P = architecture(c).forward(model, {}, x_tilde, tr);  // (N_V, ℓ)
    tr->line(lines::e_training::forward, {tv("P", P, Axis::Vocab, Axis::TokenX)});
  }
  // L9: loss(θ) = −Σ_{t ∈ T̃} log P(θ)[x_n[t], t]   (and ∇loss(θ), for line 10)
  Batch batch;
  batch.B = 1;
  batch.l = l;
  batch.tokens = x_tilde;
  batch.lengths = {l};
  batch.targets = targets;
  const float loss = g.loss_and_gradient(model, batch, 1.0f);
  const int terms = static_cast<int>(std::count_if(targets.begin(), targets.end(), [](int y) { return y != 0; }));
  if (tr) {
    const VecF losses = g.position_losses();  // (ℓ) −log P[x_n[t], t], 0 for t ∉ T̃
    MatF row(1, terms);                       // (1, |T̃|)
    for (int t = 0, j = 0; t < l; ++t)
      if (targets[t]) row(0, j++) = losses(t);
    tr->line(lines::e_training::loss, {with_note(tv("−log P[x_n[t], t]", row), "One column per t ∈ T̃ = {" + positions + "}."),
                     tscalar("loss", loss)});
  }
  // L10's ∇loss(θ), stepped: Algorithm 9's backward listing (not in the paper), nested before line 10's
  // event (PaperTraining makes it). The update uses g's batched gradient, which the traced one equals.
  if (tr && std::isfinite(loss)) traced_backward<float>(model, batch, tr);
  return {loss, l, terms};
}

}  // namespace sf
