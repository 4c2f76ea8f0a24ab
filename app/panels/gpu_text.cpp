#include "app/panels/gpu_text.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "core/pseudocode/pseudocode.hpp"  // algorithm_label
#include "core/trace/vocabulary.hpp"
#include "app/widgets/wording.hpp"
#include "gpu/fused_blocks.hpp"

namespace sf {

bool measured(double ms) { return ms > 0; }  // false for NaN too

std::string gpu_time_text(double ms) {
  if (!measured(ms)) return "not measured";
  char buf[32];
  if (ms >= 0.1) std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  else if (ms >= 1e-3) std::snprintf(buf, sizeof buf, "%.1f µs", ms * 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f ns", ms * 1e6);
  return buf;
}

namespace {

constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

void add(double& sum, double ms) { sum += measured(ms) ? ms : kNotMeasured; }  // NaN stays NaN

}  // namespace

CallTimes call_times(const AttentionCall& c) {
  CallTimes t;
  for (const AttentionDispatch& d : c.dispatches) add(t.gpu_ms, d.gpu_ms), add(t.cpu_ms, d.cpu_ms);
  return t;
}

CallTimes run_times(const std::vector<AttentionCall>& calls) {
  CallTimes t;
  for (const AttentionCall& c : calls) {
    const CallTimes ct = call_times(c);
    add(t.gpu_ms, ct.gpu_ms), add(t.cpu_ms, ct.cpu_ms);
  }
  return t;
}

std::string call_site_text(const AttentionCall& c) {
  return "Alg. " + std::to_string(c.alg) + " L" + std::to_string(c.line);
}

std::string dispatch_lines_text(const AttentionDispatch& d) {
  std::string s = "Alg. " + algorithm_label(d.algorithm) + " L" + std::to_string(d.line_first);
  if (d.line_last > d.line_first) s += "–" + std::to_string(d.line_last);
  return s;
}

std::string diff_text(double d) {
  if (std::isnan(d)) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", d);
  return buf;
}

std::string fused_form_title(int d_attn, int d_mid, int max_shared_bytes) {
  const gpu::FusedBlocks b =
      gpu::fused_blocks(d_attn, d_mid, max_shared_bytes > 0 ? max_shared_bytes : gpu::kMinSharedBytes);
  return "Fused shader: Algorithm " + algorithm_label(algs::flash_attention) + " (B_r = " +
         std::to_string(b.B_r) + ", " + (b.B_c ? "B_c = " + std::to_string(b.B_c) : std::string("no B_c fits")) + ")";
}

std::string fused_form_text(int d_attn, int d_mid, int max_shared_bytes) {
  const bool known = max_shared_bytes > 0;
  const int shared = known ? max_shared_bytes : gpu::kMinSharedBytes;
  const gpu::FusedBlocks b = gpu::fused_blocks(d_attn, d_mid, shared);
  const std::string alg = "Algorithm " + algorithm_label(algs::flash_attention);
  std::string s = "The fused form (shaders/flash_attention.comp, stepformer-cli's --gpu-form fused) is " + alg +
                  ", FlashAttention: each work group takes B_r = " + std::to_string(b.B_r) + " query columns and walks "
                  "the keys in blocks of ";
  const std::string memory =
      "(d_attn + d_mid)·4 = " + std::to_string(b.bytes_per_key) + " bytes per key, in " +
      (known ? "this device's " + std::to_string(shared) + " bytes of shared memory"
             : std::to_string(shared) + " bytes of shared memory, OpenGL 4.3's minimum (the GPU is not set up yet)");
  if (b.B_c == 0)
    return s + "keys held in shared memory, but this model's keys do not fit (" + memory +
           "): the fused form refuses it, the teaching form runs it.";
  return s + "B_c = " + std::to_string(b.B_c) + " keys held in shared memory (at most " + std::to_string(gpu::kFlashMaxBC) +
         "; " + memory + "), with the online softmax of lines 9–12; key blocks the causal mask hides are skipped "
         "(line 7). This tab runs the teaching form (one dispatch per pseudocode line) so that S and softmax(S) come back.";
}

size_t frame_end(const Trace& t, size_t enter) {
  if (enter >= t.size() || t.events[enter].kind != EventKind::Enter) return enter;
  const int depth = t.events[enter].depth;
  size_t k = enter + 1;
  while (k < t.size() && (t.events[k].depth > depth || (t.events[k].depth == depth && t.events[k].kind != EventKind::Enter)))
    ++k;
  return k;
}

std::string guard_text(const GpuGuardStats& g, const std::string& device) {
  if (g.checked == 0) return "";
  char buf[160];
  if (g.disagreed == 0) {
    std::snprintf(buf, sizeof buf, "; largest max |ΔṼ| = %.1e (tolerance %.1e).", g.largest_diff,
                  g.largest_tolerance);
    return "Checked against core (not in the paper): " + counted(g.checked, "teaching-form call") +
           " on this device, every one agreeing" + buf;
  }
  std::snprintf(buf, sizeof buf, "largest max |ΔṼ| = %.2g, tolerance %.1e", g.largest_diff, g.largest_tolerance);
  return "Warning: on " + device + ", the GPU's teaching form disagreed with core on " + std::to_string(g.disagreed) +
         " of " + counted(g.checked, "checked call") + " (" + buf +
         "). Those calls show core's values, not the GPU's (their kind says so). Please report it with the device "
         "and driver. The fused form (stepformer-cli forward --attention gpu --gpu-form fused) was right on the "
         "NVIDIA H200 where the teaching form was seen wrong; see docs/gpu.md.";
}

}  // namespace sf
