// Stepformer's backward listing of Algorithm 2 (not in the paper): e_p = W_p[:, ℓ] reads one column, so
//   1̄: ∇W_p[:, ℓ] ← ∇W_p[:, ℓ] + ∇e_p
// Only a learned W_p (the paper's) has a gradient: the sinusoid (§5) is computed, not trained, and
// RoPE, ALiBi and "none" add no W_p at all.
#include "core/backprop/adjoints.hpp"

namespace sf {

template <class T>
void adjoint_positional_embedding(int l, CView<T> de_p, MapM<T>& dW_p, Tracer* tr) {
  const TraceBackward backward(tr);
  TraceFrame frame(tr, 2, tr ? std::vector<Value>{tscalar("ℓ", l), tv("∇e_p", de_p)} : std::vector<Value>{});
  // Adjoint of L1: return e_p = W_p[:, ℓ]
  dW_p.col(l - 1) += de_p;
  if (tr) tr->line(lines::positional_embedding::e_p.adjoint(), {tv("∇W_p[:, ℓ]", de_p)});
}

std::string no_position_gradient_note(const ModelConfig& c) {
  switch (c.position) {
    case Position::Learned: return "";
    case Position::Sinusoidal:
      return "Sinusoidal positions (variant, §5): W_p is computed, not trained, so it has no gradient.";
    case Position::Rope:
      return "RoPE (variant): there is no W_p; the positions' rotation of Q and K is undone in Algorithm 4's adjoint.";
    case Position::Alibi:
      return "ALiBi (variant): there is no W_p; the bias m_h·B is a constant, so nothing positional has a gradient.";
    default: return "No positions (variant): there is no W_p, so no W_p gradient.";
  }
}

template void adjoint_positional_embedding<float>(int, CView<float>, MapM<float>&, Tracer*);
template void adjoint_positional_embedding<double>(int, CView<double>, MapM<double>&, Tracer*);

}  // namespace sf
