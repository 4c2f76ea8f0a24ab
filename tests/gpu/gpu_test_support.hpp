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

// The largest |GPU − CPU| a compared matrix may show. Both sides compute in float and differ in the
// order of each sum (Eigen's SIMD kernels, whose order changes with the SIMD width, against a
// shader's loop) and in exp (GLSL 4.30 §4.7.1: (3 + 2|x|) ULP; |x| ≤ 20 here: ≤ 43 ULP of A ≤ 1, 5e-6).
// Inputs are N(0, 1) and weights N(0, 1/d): entries O(1). The largest sum is a score of S = KᵀQ:
// d_attn ≤ 64 products of size ≈ E|k|·E|q| = 0.64, random signs, partial sums s_k ≈ 0.8√k. Each
// addition rounds by at most u·|s_k| (u = 2⁻²⁴), independently and with either sign (the model of
// Higham & Mary 2019), so the sum's error has σ ≈ u·√(Σ_k s_k²/3) = u·√(0.64·64·65/6) ≈ 21u = 1.3e-6
// a side; Q's and K's own errors carried into S add about as much, so the difference of both sides
// has σ ≲ 4e-6. kTol is 25σ: no false failure at any SIMD width, while a real fault (a wrong index,
// a missed mask or scale) is O(0.1). (The worst case, every rounding at its maximum with one sign,
// 64·u·41 = 1.6e-4, is not a bound on what happens.) Ṽ = V·A over ℓ_z ≤ 512 keys (Σ A = 1, partial
// sums ≤ |V| ≲ 3) has σ ≲ u·√(512·9/3) = 39u = 2.3e-6; the 100,000 keys of
// GpuRuntime.LlvmpipesLoopBudget… (d = 4, |V| ≲ 1) σ ≲ u·√(1e5/3) = 183u = 1.1e-5, kTol 9σ.
// Measured (Mesa llvmpipe against core at -march=native, AVX-512): S up to 1.4e-5 over the 512×512
// scores (the largest of 2.6e5 draws, ≈ 4.5σ), Q, K, V, A, Ṽ and P ≤ 4e-6.
constexpr double kTol = 1e-4;

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
