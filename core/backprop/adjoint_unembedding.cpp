// Stepformer's backward listing of Algorithm 7 (not in the paper): the adjoint of p = softmax(W_u e),
//   1̄: ∇(W_u e) ← p ⊙ (∇p − 1 (pᵀ ∇p));  ∇e ← W_uᵀ ∇(W_u e);  ∇W_u ← ∇W_u + ∇(W_u e) eᵀ
// and the line that runs it on every column (Algorithm 10 line 11: P = softmax(W_u X)). Variants: tied
// W_u = W_eᵀ (∇W_e collects ∇W_uᵀ), and not in the paper, the bias b_u (∇b_u ← Σ_t ∇(W_u e + b_u)).
#include "core/backprop/adjoints.hpp"

namespace sf {

namespace {

const char* const kTiedNote =
    "Tied (variant): W_u = W_eᵀ, so ∇W_e gains ∇W_uᵀ. W_u has no tensor of its own: ∇W_u = ∇(W_u X) Xᵀ is added "
    "into ∇W_e, bound at the adjoint of the embedding line.";

}  // namespace

template <class T>
void adjoint_unembedding_softmax(CView<T> p, CView<T> dp, Ref<T> dlogits) {
  // p ⊙ ∇p, where ∇p ≠ 0 (the loss line's −1/p[y]); where p[y] underflowed to 0, ∇p[y] = −∞ and the
  // product's limit p · (−1/p) = −1 is used (the batched loss works from the logits and stays finite).
  Vec<T> pdp = Vec<T>::Zero(p.rows());  // (N_V)
  for (Eigen::Index i = 0; i < p.rows(); ++i)
    if (dp(i, 0) != T(0)) pdp(i) = p(i, 0) == T(0) ? T(-1) : p(i, 0) * dp(i, 0);
  const T p_dot_dp = pdp.sum();  // pᵀ ∇p
  dlogits = pdp - p * p_dot_dp;  // p ⊙ (∇p − 1 (pᵀ ∇p))
}

template <class T>
void trace_adjoint_unembedding(Tracer* tr, CView<T> e, CView<T> p, CView<T> dp, CView<T> dlogits, CView<T> de,
                               bool tied, bool bias) {
  if (!tr) return;
  const TraceBackward backward(tr);
  TraceFrame frame(tr, 7, {tv("∇p", dp, Axis::Vocab), tv("e", e), tv("p", p, Axis::Vocab)});
  const std::string logits = bias ? "∇(W_u e + b_u)" : "∇(W_u e)";
  const Value v_dlogits = tv(logits, dlogits, Axis::Vocab);
  const Value v_de = tied ? with_note(tv("∇e", de), "Tied (variant): W_u = W_eᵀ, so ∇e = W_e " + logits + ".")
                          : tv("∇e", de);
  // Adjoint of L1: return p = softmax(W_u e)
  tr->substep(lines::unembedding::p.adjoint(), logits + " ← p ⊙ (∇p − 1 (pᵀ ∇p))", {v_dlogits});
  tr->substep(lines::unembedding::p.adjoint(), "∇e ← W_uᵀ " + logits, {v_de});
  tr->line(lines::unembedding::p.adjoint(), {v_dlogits, v_de});
}

template <class T>
void adjoint_unembed_line(CView<T> X, CView<T> P, CView<T> dP, CView<T> W_u, bool tied, bool bias, MapM<T>& dW_u,
                          MapM<T>& dW_e, MapV<T>& db_u, Ref<T> dX, Tracer* tr, int alg, int line) {
  const TraceBackward backward(tr);
  const Eigen::Index l = X.cols();
  Mat<T> dL(P.rows(), l);  // (N_V, ℓ) ∇(W_u X), a column per position
  for (Eigen::Index t = 0; t < l; ++t) adjoint_unembedding_softmax<T>(P.col(t), dP.col(t), dL.col(t));
  const Mat<T> dXl = W_u.transpose() * dL;  // (d_e, ℓ) ∇e of every column at once
  for (Eigen::Index t = 0; t < l && tr; ++t) {
    const TraceIndex it(tr, &Indices::t, static_cast<int>(t) + 1);
    trace_adjoint_unembedding<T>(tr, X.col(t), P.col(t), dP.col(t), dL.col(t), dXl.col(t), tied, bias);
  }
  // ∇W_u = Σ_t ∇(W_u X)[:, t] X[:, t]ᵀ (tied: W_u = W_eᵀ has no tensor of its own, its transpose goes
  // into ∇W_e), ∇b_u = Σ_t ∇(W_u X)[:, t]
  if (tied)
    dW_e.noalias() += X * dL.transpose();  // (d_e, N_V)
  else
    dW_u.noalias() += dL * X.transpose();  // (N_V, d_e)
  if (bias) db_u += dL.rowwise().sum();
  dX += dXl;
  if (!tr) return;
  std::vector<Value> v{tv("∇X", dXl, Axis::Feature, Axis::TokenX)};
  // Tied: ∇W_u is shown as the untied model's would be, a product of its own for the trace: forming it
  // once for both would cost a transposition of an N_V × d_e matrix, slower than the product
  // (GPT-2: ≈ 0.3 s against ≈ 0.05 s, bench_backprop).
  v.push_back(tied ? with_note(tv("∇W_u", dL * X.transpose(), Axis::Vocab, Axis::Feature), kTiedNote)
                   : tv("∇W_u", dW_u, Axis::Vocab, Axis::Feature));
  if (bias) v.push_back(tv("∇b_u", db_u, Axis::Vocab));
  tr->line(LineRef{alg, line}, std::move(v));
}

#define SF_ADJOINT_UNEMBEDDING(T)                                                                                  \
  template void adjoint_unembedding_softmax<T>(CView<T>, CView<T>, Ref<T>);                                        \
  template void trace_adjoint_unembedding<T>(Tracer*, CView<T>, CView<T>, CView<T>, CView<T>, CView<T>, bool, bool); \
  template void adjoint_unembed_line<T>(CView<T>, CView<T>, CView<T>, CView<T>, bool, bool, MapM<T>&, MapM<T>&,    \
                                        MapV<T>&, Ref<T>, Tracer*, int, int);
SF_ADJOINT_UNEMBEDDING(float)
SF_ADJOINT_UNEMBEDDING(double)
#undef SF_ADJOINT_UNEMBEDDING

}  // namespace sf
