// The GPU tab's words and figures, without ImGui (tests/app checks them headless): times that
// say "not measured" instead of a zero that looks measured, and the names of calls and dispatches.
#pragma once
#include <string>
#include <vector>

#include "app/gpu_attention_backend.hpp"
#include "app/session.hpp"

namespace sf {

// Whether a clock measured this time: NaN (no GPU clock) and 0 (a timer pair that read the same
// stamp, as Mesa's llvmpipe's does) were not measured; launching any dispatch takes longer.
bool measured(double ms);
// A time for people: "1.234 ms", "12.5 µs", "480 ns"; "not measured" when !measured(ms).
std::string gpu_time_text(double ms);

// A call's or a run's times: the sum of its dispatches' times, NaN when any of them was not
// measured (a sum over some would read as the whole).
struct CallTimes {
  double gpu_ms = 0, cpu_ms = 0;
};
CallTimes call_times(const AttentionCall& c);
CallTimes run_times(const std::vector<AttentionCall>& calls);

// "Alg. 8 L16": the forward algorithm's line that made the call.
std::string call_site_text(const AttentionCall& c);
// "Alg. 4 L4", "Alg. 4 L4–6" (a fused dispatch), "Alg. 5 L4", "Alg. 4-R L8–13" (random-feature attention).
std::string dispatch_lines_text(const AttentionDispatch& d);
// "4.8e-07"; "—" for NaN (not compared).
std::string diff_text(double d);

// The GPU tab's note on the fused form (shaders/flash_attention.comp): that it is Algorithm 4-F, with
// the block sizes gpu/attention.cpp compiles it with for d_attn and d_mid on a device offering
// max_shared_bytes of shared memory (0: not known yet, OpenGL 4.3's minimum is said and used).
std::string fused_form_text(int d_attn, int d_mid, int max_shared_bytes);
// Its heading, short enough for a narrow Inspector: "Fused shader: Algorithm 4-F (B_r = 64, B_c = 32)".
std::string fused_form_title(int d_attn, int d_mid, int max_shared_bytes);

// The guard's words for the GPU tab and --dump-state ("" before any teaching-form call was checked). With
// disagreements: a warning naming the device, how many calls disagreed, the largest max |ΔṼ|, and what to do;
// else one line saying every checked call agreed, with the largest difference and its tolerance.
std::string guard_text(const GpuGuardStats& g, const std::string& device);

// The first event after the frame entered at `enter` (its lines and the calls they made);
// t.size() when the trace ends inside it; enter itself when it is not an Enter event.
size_t frame_end(const Trace& t, size_t enter);

}  // namespace sf
