// Stepformer's backward listing of Algorithm 1 (not in the paper): e = W_e[:, v] reads one column, so
//   1̄: ∇W_e[:, v] ← ∇W_e[:, v] + ∇e
// ∇W_e gathers columns: a token used at several positions (or tied to W_u) accumulates.
#include "core/backprop/adjoints.hpp"

namespace sf {

template <class T>
void adjoint_token_embedding(int v, CView<T> de, MapM<T>& dW_e, Tracer* tr) {
  const TraceBackward backward(tr);
  TraceFrame frame(tr, 1, tr ? std::vector<Value>{tscalar("v", v), tv("∇e", de)} : std::vector<Value>{});
  // Adjoint of L1: return e = W_e[:, v]
  dW_e.col(v - 1) += de;
  if (tr)
    tr->line(lines::token_embedding::e.adjoint(),
             {with_note(tv("∇W_e[:, v]", de), "This position's term: ∇W_e gathers columns, so a token used twice "
                                              "accumulates both positions' ∇e in its column."),
              with_note(tv("∇W_e[:, v] (so far)", dW_e.col(v - 1)),
                        "Column v of ∇W_e summed over the positions run so far (and, tied, ∇W_uᵀ's column v).")});
}

template void adjoint_token_embedding<float>(int, CView<float>, MapM<float>&, Tracer*);
template void adjoint_token_embedding<double>(int, CView<double>, MapM<double>&, Tracer*);

}  // namespace sf
