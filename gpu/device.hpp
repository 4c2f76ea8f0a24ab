// What the GL context offers the attention shaders: its names and the limits they run into.
#pragma once
#include <array>
#include <string>

namespace sf::gpu {

struct DeviceInfo {
  std::string renderer;  // GL_RENDERER, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string vendor;    // GL_VENDOR
  std::string version;   // GL_VERSION
  std::string context;   // where the context came from: "EGL surfaceless (Mesa)", "the caller's context"
  int gl_major = 0, gl_minor = 0;
  long long max_ssbo_bytes = 0;     // GL_MAX_SHADER_STORAGE_BLOCK_SIZE: the largest buffer a shader sees
  int max_shared_bytes = 0;         // GL_MAX_COMPUTE_SHARED_MEMORY_SIZE
  std::array<int, 3> max_groups{};  // GL_MAX_COMPUTE_WORK_GROUP_COUNT, per dimension
  int timestamp_bits = 0;           // GL_QUERY_COUNTER_BITS of GL_TIMESTAMP; 0: no GPU clock

  // A CPU rasteriser (Mesa llvmpipe, softpipe, swrast): right, but no faster than the CPU.
  bool software() const;
  // "llvmpipe (LLVM 15.0.6, 256 bits), OpenGL 4.5 (Core Profile) Mesa 22.3.6, EGL surfaceless (Mesa)"
  std::string summary() const;
};

}  // namespace sf::gpu
