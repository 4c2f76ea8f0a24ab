// Reverse-mode gradients of the vision transformer (arch "vit", core/arch/vit.hpp) over a batch of
// images: line 2 embeds patches (X = [e_cls, W_patch p_k + b_patch] + W_p), then Algorithm 9's lines
// 3–12 are BERT's (etransformer_stack_forward/backward); the loss is −log P[class, 1] on the class
// token's column of each image. Conventions of core/gradients/grad.hpp (a column per token,
// image b at columns b·ℓ_x … b·ℓ_x + ℓ_x − 1, N := B·ℓ_x).
#pragma once
#include "core/arch/vit.hpp"
#include "core/gradients/grad_etransformer.hpp"

namespace sf {

template <class T>
struct VitCache : BertCache<T> {
  Mat<T> patches;  // (p², B·(8/p)²) every image's patches, image b's at columns b·(8/p)² …
};

// The batch (VitArchitecture::make_batch): B images of 64 pixels (batch.l = 64) and the class id at
// each image's first target slot. loss = loss_weight · Σ_b −log P_b[class_b, 1]. Throws sf::Error
// on a batch that is not images.
template <class T>
T vit_forward(const ModelConfig& c, const VitW<const T>& W, const Batch& batch, T loss_weight, VitCache<T>& cache);
// ∇loss(θ) into dW, every tensor assigned; with `kept`, also ∂loss/∂X entering each layer (as BERT's).
template <class T>
void vit_backward(const ModelConfig& c, const VitW<const T>& W, const VitCache<T>& cache, BertWorkspace<T>& ws,
                  VitW<T>& dW, ResidualGradients<T>* kept = nullptr);

template <class T>
struct VitGradient {
  explicit VitGradient(const ParamTable& table);
  VitGradient(const VitGradient&) = delete;
  VitGradient& operator=(const VitGradient&) = delete;

  VitCache<T> cache;
  BertWorkspace<T> ws;
  std::vector<T, Eigen::aligned_allocator<T>> grad;  // (table.total()) ∇loss(θ), θ's layout
  VitW<T> dW;                                        // views of grad

  T loss_and_gradient(const ModelConfig& c, const VitW<const T>& W, const Batch& batch, T loss_weight);
};

}  // namespace sf
