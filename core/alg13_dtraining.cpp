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
// Here one call of DTraining::step runs one pass of lines 3–6 (the loops of lines 1–2 are its
// position (i, n)); running step() until done() is the whole algorithm, and θ̂ is model.theta.
// ∇loss(θ) is computed by reverse mode (core/grad_*.cpp), as §7 says automatic differentiation
// does.
#include <cmath>

#include "core/algorithms.hpp"
#include "core/error.hpp"
#include "core/training.hpp"

namespace sf {

DTraining::DTraining(int N_data, int N_epochs) : N_data_(N_data), N_epochs_(N_epochs) {
  if (N_data < 1) throw Error("Algorithm 13 needs at least one training sequence (N_data ≥ 1)");
  if (N_epochs < 1) throw Error("N_epochs must be at least 1");
}

void DTraining::seek(int i, int n) {
  if (i < 1 || i > N_epochs_ + 1 || n < 1 || n > N_data_ || (i == N_epochs_ + 1 && n != 1))
    throw Error("Algorithm 13 has no position i = " + std::to_string(i) + ", n = " + std::to_string(n) +
                " (N_epochs = " + std::to_string(N_epochs_) + ", N_data = " + std::to_string(N_data_) + ")");
  i_ = i;
  n_ = n;
}

DTraining::Update DTraining::step(const std::vector<Tokens>& data, Model& model, float eta, GptGradient<float>& g,
                                  Tracer* tr) {
  if (done()) throw Error("Algorithm 13 has finished: all " + std::to_string(N_epochs_) + " epochs are done");
  if (static_cast<int>(data.size()) != N_data_) throw Error("Algorithm 13: the data has changed size");
  const ModelConfig& c = model.config;
  TraceFrame frame(
      tr, 13,
      tr ? std::vector<Value>{tscalar("N_data", N_data_), tscalar("N_epochs", N_epochs_), tscalar("η", eta)}
         : std::vector<Value>{});
  // L1: for i = 1, 2, …, N_epochs do
  TraceIndex ii(tr, &Indices::i, i_);
  if (tr) tr->line(13, 1, {tscalar("i", i_)});
  // L2: for n = 1, 2, …, N_data do
  TraceIndex in(tr, &Indices::n, n_);
  if (tr) tr->line(13, 2, {tscalar("n", n_)});
  const Tokens& x = data[n_ - 1];
  // L3: ℓ ← length(x_n)
  const int l = static_cast<int>(x.size());
  if (tr) tr->line(13, 3, {ttokens("x_n", x), tscalar("ℓ", l)});
  // L4: P(θ) ← DTransformer(x_n | θ)
  const GptW<const float> W = model.weights();
  if (tr) {  // the stepped run: Algorithm 10 with its own trace, nested under this line
    const MatF P = dtransformer<float>(x, c, W, tr);  // (N_V, ℓ)
    tr->line(13, 4, {tv("P", P, Axis::Vocab, Axis::TokenX)});
  }
  const Batch batch = make_batch({x}, l, c.eos_token());
  // L5: loss(θ) = −Σ_{t=1}^{ℓ−1} log P(θ)[x_n[t+1], t]
  Update u;
  u.l = l;
  u.loss = dtransformer_forward<float>(c, W, batch, 1.0f, g.cache);
  if (tr)
    tr->line(13, 5,
             {tv("−log P[x_n[t+1], t]", g.cache.loss.losses.head(std::max(0, l - 1)).transpose(), Axis::Feature,
                 Axis::TokenX),
              tscalar("loss", u.loss)});
  if (!std::isfinite(u.loss)) {
    u.finite = false;
    return u;
  }
  // L6: θ ← θ − η · ∇loss(θ)
  dtransformer_backward<float>(W, g.cache, g.ws, g.dW);
  u.grad_norm = global_norm(g.grad.data(), g.grad.size());
  if (!std::isfinite(u.grad_norm)) {
    u.finite = false;
    return u;
  }
  u.tensor_norms = tensor_norms(model.table, g.grad.data());
  std::vector<Value> values;
  if (tr) {
    values = {tscalar("η", eta), tscalar("‖∇loss(θ)‖", u.grad_norm),
              with_note(tv("‖∇loss(θ)‖ per tensor",
                           Eigen::Map<const Eigen::VectorXd>(u.tensor_norms.data(), u.tensor_norms.size())),
                        "One row per tensor of the parameter table, in table order.")};
    if (model.theta.size() <= kTraceCopyLimit)
      for (const ParamEntry& e : model.table.entries()) {
        const Eigen::Index rows = e.rows, cols = static_cast<Eigen::Index>(e.cols) * e.count;
        values.push_back(tv("∇" + e.name, MapM<const float>(g.grad.data() + e.offset, rows, cols)));
        values.push_back(tv(e.name + " (before)", MapM<const float>(model.theta.data() + e.offset, rows, cols)));
      }
  }
  sgd_update(model.theta.data(), g.grad.data(), model.theta.size(), eta);
  if (tr) {
    if (model.theta.size() <= kTraceCopyLimit)
      for (const ParamEntry& e : model.table.entries())
        values.push_back(tv(e.name + " (after)", MapM<const float>(model.theta.data() + e.offset, e.rows,
                                                                   static_cast<Eigen::Index>(e.cols) * e.count)));
    tr->line(13, 6, std::move(values));
  }
  // L7–L8: end of the loops: the next (i, n)
  if (++n_ > N_data_) {
    n_ = 1;
    ++i_;
  }
  return u;
}

}  // namespace sf
