// The app's GPU attention backend: gpu::GpuAttention on the window's GL context, used as every
// MHAttention call of the traced Forward run (Algorithm 10 line 6, 9 line 5, 8 lines 5, 14 and 16:
// Session::set_attention_hook).
// It runs the teaching form (one dispatch per pseudocode line) so that every intermediate
// comes back, and replays them into the trace with core's events (trace_mh_attention_replay),
// so the stepper and the heatmaps show the GPU's numbers.
// The guard (NOT IN THE PAPER; session 17): on an NVIDIA H200 the teaching form gave wrong Ṽ (docs/gpu.md) while
// Mesa's llvmpipe and the fused form were right. So every teaching-form call is checked against core's untraced
// Algorithm 5 on the same inputs, each head's Ṽ^h and the call's Ṽ within agreement_tolerance
// (core/algorithms/attention_check.hpp). A call that disagrees is traced with core's values instead, its kind says
// so, and the backend counts it (guard()), for the GPU tab's warning and --dump-state.
#pragma once
#include <memory>
#include <string>

#include "app/session.hpp"

namespace sf {

// What the guard saw since the GPU was set up: teaching-form calls checked against core, those that disagreed,
// the largest difference of any checked call (max |ΔṼ|, the heads' Ṽ^h or the call's Ṽ) and its tolerance, and
// the CPU time the checks took.
struct GpuGuardStats {
  long checked = 0, disagreed = 0;
  double largest_diff = 0, largest_tolerance = 0;  // the largest max |ΔṼ| and the tolerance of its call
  double check_ms = 0;
};

// A checked call whose GPU Ṽ was not finite: its max |ΔṼ| is ∞, said in words where ∞ cannot be written (JSON).
inline constexpr const char* kNotFiniteDiff = "∞ (a NaN or ∞ in the GPU's Ṽ)";

class GpuAttentionBackend {
 public:
  GpuAttentionBackend();
  ~GpuAttentionBackend();
  // Creates the GPU attention on the GL context current on this thread, once (later calls
  // return the first answer). false, with why_not(), when `gl43` is false, the build has no
  // GPU module, or a shader does not compile.
  bool ensure(bool gl43);
  bool ready() const;
  const std::string& why_not() const { return why_not_; }
  std::string device() const;  // the renderer, GL version and context, "" when not ready
  int max_shared_bytes() const;  // GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, 0 when not ready
  const GpuGuardStats& guard() const;
  // The hook for Session::set_attention_hook (valid while this object lives and is ready).
  AttentionHook hook();
  // Deletes the GL objects; call while the context is still current (before it goes).
  void release();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool tried_ = false;
  std::string why_not_;
};

}  // namespace sf
