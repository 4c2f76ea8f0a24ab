// Gradients of Algorithm 10 line 11 and Algorithm 13 line 5:
//   Alg. 10 L11: return P = softmax(W_u X)
//   Alg. 13 L5:  loss(θ) = −Σ_{t=1}^{ℓ−1} log P(θ)[x_n[t+1], t]
// Not in the paper (BERT checkpoints' masked-LM head): L11 with a bias, P = softmax(W_u X + b_u 1ᵀ).
// generalised to weighted terms, loss = Σ_t w_t · (−log P[y_t, t]): w_t = 1 is the paper's
// sum, w_t = 1/#targets the mean over a minibatch, w_t = 0 for positions with no target.
// Variant tied_unembedding (Dinan–Yaida–Zhang, GPT-2): W_u = W_eᵀ, and ∇W_e collects both uses.
#include <algorithm>
#include <cmath>

#include "core/gradients/grad.hpp"

namespace sf {

template <class T>
T loss_forward(CRef<T> X, CRef<T> W_u, CRef<T> b_u, const std::vector<int>& targets, const Vec<T>& weights,
               LossCache<T>& cache) {
  const Eigen::Index N = X.cols();
  cache.P.resize(W_u.rows(), N);  // (N_V, N)
  cache.losses.resize(N);         // (N)
  // L11: W_u X   (the logits, held in P until the softmax)
  cache.P.noalias() = W_u * X;
  if (b_u.size() != 0) cache.P.colwise() += b_u.col(0);  // not in the paper: W_u X + b_u 1ᵀ
  T loss = 0;
  for (Eigen::Index t = 0; t < N; ++t) {
    auto p = cache.P.col(t).array();  // (N_V)
    const T mx = p.maxCoeff();
    const T logit_y = targets[t] ? p(targets[t] - 1) : T(0);
    // L11: P = softmax(W_u X), column t
    p = (p - mx).exp();
    const T sum = p.sum();
    p /= sum;
    // L5: −log P[y_t, t] = log Σ exp(W_u X)[:, t] − (W_u X)[y_t, t]  (exact even where P underflows)
    cache.losses(t) = targets[t] ? mx + std::log(sum) - logit_y : T(0);
    loss += weights(t) * cache.losses(t);
  }
  return loss;
}

template <class T>
void loss_backward(CRef<T> X, CRef<T> W_u, const std::vector<int>& targets, const Vec<T>& weights,
                   const LossCache<T>& cache, Mat<T>& dlogits, Ref<T> dW_u, Ref<T> db_u, Ref<T> dX) {
  // ∂ of L5 and of L11's softmax: ∂loss/∂(W_u X)[:, t] = w_t (P[:, t] − onehot(y_t))
  dlogits.resize(cache.P.rows(), cache.P.cols());  // (N_V, N)
  for (Eigen::Index t = 0; t < cache.P.cols(); ++t) {
    dlogits.col(t) = cache.P.col(t) * weights(t);
    if (targets[t]) dlogits(targets[t] - 1, t) -= weights(t);
  }
  // ∂ of the bias (not in the paper): W_u X + b_u 1ᵀ adds b_u to every column
  if (db_u.size() != 0) db_u = dlogits.rowwise().sum();  // (N_V, 1)
  // ∂ of L11's W_u X
  dW_u.noalias() = dlogits * X.transpose();  // (N_V, d_e)
  dX.noalias() = W_u.transpose() * dlogits;  // (d_e, N)
}

template <class T>
Eigen::Ref<const Mat<T>> unembedding_for(const MapM<const T>& W_u, const MapM<const T>& W_e, Mat<T>& tied) {
  if (W_u.size() != 0) return W_u;
  // (N_V, d_e) W_u = W_eᵀ, copied in 64×64 tiles: a plain transposed copy strides through memory
  // (GPT-2: 154 MB, half a second; tiled, a few tens of ms). The same values either way.
  constexpr Eigen::Index kTile = 64;
  tied.resize(W_e.cols(), W_e.rows());
  for (Eigen::Index j = 0; j < W_e.cols(); j += kTile)
    for (Eigen::Index i = 0; i < W_e.rows(); i += kTile) {
      const Eigen::Index nj = std::min(kTile, W_e.cols() - j), ni = std::min(kTile, W_e.rows() - i);
      tied.block(j, i, nj, ni) = W_e.block(i, j, ni, nj).transpose();
    }
  return tied;
}

template <class T>
Eigen::Ref<const Mat<T>> unembedding_used(const MapM<const T>& W_u, const Mat<T>& tied) {
  if (W_u.size() != 0) return W_u;
  return tied;
}

template <class T>
Ref<T> unembedding_gradient(MapM<T>& dW_u, const MapM<T>& dW_e, Mat<T>& tied) {
  if (dW_u.size() != 0) return dW_u;
  tied.resize(dW_e.cols(), dW_e.rows());  // (N_V, d_e)
  return tied;
}

template <class T>
void add_tied_gradient(const MapM<T>& dW_u, const Mat<T>& tied, MapM<T>& dW_e) {
  if (dW_u.size() == 0) dW_e += tied.transpose();  // ∂ of W_u = W_eᵀ
}

#define SF_UNEMBEDDING(T)                                                                                   \
  template Eigen::Ref<const Mat<T>> unembedding_for<T>(const MapM<const T>&, const MapM<const T>&, Mat<T>&); \
  template Eigen::Ref<const Mat<T>> unembedding_used<T>(const MapM<const T>&, const Mat<T>&);            \
  template Ref<T> unembedding_gradient<T>(MapM<T>&, const MapM<T>&, Mat<T>&);                              \
  template void add_tied_gradient<T>(const MapM<T>&, const Mat<T>&, MapM<T>&);
SF_UNEMBEDDING(float)
SF_UNEMBEDDING(double)
#undef SF_UNEMBEDDING

template float loss_forward<float>(CRef<float>, CRef<float>, CRef<float>, const std::vector<int>&, const Vec<float>&,
                                   LossCache<float>&);
template double loss_forward<double>(CRef<double>, CRef<double>, CRef<double>, const std::vector<int>&,
                                     const Vec<double>&, LossCache<double>&);
template void loss_backward<float>(CRef<float>, CRef<float>, const std::vector<int>&, const Vec<float>&,
                                   const LossCache<float>&, Mat<float>&, Ref<float>, Ref<float>, Ref<float>);
template void loss_backward<double>(CRef<double>, CRef<double>, const std::vector<int>&, const Vec<double>&,
                                    const LossCache<double>&, Mat<double>&, Ref<double>, Ref<double>, Ref<double>);

}  // namespace sf
