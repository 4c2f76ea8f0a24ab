// Algorithm 10 with line 6's MHAttention on the GPU: see dtransformer_gpu.hpp.
#include "gpu/dtransformer_gpu.hpp"

#include <string>

namespace sf::gpu {

MatF dtransformer_gpu(const Tokens& x, const ModelConfig& c, const GptW<const float>& W, GpuAttention& gpu, Form form,
                      std::vector<DispatchTime>* times) {
  int layer = 0;  // line 6 runs once per layer, in order
  const MHAttentionFn<float> attention = [&](const MatF& X, const MatF& Z, const MHAttentionW<const float>& Wl,
                                             const Mask& mask, const AttentionOptions& av) {
    ++layer;
    std::vector<DispatchTime> t;
    MatF out = gpu.mh_attention(X, Z, Wl, mask, form, times ? &t : nullptr, nullptr, av);
    if (times)
      for (DispatchTime& d : t) {
        d.what = "layer " + std::to_string(layer) + ": " + d.what;
        times->push_back(std::move(d));
      }
    return out;
  };
  return dtransformer<float>(x, c, W, nullptr, attention);
}

}  // namespace sf::gpu
