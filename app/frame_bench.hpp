// --bench N: measures N frames with the default panels open (median and p90 frame time),
// and the time from a prompt edit to the new trace on screen (every 4th frame edits the
// prompt). Each sample runs from the start of the frame to glFinish after rendering, so
// Mesa's software renderer's work is counted.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace sf {

class FrameBench {
 public:
  explicit FrameBench(int frames) : frames_(frames) {}
  bool active() const { return frames_ > 0; }
  int total_frames() const { return frames_ + kWarmup; }
  // The prompt to set at the start of frame f, or "" for a plain frame.
  std::string prompt_for(int f) const;
  void begin_frame();
  void end_frame(int f);  // call after glFinish
  void add_trace_ms(double ms) { trace_ms_.push_back(ms); }
  std::string report() const;

 private:
  static constexpr int kWarmup = 5;
  int frames_;
  std::chrono::steady_clock::time_point t0_;
  std::vector<double> plain_ms_, edit_ms_, trace_ms_;
};

}  // namespace sf
