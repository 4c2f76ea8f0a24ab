#include "core/training/optim.hpp"

#include <cmath>

namespace sf {

namespace {
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

bool decays(ParamRole r) {
  return r == ParamRole::Weight || r == ParamRole::OutputWeight || r == ParamRole::Embedding ||
         r == ParamRole::Position;
}
}  // namespace

void sgd_update(float* theta, float* grad, size_t n, float eta) {
  // Alg. 13 L6: θ ← θ − η · ∇loss(θ)
  ArrayMap g(grad, static_cast<Eigen::Index>(n));
  g *= eta;
  ArrayMap(theta, static_cast<Eigen::Index>(n)) -= g;
}

void adam_update(const ParamTable& table, float* theta, const float* grad, double lr, const AdamOptions& opt,
                 AdamState& s) {
  const Eigen::Index n = static_cast<Eigen::Index>(table.total());
  if (s.m.size() != table.total()) {
    s.m.assign(table.total(), 0.0f);
    s.v.assign(table.total(), 0.0f);
    s.t = 0;
  }
  s.step.resize(table.total());
  s.t += 1;
  const float b1 = static_cast<float>(opt.beta1), b2 = static_cast<float>(opt.beta2);
  const double bc1 = 1.0 - std::pow(opt.beta1, static_cast<double>(s.t));
  const double bc2 = 1.0 - std::pow(opt.beta2, static_cast<double>(s.t));
  const float step_size = static_cast<float>(lr / bc1), inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  const float eps = static_cast<float>(opt.eps);
  ArrayMap m(s.m.data(), n), v(s.v.data(), n), step(s.step.data(), n), th(theta, n);
  const ConstArrayMap g(grad, n);
  m = b1 * m + (1.0f - b1) * g;
  v = b2 * v + (1.0f - b2) * g.square();
  step = step_size * m / (v.sqrt() * inv_sqrt_bc2 + eps);
  if (opt.weight_decay > 0) {  // θ ← θ − η·λ·θ = θ · (1 − η·λ)
    const float keep = static_cast<float>(1.0 - lr * opt.weight_decay);
    for (const ParamEntry& e : table.entries())
      if (decays(e.role)) th.segment(static_cast<Eigen::Index>(e.offset), static_cast<Eigen::Index>(e.size())) *= keep;
  }
  th -= step;
}

double scheduled_lr(int64_t step, double lr, double min_lr, int64_t warmup, int64_t total) {
  if (step <= warmup) return lr * static_cast<double>(step) / static_cast<double>(warmup);
  if (step >= total) return min_lr;
  const double progress = static_cast<double>(step - warmup) / static_cast<double>(total - warmup);
  return min_lr + 0.5 * (lr - min_lr) * (1.0 + std::cos(3.14159265358979323846 * progress));
}

double global_norm(const float* grad, size_t n) {
  return std::sqrt(ConstArrayMap(grad, static_cast<Eigen::Index>(n)).cast<double>().square().sum());
}

std::vector<double> tensor_norms(const ParamTable& table, const float* grad) {
  std::vector<double> out;
  out.reserve(table.entries().size());
  for (const ParamEntry& e : table.entries()) out.push_back(global_norm(grad + e.offset, e.size()));
  return out;
}

void clip_to_norm(float* grad, size_t n, double norm, double max_norm) {
  if (max_norm > 0 && norm > max_norm)
    ArrayMap(grad, static_cast<Eigen::Index>(n)) *= static_cast<float>(max_norm / norm);
}

}  // namespace sf
