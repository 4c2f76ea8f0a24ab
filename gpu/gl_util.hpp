// The small GL runtime under GpuAttention (internal to gpu/): device limits, shader storage
// buffers, compute programs compiled from shaders/, and per-dispatch timing.
#pragma once
#include <glad/gl.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "gpu/attention.hpp"
#include "gpu/device.hpp"

namespace sf::gpu {

// Reads names and limits from the current context (glad must be loaded).
DeviceInfo query_device(const std::string& context);

// Throws sf::Error (what, bytes, the limit, what to do) when a buffer of `bytes` cannot be
// seen whole by a shader on this device, or holds more floats than a 32-bit index reaches.
void check_buffer_size(const std::string& what, size_t bytes, const DeviceInfo& dev);

// A GL buffer object (RAII) used as a shader storage or uniform buffer. It grows on demand;
// growing discards the contents. `what` names it in errors ("S (teaching form, 8 heads)").
class Buffer {
 public:
  Buffer();
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Makes room for `bytes`; throws sf::Error naming `what` when the device cannot.
  void reserve(size_t bytes, const std::string& what, const DeviceInfo& dev);
  void upload(const void* data, size_t bytes, size_t offset = 0);
  void download(void* data, size_t bytes, size_t offset = 0) const;
  // Replaces the whole contents (a small parameter block): orphans the old storage.
  void set(const void* data, size_t bytes);
  GLuint id() const { return id_; }

 private:
  GLuint id_ = 0;
  size_t capacity_ = 0;
};

// One compute program from DIR/NAME.comp. `defines` are inserted after the #version line,
// followed by "#line 2", so the compile log's line numbers are the file's.
class Program {
 public:
  // Throws sf::Error naming the file, with the compiler's or linker's log.
  Program(const std::string& dir, const std::string& name, const std::vector<std::pair<std::string, int>>& defines);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  GLuint id() const { return id_; }

 private:
  GLuint id_ = 0;
};

// The folder the shaders are read from: $STEPFORMER_SHADERS, else the data root's shaders/ (the source
// tree's for a program in the build tree, <prefix>/share/stepformer/shaders when installed; data_dirs.hpp).
std::string shader_dir();

// Times dispatches with GL_TIMESTAMP query pairs (GPU clock), and, as a cross-check, with
// the CPU clock from a glFinish before the dispatch to a glFinish after it. When off, it does
// nothing, and the dispatches are not serialised by glFinish. A GPU time is NaN where the GL has
// no GPU clock, or where its pair reads under kMinDispatchNs (the clock did not see the work).
class DispatchTimer {
 public:
  static constexpr double kMinDispatchNs = 1000;  // 1 µs: less than launching any dispatch takes
  DispatchTimer() = default;
  ~DispatchTimer();
  DispatchTimer(const DispatchTimer&) = delete;
  DispatchTimer& operator=(const DispatchTimer&) = delete;

  void start(bool on, const DeviceInfo& dev);
  void before(DispatchTime what);  // what and where (gpu_ms, cpu_ms are filled in)
  void after();
  // The times of the dispatches since start(); waits for the GPU's answers.
  std::vector<DispatchTime> finish();

 private:
  bool on_ = false;
  bool gpu_clock_ = false;
  std::vector<GLuint> queries_;  // 2 per dispatch, reused between batches
  std::vector<DispatchTime> times_;
  std::chrono::steady_clock::time_point t0_;

};

}  // namespace sf::gpu
