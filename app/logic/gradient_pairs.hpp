// A value and its gradient side by side (issue 24, not in the paper): at an event of Stepformer's
// traced backward, each gradient ∇N in scope with the forward value N it is the gradient of (from
// the matching forward frame: core/trace/dependencies.hpp, forward_counterpart), and the views of
// the pair the Tensor view switches between: N, ∇N and N ⊙ ∇N. Headless.
#pragma once
#include <string>
#include <vector>

#include "core/trace/trace.hpp"

namespace sf {

struct GradientPair {
  const Value* grad = nullptr;   // ∇N, in scope at the event
  const Value* value = nullptr;  // N, bound by the forward pass
  size_t grad_event = 0, value_event = 0;  // the events that bound them
};

// The pairs among `scope` (Trace::scope or Session::scope_for_view at backward event k), in scope
// order; empty at a forward event. A gradient whose forward value has another shape (none should)
// is left unpaired.
std::vector<GradientPair> gradient_pairs(const Trace& t, size_t k, const std::vector<const Value*>& scope);
// The pair whose gradient is `grad`, or nullptr.
const GradientPair* pair_of(const std::vector<GradientPair>& pairs, const Value* grad);

// What the Tensor view shows of a pair.
enum class PairView { Value, Gradient, Product };
const char* pair_view_name(PairView v);  // "value", "gradient", "value ⊙ gradient"
// The matrix a pair shows as `view`, as a Value named for it ("S", "∇S", "S ⊙ ∇S"). The product of
// a masked score (−∞) and its gradient (exactly 0) is 0: that cell contributes nothing to the
// first-order change of the loss, which is what N ⊙ ∇N measures.
Value pair_view(const GradientPair& p, PairView view);

}  // namespace sf
