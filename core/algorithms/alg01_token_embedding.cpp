// Algorithm 1: Token embedding.
//   Input: v ∈ V ≅ [N_V], a token ID.
//   Output: e ∈ ℝ^{d_e}, the vector representation of the token.
//   Parameters: W_e ∈ ℝ^{d_e×N_V}, the token embedding matrix.
#include "core/algorithms/algorithms.hpp"

namespace sf {

template <class T>
Vec<T> token_embedding(int v, const MapM<const T>& W_e, Tracer* tr) {
  // W_e itself is bound once by the caller (DTransformer), not copied per token.
  TraceFrame frame(tr, 1, tr ? std::vector<Value>{tscalar("v", v)} : std::vector<Value>{});
  // L1: return e = W_e[:, v]   (v is 1-based)
  Vec<T> e = W_e.col(v - 1);  // (d_e)
  if (tr) tr->line(lines::token_embedding::e, {tv("e", e)});
  return e;
}

template Vec<float> token_embedding(int, const MapM<const float>&, Tracer*);
template Vec<double> token_embedding(int, const MapM<const double>&, Tracer*);

}  // namespace sf
