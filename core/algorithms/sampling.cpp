#include "core/algorithms/sampling.hpp"

#include <cmath>

namespace sf {

int sample_argmax(const VecF& p) {
  Eigen::Index i = 0;
  p.maxCoeff(&i);
  return static_cast<int>(i) + 1;
}

VecF temperature(const VecF& p, double tau) {
  VecF q = VecF::Zero(p.size());
  if (tau <= 0.0) {
    q(sample_argmax(p) - 1) = 1.0f;
    return q;
  }
  // p^{1/τ} computed as exp((log p − max log p)/τ) to stay finite for small τ.
  const Eigen::ArrayXd logp = p.cast<double>().array().log();
  const double mx = logp.maxCoeff();
  const Eigen::ArrayXd w = ((logp - mx) / tau).exp();
  return (w / w.sum()).cast<float>().matrix();
}

int sample_mult(const VecF& q, double coin) {
  double cdf = 0.0;
  for (Eigen::Index i = 0; i < q.size(); ++i) {
    cdf += q(i);
    if (coin < cdf) return static_cast<int>(i) + 1;
  }
  for (Eigen::Index i = q.size(); i-- > 0;)  // rounding: the last token with q > 0
    if (q(i) > 0) return static_cast<int>(i) + 1;
  return static_cast<int>(q.size());
}

}  // namespace sf
