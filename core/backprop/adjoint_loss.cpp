// Stepformer's backward listing of the loss lines (not in the paper): Algorithm 13 line 5 (and 11's
// line 5, 12's line 9), loss(θ) = −Σ_t log P[y_t, t] over the positions t with a target y_t, has
//   5̄: ∇P[y_t, t] ← −1/P[y_t, t];  every other entry of ∇P is 0
// (the adjoint of the loss, whose own gradient is ∇loss = 1). Algorithms 12 and 11 have their own
// entries, whose ∇P says which positions carry loss in their terms (masked positions; t < ℓ).
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

// The loss line's adjoint with the note its ∇P carries.
template <class T>
Mat<T> loss_adjoint_line(CView<T> P, const std::vector<int>& targets, T loss, Tracer* tr, LineRef loss_line,
                         const std::string& note) {
  const TraceBackward backward(tr);
  Mat<T> dP = Mat<T>::Zero(P.rows(), P.cols());  // (N_V, ℓ)
  for (Eigen::Index t = 0; t < P.cols(); ++t)
    if (const int y = targets[t]) dP(y - 1, t) = T(-1) / P(y - 1, t);  // ∂(−log P[y, t])/∂P[y, t]
  if (tr) tr->line(loss_line.adjoint(), {with_note(tv("∇P", dP, Axis::Vocab, Axis::TokenX), note), tscalar("loss", loss)});
  return dP;
}

}  // namespace

template <class T>
Mat<T> adjoint_loss(CView<T> P, const std::vector<int>& targets, T loss, Tracer* tr, LineRef loss_line) {
  return loss_adjoint_line<T>(P, targets, loss, tr, loss_line,
                              "∇P[y_t, t] = −1/P[y_t, t] at the positions with a loss term (t = " +
                                  loss_positions(targets) + "; y_t their target); 0 everywhere else.");
}

template <class T>
Mat<T> adjoint_masked_lm_loss(CView<T> P, const std::vector<int>& targets, T loss, Tracer* tr) {
  return loss_adjoint_line<T>(
      P, targets, loss, tr, lines::e_training::loss.adjoint(),
      "∇P[x_n[t], t] = −1/P[x_n[t], t] for t ∈ T̃ = {" + loss_positions(targets) +
          "}, the masked positions: only they carry loss, so every other column of ∇P is 0. The bidirectional "
          "attention (Mask ≡ 1) then spreads their gradient to every position.");
}

template <class T>
Mat<T> adjoint_seq2seq_loss(CView<T> P, const std::vector<int>& targets, T loss, Tracer* tr) {
  return loss_adjoint_line<T>(P, targets, loss, tr, lines::ed_training::loss.adjoint(),
                              "∇P[x_n[t+1], t] = −1/P[x_n[t+1], t] for t = 1 … ℓ−1 (t = " + loss_positions(targets) +
                                  "); column ℓ predicts nothing: 0. Every column of ∇P reaches the encoder only "
                                  "through the cross-attention (line 16).");
}

template Mat<float> adjoint_loss<float>(CView<float>, const std::vector<int>&, float, Tracer*, LineRef);
template Mat<double> adjoint_loss<double>(CView<double>, const std::vector<int>&, double, Tracer*, LineRef);
template Mat<float> adjoint_masked_lm_loss<float>(CView<float>, const std::vector<int>&, float, Tracer*);
template Mat<double> adjoint_masked_lm_loss<double>(CView<double>, const std::vector<int>&, double, Tracer*);
template Mat<float> adjoint_seq2seq_loss<float>(CView<float>, const std::vector<int>&, float, Tracer*);
template Mat<double> adjoint_seq2seq_loss<double>(CView<double>, const std::vector<int>&, double, Tracer*);

}  // namespace sf
