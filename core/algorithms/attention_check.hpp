// How far another backend's MHAttention result is from core's: the check the GPU records (gpu/forward_gpu.cpp) and
// the app's hooked trace (app/session.cpp) both make, written once.
#pragma once
#include "core/algorithms/algorithms.hpp"

namespace sf {

// Core's Algorithm 5 on the inputs of one hooked call, without the call's site (av.patch): experiments never reach a
// hook (Algorithms 8–10 run core's attention while they are in force), the site only labels the call.
MatF core_mh_attention(const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
                       const AttentionOptions& av);

// max |Ṽ − Ṽ_cpu| between another backend's Ṽ (d_out, ℓ_x) and Ṽ_cpu (core_mh_attention, given or computed here);
// 0 for an empty Ṽ. Throws sf::Error when their shapes differ.
double max_abs_diff_to_core(const MatF& Vt, const MatF& Vt_cpu);
double max_abs_diff_to_core(const MatF& Vt, const MatF& X, const MatF& Z, const MHAttentionW<const float>& W,
                            const Mask& mask, const AttentionOptions& av);

// How far a correct float32 backend's Ṽ (or a head's Ṽ^h) may be from core's: the GPU guard's bound (the app's GPU
// backend, stepformer-cli's GPU report). Both sides compute in float32 (u = 2⁻²⁴ ≈ 6e-8) and sum in other orders.
// A sum of n terms is off by at most γ_n·Σ|terms| ≈ n·u·Σ|terms| (Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed., §3.1), so two orders differ by ≤ 2·n·u·Σ|terms|. Ṽ passes through four such sums in a row
// (Q, K, V over d_x or d_z terms; S = KᵀQ over d_attn; Ṽ^h = V·A over ℓ_z; W_o Y over H·d_mid): ≤ 4 stages, each
// with n ≤ `longest_sum`. A score's error δ moves A by ≤ 2δ/√d_attn ≤ 2δ (softmax's Lipschitz bound), and exp adds
// (3 + 2|x|) ULP (GLSL 4.30 §4.7.1; |x| ≤ 20 after subtracting the column's maximum: ≤ 43u relative). With
// Σ|terms| ≤ 4·max(1, |Ṽ|) (the weights' cancellation the app's models show is far smaller), the bound is
// 2 · 4 · 2 · 4 · n·u·scale = 64·n·u·scale, scale = max(1, max |Ṽ_cpu|). n = 512 gives 2.0e-3·scale. A correct GPU
// measures ≤ 3e-6 at n = 4096 (docs/gpu/h200-attention-s16.txt, the fused form on an H200), far under it; the
// teaching form's faults on that H200 were 7e-2 to 1.6, and a softmax off by a factor of 2 is ≳ 0.1: far over it.
double agreement_tolerance(long longest_sum, double scale);
// The longest sum of one MHAttention call (the n above): max(d_x, d_z, d_attn, ℓ_z, H·d_mid).
long longest_sum(const MatF& X, const MatF& Z, const MHAttentionW<const float>& W);

// Where two backends' heads differ most: max over heads h and entries of |Ṽ^h − Ṽ^h_cpu| (Algorithm 4's
// line 6 output of each head), its head and column (0-based; −1 when there are no heads or entries).
struct HeadDiff {
  double diff = 0;
  int head = -1, column = -1;
};
HeadDiff largest_head_diff(const std::vector<AttentionRecord<float>>& recs,
                           const std::vector<AttentionRecord<float>>& cpu_recs);

}  // namespace sf
