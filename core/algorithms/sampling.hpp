// Sampling from a distribution with temperature (Algorithms 14 and 15, line "sample a token
// y from q ∝ p^{1/τ}"), as small pure functions with an explicit seeded generator.
#pragma once
#include "core/model/rng.hpp"
#include "core/model/types.hpp"

namespace sf {
// q ∝ p^{1/τ}. τ = 0 gives the one-hot of the argmax (the limit τ → 0).
VecF temperature(const VecF& p, double tau);
// 1-based index of the largest entry (the first one on ties).
int sample_argmax(const VecF& p);
// 1-based index drawn from the distribution q with the uniform number coin ∈ [0, 1).
int sample_mult(const VecF& q, double coin);
}  // namespace sf
