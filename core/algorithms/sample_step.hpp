// The "sample a token y from q ∝ p^{1/τ}" line of Algorithms 14 (line 5) and 15 (line 6), shared:
// τ, then top-k / top-p (not in the paper; sampling.hpp), then the draw.
#pragma once
#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/sampling.hpp"
#include "core/trace/trace.hpp"

namespace sf {
// Sets step.q_tau, step.q, step.kept, step.kept_mass and step.y from step.p. When `cut` is active,
// traces three sub-steps of `line`, each labelled "not in the paper": the sorted p (and q), the cut
// (k, p, n and the mass kept) and the renormalised q; then the line itself with q and y. The draw
// takes one number from rng when τ > 0 (none at τ = 0: argmax), with or without a cut.
void sample_token(InferenceStep& step, double tau, const TopKTopP& cut, Rng& rng, Tracer* tr, LineRef line);
}  // namespace sf
