// Gradients of the linear map Y ← W X + b 1ᵀ, the pattern of Algorithm 4 lines 1–3
// (Q ← W_q X + b_q 1ᵀ, …), Algorithm 5 line 4 (W_o Y + b_o 1ᵀ) and Algorithm 10 line 8.
#include "core/gradients/grad.hpp"

namespace sf {

template <class T>
void linear_forward(CRef<T> X, CRef<T> W, CRef<T> b, Ref<T> Y) {
  // Y ← W X + b 1ᵀ
  Y.colwise() = b.col(0);   // (d_out, N) b 1ᵀ, then the product added into it: no zero-fill, no second pass
  Y.noalias() += W * X;
}

template <class T>
void linear_backward(CRef<T> dY, CRef<T> X, CRef<T> W, Ref<T> dW, Ref<T> db, Ref<T> dX) {
  // ∂ of Y ← W X + b 1ᵀ
  dW.noalias() = dY * X.transpose();  // (d_out, d_in)
  db = dY.rowwise().sum();            // (d_out, 1)
  dX.noalias() = W.transpose() * dY;  // (d_in, N)
}

template void linear_forward<float>(CRef<float>, CRef<float>, CRef<float>, Ref<float>);
template void linear_forward<double>(CRef<double>, CRef<double>, CRef<double>, Ref<double>);
template void linear_backward<float>(CRef<float>, CRef<float>, CRef<float>, Ref<float>, Ref<float>, Ref<float>);
template void linear_backward<double>(CRef<double>, CRef<double>, CRef<double>, Ref<double>, Ref<double>, Ref<double>);

}  // namespace sf
