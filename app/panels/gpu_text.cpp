#include "app/panels/gpu_text.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

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
  std::string s = "Alg. " + std::to_string(d.algorithm) + " L" + std::to_string(d.line_first);
  if (d.line_last > d.line_first) s += "–" + std::to_string(d.line_last);
  return s;
}

std::string diff_text(double d) {
  if (std::isnan(d)) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", d);
  return buf;
}

size_t frame_end(const Trace& t, size_t enter) {
  if (enter >= t.size() || t.events[enter].kind != EventKind::Enter) return enter;
  const int depth = t.events[enter].depth;
  size_t k = enter + 1;
  while (k < t.size() && (t.events[k].depth > depth || (t.events[k].depth == depth && t.events[k].kind != EventKind::Enter)))
    ++k;
  return k;
}

}  // namespace sf
