// Rounding bounds that the tests' tolerances are derived from (docs/hardening.md, "Every
// instruction set"): a tolerance says how many terms are summed, of what size, at which precision.
#pragma once
#include <cmath>

namespace sf::test {

// The unit roundoff of float, u = 2⁻²⁴ ≈ 6e-8 (double's is 2⁻⁵³ ≈ 1.1e-16).
inline const double kFloatU = std::ldexp(1.0, -24);

// γ_n = n·u / (1 − n·u): a float sum of n terms, in any order, is within γ_{n−1}·Σ|terms| of the
// exact sum (Higham, Accuracy and Stability of Numerical Algorithms, §4.2), so two orders (two SIMD
// widths, two ways of cutting a minibatch) are within 2·γ_n·Σ|terms| of each other.
inline double float_gamma(double n) { return n * kFloatU / (1 - n * kFloatU); }

}  // namespace sf::test
