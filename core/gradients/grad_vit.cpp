// Forward and backward of the vision transformer over a batch of images (core/gradients/grad_vit.hpp).
//   L2 (patches, not in the paper): e_1 ← e_cls + W_p[:, 1];  e_{k+1} ← W_patch p_k + b_patch + W_p[:, k+1]
//   L3–L12: Algorithm 9's, shared with BERT (etransformer_stack_forward / etransformer_stack_backward).
#include "core/gradients/grad_vit.hpp"

#include <string>

#include "core/model/error.hpp"
#include "core/training/digits.hpp"

namespace sf {

template <class T>
T vit_forward(const ModelConfig& c, const VitW<const T>& W, const Batch& batch, T loss_weight, VitCache<T>& cache) {
  const int B = batch.B, l = vit_tokens(c.patch), n = l - 1;
  if (B < 1 || batch.l != kImagePixels || static_cast<int>(batch.tokens.size()) != B * kImagePixels ||
      batch.targets.size() != batch.tokens.size())
    throw Error("a vision transformer's batch must hold B ≥ 1 images of 64 pixels, each with its class");
  const Eigen::Index N = static_cast<Eigen::Index>(B) * l;
  cache.B = B;
  cache.l = l;
  cache.lengths.assign(B, l);  // no padding: every image has ℓ_x tokens
  cache.targets.assign(N, 0);
  cache.weights.setZero(N);
  cache.patches.resize(c.patch * c.patch, static_cast<Eigen::Index>(B) * n);
  cache.X.resize(c.d_e, N);
  for (int b = 0; b < B; ++b) {
    const auto first = batch.tokens.begin() + static_cast<long>(b) * kImagePixels;
    const Mat<T> P = image_patches<T>(Tokens(first, first + kImagePixels), c.patch);  // (p², ℓ_x − 1)
    cache.patches.middleCols(static_cast<Eigen::Index>(b) * n, n) = P;
    cache.X.middleCols(static_cast<Eigen::Index>(b) * l, l) = vit_embed<T>(P, W);
    const int y = batch.targets[static_cast<size_t>(b) * kImagePixels];
    if (y < 1 || y > vit_classes(c))
      throw Error("image " + std::to_string(b + 1) + " of the batch has class id " + std::to_string(y) +
                  ", outside [1, " + std::to_string(vit_classes(c)) + "]");
    cache.targets[static_cast<size_t>(b) * l] = y;  // the class token's column only
    cache.weights(static_cast<Eigen::Index>(b) * l) = loss_weight;
  }
  return etransformer_stack_forward<T>(c, W.body, cache);
}

template <class T>
void vit_backward(const ModelConfig& c, const VitW<const T>& W, const VitCache<T>& cache, BertWorkspace<T>& ws,
                  VitW<T>& dW, ResidualGradients<T>* kept) {
  etransformer_stack_backward<T>(c, W.body, cache, ws, dW.body, kept);
  // ∂ of L2: dX (d_e, B·ℓ_x) from the stack; the class token, the patches and the positions.
  const int l = cache.l, n = l - 1;
  const Mat<T>& dX = ws.s.dX;
  dW.e_cls.setZero();
  dW.b_patch.setZero();
  dW.W_patch.setZero();
  dW.body.W_p.setZero();
  for (int b = 0; b < cache.B; ++b) {
    const auto dXb = dX.middleCols(static_cast<Eigen::Index>(b) * l, l);  // (d_e, ℓ_x)
    dW.body.W_p.leftCols(l) += dXb;
    dW.e_cls += dXb.col(0);
    const auto dE = dXb.rightCols(n);  // (d_e, ℓ_x − 1) ∂loss/∂(W_patch p_k + b_patch)
    dW.b_patch += dE.rowwise().sum();
    dW.W_patch.noalias() += dE * cache.patches.middleCols(static_cast<Eigen::Index>(b) * n, n).transpose();
  }
}

template <class T>
VitGradient<T>::VitGradient(const ParamTable& table) : grad(table.total(), T(0)), dW(bind_vit<T>(table, grad.data())) {}

template <class T>
T VitGradient<T>::loss_and_gradient(const ModelConfig& c, const VitW<const T>& W, const Batch& batch, T loss_weight) {
  const T loss = vit_forward<T>(c, W, batch, loss_weight, cache);
  vit_backward<T>(c, W, cache, ws, dW);
  return loss;
}

template struct VitGradient<float>;
template struct VitGradient<double>;
template float vit_forward<float>(const ModelConfig&, const VitW<const float>&, const Batch&, float, VitCache<float>&);
template double vit_forward<double>(const ModelConfig&, const VitW<const double>&, const Batch&, double,
                                    VitCache<double>&);
template void vit_backward<float>(const ModelConfig&, const VitW<const float>&, const VitCache<float>&,
                                  BertWorkspace<float>&, VitW<float>&, ResidualGradients<float>*);
template void vit_backward<double>(const ModelConfig&, const VitW<const double>&, const VitCache<double>&,
                                   BertWorkspace<double>&, VitW<double>&, ResidualGradients<double>*);

}  // namespace sf
