// Algorithm 2: Positional embedding.
//   Input: ℓ ∈ [ℓ_max], position of a token in the sequence.
//   Output: e_p ∈ ℝ^{d_e}, the vector representation of the position.
//   Parameters: W_p ∈ ℝ^{d_e×ℓ_max}, the positional embedding matrix.
#include "core/algorithms/algorithms.hpp"

namespace sf {

template <class T>
Vec<T> positional_embedding(int l, const MapM<const T>& W_p, Tracer* tr) {
  // W_p itself is bound once by the caller (DTransformer), not copied per token.
  TraceFrame frame(tr, 2, tr ? std::vector<Value>{tscalar("ℓ", l)} : std::vector<Value>{});
  // L1: return e_p = W_p[:, ℓ]   (ℓ is 1-based)
  Vec<T> e_p = W_p.col(l - 1);  // (d_e)
  if (tr) tr->line(lines::positional_embedding::e_p, {tv("e_p", e_p)});
  return e_p;
}

template Vec<float> positional_embedding(int, const MapM<const float>&, Tracer*);
template Vec<double> positional_embedding(int, const MapM<const double>&, Tracer*);

}  // namespace sf
