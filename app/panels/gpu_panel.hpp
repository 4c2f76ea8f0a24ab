// Inspector › GPU: the attention backend switch (CPU: core's Eigen / GPU: the compute shaders of
// gpu/), the device, why the GPU is unavailable when it is, and the time of each dispatch of the
// last traced pass with max |P_gpu − P_cpu|.
#pragma once
#include <string>

#include "app/app.hpp"

namespace sf {

// A dispatch time for people: "1.234 ms", "12.5 µs", "480 ns", "n/a" for NaN (no usable GPU
// clock), never a bare 0.000 that looks measured.
std::string gpu_time_text(double ms);

struct GpuPanel {
  void draw(App& app);
};

}  // namespace sf
