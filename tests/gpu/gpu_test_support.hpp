// What the GPU tests share: one GpuAttention per test program (made once, released before
// exit), random inputs, and error measures.
#pragma once
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/model/rng.hpp"
#include "gpu/attention.hpp"

namespace sf::gpu::test {

// The shared GpuAttention, or nullptr with the reason. `no_egl` is true when not even a bare
// headless EGL context could be made (the tests skip); otherwise a nullptr is a failure.
GpuAttention* shared_gpu(std::string& why_not, bool& no_egl);

// Gets the shared GpuAttention into `g`, or skips (no EGL at all) or fails the test.
#define SF_REQUIRE_GPU(g)                                               \
  std::string why_not_;                                                 \
  bool no_egl_ = false;                                                 \
  GpuAttention* g = shared_gpu(why_not_, no_egl_);                      \
  if (!g) {                                                             \
    if (no_egl_) GTEST_SKIP() << why_not_;                              \
    FAIL() << "EGL works but the GPU attention does not: " << why_not_; \
  }

// Entries ~ N(0, σ²) from a seeded generator.
MatF random_matrix(Rng& rng, int rows, int cols, double sigma);

// One attention layer's parameters (eq. 4) in flat storage, with the views the algorithms take.
// Weights ~ N(0, 1/fan_in) so that scores stay O(√d_attn), biases ~ N(0, 0.1²).
struct LayerStore {
  std::vector<MatF> W_q, W_k, W_v;
  std::vector<MatF> b_q, b_k, b_v;  // columns
  MatF W_o, b_o;
  LayerStore(Rng& rng, int H, int d_x, int d_z, int d_attn, int d_mid, int d_out);
  AttentionHeadW<const float> head(int h) const;
  MHAttentionW<const float> view() const;
};

double max_abs_diff(const MatF& a, const MatF& b);

}  // namespace sf::gpu::test
