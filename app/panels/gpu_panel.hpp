// Inspector › GPU: the attention backend switch (CPU: core's Eigen / GPU: the compute shaders of
// gpu/), the device, why the GPU is unavailable or which call it refused, and every MHAttention
// call of the last traced Forward run with its dispatches, clocks and max |Ṽ_gpu − Ṽ_cpu|
// (gpu_calls_table.hpp; the words and figures: gpu_text.hpp).
#pragma once
#include "app/app.hpp"

namespace sf {

struct GpuPanel {
  void draw(App& app);
};

}  // namespace sf
