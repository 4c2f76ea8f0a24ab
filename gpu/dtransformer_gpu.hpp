// Algorithm 10, P ← DTransformer(x | θ), with line 6's MHAttention on the GPU.
#pragma once
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "gpu/attention.hpp"

namespace sf::gpu {

// Core's dtransformer (core/alg10_dtransformer.cpp) with its MHAttention hook set to the GPU:
// every other line runs on the CPU as usual, untraced. `times`, when given, receives the
// dispatch times of every layer's attention, each prefixed "layer l: ".
MatF dtransformer_gpu(const Tokens& x, const ModelConfig& c, const GptW<const float>& W, GpuAttention& gpu, Form form,
                      std::vector<DispatchTime>* times = nullptr);

}  // namespace sf::gpu
