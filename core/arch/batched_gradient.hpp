// The ModelGradient (core/training/training.hpp) of an architecture, made from its batched
// gradient of core/gradients/ (GptGradient, BertGradient, EdGradient): one adapter for all.
#pragma once
#include "core/training/training.hpp"

namespace sf {

// G: the architecture's batched gradient in float (G(table), loss_and_gradient(config, W,
// batch, w), cache.loss.losses, grad). weights(model): θ's views. forward: the loss-only pass,
// e.g. &dtransformer_forward<float>.
template <class G, auto weights, auto forward>
class BatchedModelGradient : public ModelGradient {
 public:
  explicit BatchedModelGradient(const ParamTable& table) : g_(table) {}
  float loss_and_gradient(const Model& m, const Batch& b, float w) override {
    return g_.loss_and_gradient(m.config, weights(m), b, w);
  }
  float loss(const Model& m, const Batch& b, float w) override { return forward(m.config, weights(m), b, w, g_.cache); }
  VecF position_losses() const override { return g_.cache.loss.losses; }
  float* grad() override { return g_.grad.data(); }
  size_t grad_size() const override { return g_.grad.size(); }

 private:
  G g_;
};

}  // namespace sf
