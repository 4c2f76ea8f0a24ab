// Finite-difference gradient checks for the tests of core/grad_*.cpp (double precision).
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "core/model/params.hpp"
#include "core/model/rng.hpp"
#include "core/model/types.hpp"
#include "float_bounds.hpp"

namespace sf::test {

using MatD = Mat<double>;

// A matrix of N(0, scale²) entries from a seeded generator.
inline MatD random_matrix(Rng& rng, Eigen::Index rows, Eigen::Index cols, double scale = 1.0) {
  MatD m(rows, cols);
  for (Eigen::Index c = 0; c < cols; ++c)
    for (Eigen::Index r = 0; r < rows; ++r) m(r, c) = scale * rng.normal();
  return m;
}

// Central differences (f(x + h) − f(x − h)) / 2h of f with respect to each of the n doubles at
// x (each is restored after use). Their error, in double (u = 2⁻⁵³ ≈ 1.1e-16): truncation
// h²·|f‴|/6 plus rounding u·|f|/h (central_difference_error: f(x + h) and f(x − h) are the same
// operations on nearly the same values, so their rounding differs by about u·|f|), and the step's
// own rounding, u·|x|/h relative (step_rounding). All of it is computed in double, so no SIMD width
// or FMA contraction comes near it.
inline MatD numeric_gradient(double* x, Eigen::Index rows, Eigen::Index cols, const std::function<double()>& f,
                             double h = 1e-6) {
  MatD g(rows, cols);
  for (Eigen::Index k = 0; k < rows * cols; ++k) {
    const double keep = x[k];
    x[k] = keep + h;
    const double up = f();
    x[k] = keep - h;
    const double down = f();
    x[k] = keep;
    g.data()[k] = (up - down) / (2 * h);
  }
  return g;
}
inline MatD numeric_gradient(MatD& m, const std::function<double()>& f, double h = 1e-6) {
  return numeric_gradient(m.data(), m.rows(), m.cols(), f, h);
}

// The relative error a gradient check allows. With h = 1e-5, |f| ≤ 10 (a few −log P of ≈ 2 each)
// and |f‴| ≤ 10, each difference is off by central_difference_error(1e-5, 10, 10) ≈ 1.7e-10 +
// 1.1e-10 (the step's rounding, 3e-11 relative for |θ| ≤ 3, is smaller), a tensor of n ≤ 64
// entries by √n times that, 2.2e-9: 1e-6 relative holds for every tensor whose gradient norm is
// ≥ 2.2e-3 (a smaller one is checked by size, as b_k's zeros are). A wrong backward (a missing
// term, a transposed index) is off by O(1). Measured (issue 21's audit, -march=x86-64-v3): at most
// 2.4e-7, on the tensors with the smallest gradients; 1e-9 – 1e-11 typically.
inline const double kGradCheckRelative = 1e-6;

// Two double computations of the same model that sum the same terms in other orders (batched
// against one sequence at a time, a batch against the sum of its sequences): each of the ≈ 12 sums a
// value is deep (forward; as many back) is within γ_16·Σ|terms| ≤ γ_16·16·4 of exact (n ≤ 16 terms
// of size ≤ 4 in these tiny models), carried with a gain ≈ 1 (layer norm renormalises, softmax
// averages), on each side: ≈ 3e-12, absolute on P (≤ 1) and relative on a loss or a gradient.
inline const double kReorderedDouble = 2 * 12 * double_gamma(16) * 16 * 4;

// ‖a − b‖ / max(‖a‖, ‖b‖), 0 when both are 0.
template <class A, class B>
double relative_error(const A& a, const B& b) {
  const double scale = std::max(a.norm(), b.norm());
  return scale == 0 ? 0.0 : (a - b).norm() / scale;
}

// ∂loss/∂b_k^h is exactly 0: b_k adds the same b_kᵀ q to every score S[:, t_x] of a column, and
// the column softmax ignores a constant shift. Computed gradients of b_k are rounding noise, to
// be checked by size (against the scale of the whole gradient), not by direction.
inline bool zero_by_softmax_shift(const std::string& tensor) {
  const std::string suffix = "attn.b_k";
  return tensor.size() >= suffix.size() && tensor.compare(tensor.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Checks the gradient `grad` (θ's layout) of every tensor of `table` against central differences
// of f() over theta (both table.total() long): relative error < kGradCheckRelative, a nonzero gradient (larger
// than min_share of the whole gradient's norm), and the exact zeros (b_k's, by default: RoPE
// rotates b_k with each key's position, so a self-attention's b_k matters there) by size.
// Returns the worst relative error.
inline double check_every_tensor(const ParamTable& table, double* theta, const double* grad,
                                 const std::function<double()>& f, double min_share = 0.0,
                                 const std::function<bool(const std::string&)>& zero = zero_by_softmax_shift) {
  const double scale = Eigen::Map<const Vec<double>>(grad, static_cast<Eigen::Index>(table.total())).norm();
  double worst = 0;
  for (const ParamEntry& e : table.entries()) {
    const Eigen::Index n = static_cast<Eigen::Index>(e.size());
    const MatD numeric = numeric_gradient(theta + e.offset, n, 1, f, 1e-5);
    const Eigen::Map<const MatD> analytic(grad + e.offset, n, 1);
    if (zero(e.name)) {
      // Rounding noise only: the analytic one sums ≤ a few hundred terms in double (γ_1000 ≈ 1.1e-13
      // of their size, ×10 for terms larger than the gradient they cancel to); the numeric one is
      // the differences' rounding, u·|f|/h ≈ 1.1e-10 each (|f| ≤ 10), ≤ 10³ of them.
      EXPECT_LT(analytic.norm(), 10 * double_gamma(1000) * scale) << e.name;
      EXPECT_LT(numeric.norm(), 1e3 * central_difference_error(1e-5, 10, 0) * std::max(scale, 1.0)) << e.name;
      continue;
    }
    EXPECT_GT(analytic.norm(), min_share * scale) << e.name;
    const double err = relative_error(analytic, numeric);
    EXPECT_LT(err, kGradCheckRelative) << e.name;
    worst = std::max(worst, err);
  }
  return worst;
}

// θ in double: every entry N(0, scale²), γ's around 1.
inline std::vector<double> spread_theta(const ParamTable& table, uint64_t seed, double scale) {
  Rng rng(seed);
  std::vector<double> theta(table.total());
  for (const ParamEntry& e : table.entries())
    for (size_t k = 0; k < e.size(); ++k)
      theta[e.offset + k] = (e.role == ParamRole::Gain ? 1.0 : 0.0) + scale * rng.normal();
  return theta;
}

// A model of configuration c whose θ is spread_theta(table, seed, scale) rounded to float.
inline Model spread_model(const ModelConfig& c, uint64_t seed, double scale) {
  Model m(c);
  const std::vector<double> theta = spread_theta(m.table, seed, scale);
  m.theta.assign(theta.begin(), theta.end());
  return m;
}

}  // namespace sf::test
