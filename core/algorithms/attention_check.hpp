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

}  // namespace sf
