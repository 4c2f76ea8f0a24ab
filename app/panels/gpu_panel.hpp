// Inspector › GPU: the attention backend switch (CPU: core's Eigen / GPU: the compute shaders of
// gpu/), the device, why the GPU is unavailable when it is, and the time of each dispatch of the
// last traced pass with max |P_gpu − P_cpu|.
#pragma once
#include "app/app.hpp"

namespace sf {

struct GpuPanel {
  void draw(App& app);
};

}  // namespace sf
