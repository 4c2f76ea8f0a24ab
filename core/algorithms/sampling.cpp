#include "core/algorithms/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/model/error.hpp"

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

void check_top_k_top_p(const TopKTopP& cut) {
  if (cut.k < 0)
    throw Error("top-k must be a whole number ≥ 1 (or 0 for no top-k cut), not " + std::to_string(cut.k));
  if (!(cut.p > 0.0 && cut.p <= 1.0))
    throw Error("top-p must be a number in (0, 1] (1 for no top-p cut), not " + std::to_string(cut.p));
}

std::vector<int> order_by_decreasing(const VecF& p) {
  std::vector<int> order(static_cast<size_t>(p.size()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p(a) > p(b); });
  return order;
}

namespace {

// n = min(n_k, n_p) of sampling.hpp's step 2, from q in decreasing-p order; sums in double.
int kept_count(const VecF& q_sorted, const TopKTopP& cut) {
  const int N = static_cast<int>(q_sorted.size());
  const int n_k = cut.k > 0 ? std::min(cut.k, N) : N;
  if (cut.p >= 1.0) return n_k;
  double top_k_mass = 0.0;
  for (int j = 0; j < n_k; ++j) top_k_mass += q_sorted(j);
  double mass = 0.0;
  for (int j = 0; j < n_k; ++j) {
    mass += q_sorted(j);
    if (mass >= cut.p * top_k_mass) return j + 1;
  }
  return n_k;  // rounding: the whole top-k set
}

}  // namespace

TokenCut cut_top_k_top_p(const VecF& p, const VecF& q, const TopKTopP& cut) {
  check_top_k_top_p(cut);
  TokenCut out;
  out.order = order_by_decreasing(p);
  const int N = static_cast<int>(p.size());
  out.p_sorted.resize(N);
  out.q_sorted.resize(N);
  for (int j = 0; j < N; ++j) {
    out.p_sorted(j) = p(out.order[j]);
    out.q_sorted(j) = q(out.order[j]);
  }
  out.kept = kept_count(out.q_sorted, cut);
  out.mass = 0.0;
  for (int j = 0; j < out.kept; ++j) out.mass += out.q_sorted(j);
  if (out.kept == N) {  // nothing cut: q itself, bit for bit (so top-k ≥ N_V and top-p = 1 draw as plain sampling)
    out.q = q;
    return out;
  }
  out.q = VecF::Zero(N);
  for (int j = 0; j < out.kept; ++j) out.q(out.order[j]) = static_cast<float>(out.q_sorted(j) / out.mass);
  return out;
}

}  // namespace sf
