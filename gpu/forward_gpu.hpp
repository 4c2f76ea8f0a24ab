// The forward algorithms (10, 9, 8) and the KV-cached step with their MHAttention on the GPU.
//
// GpuForward makes core's two hooks, MHAttentionFn<float> (every attention line of Algorithms 8,
// 9, 10: self, cross, every mask and variant) and CachedMHAttentionFn (the KV cache's step, not in
// the paper), from one GpuAttention and a Form, and records every call: where it came from (the
// forward algorithm's line and the layer, from av.patch), what it was (describe_call), where it
// ran, its dispatch times, and optionally how far its Ṽ is from core's on the same inputs.
// Everything else of the forward pass stays on the CPU. Pass the hooks to Architecture::forward,
// dinference / edinference (InferenceOptions::attn, cached_attn) or fill_masks.
//
// A call the GPU cannot run (sf::Error from GpuAttention: e.g. the fused form needs more shared
// memory than the device has) is never dropped silently: it runs on core's attention and its
// record says "ran on the CPU: <why>".
#pragma once
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "gpu/attention.hpp"

namespace sf::gpu {

// One MHAttention call of a forward pass.
struct CallRecord {
  int algorithm = 0;         // the forward algorithm that called (10, 9, 8), from av.patch.call
  int line = 0;              // its line (10's 6, 9's 5, 8's 5, 14 or 16)
  int layer = 0;             // 1-based, from av.patch.l
  bool cached = false;       // the KV cache's step (n new columns over ℓ_c cached ones)
  int l_x = 0, l_z = 0;      // query columns, key columns (cached: ℓ_c + n or ℓ_z)
  std::string what;          // describe_call: "self-attention · causal mask · RoPE"
  bool on_gpu = true;        // false: ran on core's attention, see cpu_reason
  std::string cpu_reason;    // why it ran on the CPU ("" on the GPU)
  double max_diff = -1;      // max |Ṽ_gpu − Ṽ_cpu| (core's attention on the same inputs); < 0: not checked
  double tolerance = -1;     // agreement_tolerance for this call (attention_check.hpp); < 0: not checked
  double call_ms = 0;        // CPU clock of the whole call (uploads, dispatches, read-back)
  std::vector<DispatchTime> times;  // its dispatches (empty unless timed)
};

struct GpuForwardOptions {
  Form form = Form::Fused;
  bool timed = true;  // time every dispatch (serialises them: GL_TIMESTAMP queries and glFinish)
  bool check = true;  // run core's attention on the same inputs and record max |Ṽ_gpu − Ṽ_cpu|
};

class GpuForward {
 public:
  GpuForward(GpuAttention& gpu, GpuForwardOptions opt = {}) : gpu_(gpu), opt_(opt) {}

  // The hooks; they record into this object, which must outlive them.
  MHAttentionFn<float> attention();
  CachedMHAttentionFn cached_attention();

  const std::vector<CallRecord>& calls() const { return calls_; }
  void clear() { calls_.clear(); }
  GpuAttention& gpu() { return gpu_; }
  const GpuForwardOptions& options() const { return opt_; }

 private:
  MatF run(const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
           const AttentionOptions& av);
  MatF run_cached(const MatF& X, const MHAttentionW<const float>& W, std::vector<MatF>& K, std::vector<MatF>& V,
                  bool append, const Mask& mask, const AttentionOptions& av);
  GpuAttention& gpu_;
  GpuForwardOptions opt_;
  std::vector<CallRecord> calls_;
};

// "Alg. 10 L6, layer 2" ("Alg. 10 L6 (KV cache), layer 2" for a cached step).
std::string call_site(const CallRecord& r);
// One line per call: "Alg. 10 L6, layer 2: self-attention · causal mask · RoPE — GPU, 6 dispatches,
// GPU clock not measured, 0.41 ms CPU clock, max |Ṽ_gpu − Ṽ_cpu| 3.1e-07", or "… — ran on the CPU: why".
std::string call_line(const CallRecord& r);
// Whether a checked call's Ṽ is further from core's than its tolerance: a wrong result (the teaching form on an
// NVIDIA H200, docs/gpu.md), which call_line says.
bool disagrees(const CallRecord& r);
int disagreeing_calls(const std::vector<CallRecord>& calls);
// The largest max |Ṽ_gpu − Ṽ_cpu| over the checked calls (−1 when none was checked).
double max_call_diff(const std::vector<CallRecord>& calls);
// How many calls ran on the CPU.
int cpu_calls(const std::vector<CallRecord>& calls);

}  // namespace sf::gpu
