#include "app/frame_bench.hpp"

#include <algorithm>
#include <cstdio>

namespace sf {

namespace {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1) + 0.5)];
}

}  // namespace

std::string FrameBench::prompt_for(int f) const {
  if (f < kWarmup || f % 4 != 0) return "";
  // Alternate between two prompts of the default prompt's length so that each edit re-traces.
  return (f / 4) % 2 ? "hello=" : "world=";
}

void FrameBench::begin_frame() { t0_ = std::chrono::steady_clock::now(); }

void FrameBench::end_frame(int f) {
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
  if (f < kWarmup) return;
  (prompt_for(f).empty() ? plain_ms_ : edit_ms_).push_back(ms);
}

std::string FrameBench::report() const {
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "frames with the default panels: %zu, median %.2f ms, p90 %.2f ms (target: median <= 16 ms)\n"
                "prompt edit -> new trace (traced forward pass): median %.3f ms, p90 %.3f ms (target <= 5 ms)\n"
                "prompt edit -> new trace on screen (trace + one frame): %zu edits, median %.2f ms, p90 %.2f ms\n",
                plain_ms_.size(), percentile(plain_ms_, 0.5), percentile(plain_ms_, 0.9), percentile(trace_ms_, 0.5),
                percentile(trace_ms_, 0.9), edit_ms_.size(), percentile(edit_ms_, 0.5), percentile(edit_ms_, 0.9));
  return buf;
}

}  // namespace sf
