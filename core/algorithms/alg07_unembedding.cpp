// Algorithm 7: Unembedding.
//   Input: e ∈ ℝ^{d_e}, a token encoding.
//   Output: p ∈ Δ(V), a probability distribution over the vocabulary.
//   Parameters: W_u ∈ ℝ^{N_V×d_e}, the unembedding matrix.
#include "core/algorithms/algorithms.hpp"

namespace sf {

template <class T>
Vec<T> unembedding(const Vec<T>& e, const MapM<const T>& W_u, Tracer* tr) {
  TraceFrame frame(tr, 7, tr ? std::vector<Value>{tv("e", e), tparam<T>(tr, "W_u", W_u, Axis::Vocab, Axis::Feature)}
                             : std::vector<Value>{});
  // L1: return p = softmax(W_u e)
  const Mat<T> logits = W_u * e;  // (N_V, 1)
  if (tr) tr->substep(lines::unembedding::p, "W_u e", {tv("W_u e", logits, Axis::Vocab)});
  Vec<T> p = softmax_columns<T>(logits);  // (N_V)
  if (tr) tr->line(lines::unembedding::p, {tv("p", p, Axis::Vocab)});
  return p;
}

template Vec<float> unembedding(const Vec<float>&, const MapM<const float>&, Tracer*);
template Vec<double> unembedding(const Vec<double>&, const MapM<const double>&, Tracer*);

}  // namespace sf
