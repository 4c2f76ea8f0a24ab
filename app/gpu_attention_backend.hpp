// The app's GPU attention backend: gpu::GpuAttention on the window's GL context, used as every
// MHAttention call of the traced Forward run (Algorithm 10 line 6, 9 line 5, 8 lines 5, 14 and 16:
// Session::set_attention_hook).
// It runs the teaching form (one dispatch per pseudocode line) so that every intermediate
// comes back, and replays them into the trace with core's events (trace_mh_attention_replay),
// so the stepper and the heatmaps show the GPU's numbers.
#pragma once
#include <memory>
#include <string>

#include "app/session.hpp"

namespace sf {

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
