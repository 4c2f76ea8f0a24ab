// Rounding bounds that the tests' tolerances are derived from (docs/hardening.md, "Every
// instruction set"): a tolerance says how many terms are summed, of what size, at which precision.
#pragma once
#include <cmath>

namespace sf::test {

// The unit roundoff of float, u = 2⁻²⁴ ≈ 6e-8.
inline const double kFloatU = std::ldexp(1.0, -24);
// The unit roundoff of double, u = 2⁻⁵³ ≈ 1.1e-16.
inline const double kDoubleU = std::ldexp(1.0, -53);

// γ_n = n·u / (1 − n·u): a float sum of n terms, in any order, is within γ_{n−1}·Σ|terms| of the
// exact sum (Higham, Accuracy and Stability of Numerical Algorithms, §4.2), so two orders (two SIMD
// widths, two ways of cutting a minibatch) are within 2·γ_n·Σ|terms| of each other. A product or
// quotient of n factors, each rounded, is within γ_n relative (Higham, Lemma 3.1).
inline double float_gamma(double n) { return n * kFloatU / (1 - n * kFloatU); }
// The same in double.
inline double double_gamma(double n) { return n * kDoubleU / (1 - n * kDoubleU); }

// An elementary function (exp, log, erf, tanh, sqrt), in float or double, counted as this many
// roundings of its result: glibc's and Eigen's kernels are within 1–2 ulp (2 ulp = 4u).
inline constexpr double kFunctionRoundings = 4;

// A value computed in double and stored as float (a trace's values, sampling's q): one rounding to
// float, u·|x|, on top of the double's own error (γ_16 in double, 10⁸ times smaller, covers the
// short chains of the hand-worked tests).
inline double double_to_float_error(double x) { return (kFloatU + double_gamma(16)) * std::abs(x); }

// A double constant written as the shortest decimal that reads back as the nearest double (Python's
// repr, C++'s std::to_chars): within u·|x| of the value it stands for.
inline double repr_rounding(double x) { return kDoubleU * std::abs(x); }

// The relative error of each p_i of a float softmax over n entries whose logits are off by at most
// logit_error (absolute): δp_i/p_i = δz_i − Σ_j p_j·δz_j ≤ 2·max|δz|, plus its own rounding: each
// exp (kFunctionRoundings), the sum of n (γ_{n−1}) and the division (u): γ_{2k+n}.
inline double float_softmax_error(double n, double logit_error = 0) {
  return 2 * logit_error + float_gamma(2 * kFunctionRoundings + n);
}

// How far a constant printed with `digits` significant digits can be from the value it stands for:
// half a unit in its last printed place (0.5e-7 for 1.2345678, 0.5e-8 for 0.12345678).
inline double print_rounding(double printed, int digits) {
  return 0.5 * std::pow(10.0, std::floor(std::log10(std::abs(printed))) - digits + 1);
}

// The error of a central difference (f(x + h) − f(x − h))/2h in double: truncation h²·|f‴|/6 plus
// the rounding of f's two values, u·|f|/h (each f within u·|f| when f's own error is that small;
// pass f_error for a larger one).
inline double central_difference_error(double h, double f, double f3, double f_error = -1) {
  const double rounding = f_error < 0 ? kDoubleU * std::abs(f) : f_error;
  return h * h * std::abs(f3) / 6 + rounding / h;
}
// x ± h are rounded, so the step a central difference takes is 2h within 2u·|x|: the quotient is
// off by u·|x|/h relative (3e-11 for |x| ≤ 3 at h = 1e-5; 3e-8 at h = 1e-8).
inline double step_rounding(double x, double h) { return kDoubleU * std::abs(x) / h; }

// A statistical bound: the share of n independent draws that hit, each with probability p, is
// Binomial(n, p)/n with σ = √(p(1 − p)/n). `sigmas` σ: 5σ is passed by chance with probability
// ≈ 6e-7 (normal tail, two-sided), so a seeded test that holds to it is not tuned to its seed.
inline double binomial_tolerance(double p, double n, double sigmas = 5) {
  return sigmas * std::sqrt(p * (1 - p) / n);
}

}  // namespace sf::test
