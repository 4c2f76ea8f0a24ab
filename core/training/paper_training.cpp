// The loops and the update shared by the paper's three training algorithms (13, 12, 11):
//   1 for i = 1, 2, …, N_epochs do
//   2   for n = 1, 2, …, N_data do
//         … (the architecture's lines, core/algorithms/alg1N_*.cpp) …
//   U     θ ← θ − η · ∇loss(θ)
#include <cmath>

#include "core/model/error.hpp"
#include "core/training/training.hpp"
#include "core/trace/value_keys.hpp"

namespace sf {

PaperTraining::PaperTraining(Lines lines, int N_data, int N_epochs)
    : lines_(lines), N_data_(N_data), N_epochs_(N_epochs) {
  if (N_data < 1)
    throw Error("Algorithm " + std::to_string(lines.update.alg) + " needs at least one training example (N_data ≥ 1)");
  if (N_epochs < 1) throw Error("N_epochs must be at least 1");
}

void PaperTraining::seek(int i, int n) {
  if (i < 1 || i > N_epochs_ + 1 || n < 1 || n > N_data_ || (i == N_epochs_ + 1 && n != 1))
    throw Error("Algorithm " + std::to_string(algorithm()) + " has no position i = " + std::to_string(i) +
                ", n = " + std::to_string(n) + " (N_epochs = " + std::to_string(N_epochs_) +
                ", N_data = " + std::to_string(N_data_) + ")");
  i_ = i;
  n_ = n;
}

PaperTraining::Update PaperTraining::step(const std::vector<Example>& data, Model& model, float eta,
                                          const TrainOptions& opt, ModelGradient& g, Rng& rng, Tracer* tr) {
  const std::string name = "Algorithm " + std::to_string(algorithm());
  if (done()) throw Error(name + " has finished: all " + std::to_string(N_epochs_) + " epochs are done");
  if (static_cast<int>(data.size()) != N_data_) throw Error(name + ": the data has changed size");
  TraceFrame frame(
      tr, algorithm(),
      tr ? std::vector<Value>{tscalar("N_data", N_data_), tscalar("N_epochs", N_epochs_), tscalar("η", eta)}
         : std::vector<Value>{});
  // L1: for i = 1, 2, …, N_epochs do
  TraceIndex ii(tr, &Indices::i, i_);
  if (tr) tr->line(lines_.epoch, {tscalar("i", i_)});
  // L2: for n = 1, 2, …, N_data do
  TraceIndex in(tr, &Indices::n, n_);
  if (tr) tr->line(lines_.sequence, {tscalar("n", n_)});
  // The architecture's lines: the forward algorithm on example n, loss(θ) and ∇loss(θ)
  const Loss loss = loss_and_gradient(data[n_ - 1], model, opt, g, rng, tr);
  Update u;
  u.loss = loss.loss;
  u.l = loss.l;
  u.terms = loss.terms;
  if (!std::isfinite(u.loss)) {
    u.finite = false;
    return u;
  }
  // LU: θ ← θ − η · ∇loss(θ)
  float* grad = g.grad();
  u.grad_norm = global_norm(grad, g.grad_size());
  if (!std::isfinite(u.grad_norm)) {
    u.finite = false;
    return u;
  }
  u.tensor_norms = tensor_norms(model.table, grad);
  const bool copies = tr && model.theta.size() <= kTraceCopyLimit;
  auto tensor = [&](const ParamEntry& e, const float* base) {
    return MapM<const float>(base + e.offset, e.rows, static_cast<Eigen::Index>(e.cols) * e.count);
  };
  std::vector<Value> values;
  if (tr) {
    values = {tscalar("η", eta), tscalar("‖∇loss(θ)‖", u.grad_norm),
              with_note(tv(keys::tensor_grad_norms,
                           Eigen::Map<const Eigen::VectorXd>(u.tensor_norms.data(), u.tensor_norms.size())),
                        "One row per tensor of the parameter table, in table order.")};
    if (copies)
      for (const ParamEntry& e : model.table.entries()) {
        values.push_back(tv(update_value_name(e.name, UpdateValue::Gradient), tensor(e, grad)));
        values.push_back(tv(update_value_name(e.name, UpdateValue::Before), tensor(e, model.theta.data())));
      }
  }
  sgd_update(model.theta.data(), grad, model.theta.size(), eta);
  if (tr) {
    if (copies)
      for (const ParamEntry& e : model.table.entries())
        values.push_back(tv(update_value_name(e.name, UpdateValue::After), tensor(e, model.theta.data())));
    tr->line(lines_.update, std::move(values));
  }
  // The ends of the loops: the next (i, n)
  if (++n_ > N_data_) {
    n_ = 1;
    ++i_;
  }
  return u;
}

}  // namespace sf
