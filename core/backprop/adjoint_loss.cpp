// Stepformer's backward listing of the loss lines (not in the paper): Algorithm 13 line 5 (and 11's
// line 5, 12's line 9), loss(θ) = −Σ_t log P[y_t, t] over the positions t with a target y_t, has
//   5̄: ∇P[y_t, t] ← −1/P[y_t, t];  every other entry of ∇P is 0
// (the adjoint of the loss, whose own gradient is ∇loss = 1).
#include <string>

#include "core/backprop/adjoints.hpp"

namespace sf {

namespace {

// Which positions carry a loss term, 1-based, for the note on ∇P.
std::string loss_positions(const std::vector<int>& targets) {
  std::string s;
  for (size_t t = 0; t < targets.size(); ++t)
    if (targets[t] != 0) s += (s.empty() ? "" : ", ") + std::to_string(t + 1);
  return s.empty() ? "none" : s;
}

}  // namespace

template <class T>
Mat<T> adjoint_loss(CView<T> P, const std::vector<int>& targets, T loss, Tracer* tr, LineRef loss_line) {
  const TraceBackward backward(tr);
  Mat<T> dP = Mat<T>::Zero(P.rows(), P.cols());  // (N_V, ℓ)
  for (Eigen::Index t = 0; t < P.cols(); ++t)
    if (const int y = targets[t]) dP(y - 1, t) = T(-1) / P(y - 1, t);  // ∂(−log P[y, t])/∂P[y, t]
  if (tr)
    tr->line(loss_line.alg, loss_line.line,
             {with_note(tv("∇P", dP, Axis::Vocab, Axis::TokenX),
                        "∇P[y_t, t] = −1/P[y_t, t] at the positions with a loss term (t = " + loss_positions(targets) +
                            "; y_t their target); 0 everywhere else."),
              tscalar("loss", loss)});
  return dP;
}

template Mat<float> adjoint_loss<float>(CView<float>, const std::vector<int>&, float, Tracer*, LineRef);
template Mat<double> adjoint_loss<double>(CView<double>, const std::vector<int>&, double, Tracer*, LineRef);

}  // namespace sf
