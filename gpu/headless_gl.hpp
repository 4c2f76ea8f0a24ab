// A headless OpenGL 4.3 core context through EGL: no window, no X, no Wayland.
#pragma once
#include <memory>
#include <string>

namespace sf::gpu {

// A function that returns the address of a GL entry point by name: eglGetProcAddress,
// glfwGetProcAddress (the same signature as glad2's GLADloadfunc).
using GlLoader = void (*(*)(const char* name))();

class HeadlessGl {
 public:
  // Tries, in this order:
  //   1. EGL devices that are real GPUs (EGL_PLATFORM_DEVICE_EXT: a server with an NVIDIA
  //      card and no X),
  //   2. Mesa's surfaceless platform (EGL_PLATFORM_SURFACELESS_MESA: any Mesa driver,
  //      llvmpipe included),
  //   3. software EGL devices.
  // The environment variable STEPFORMER_EGL_PLATFORM=device or =surfaceless keeps to one
  // platform. On success the context is current on this thread. On failure returns nullptr and
  // sets why_not to what was tried, what failed and what to do.
  static std::unique_ptr<HeadlessGl> create(std::string& why_not);
  ~HeadlessGl();
  HeadlessGl(const HeadlessGl&) = delete;
  HeadlessGl& operator=(const HeadlessGl&) = delete;

  // Makes the context current on this thread; throws sf::Error when EGL refuses.
  void make_current() const;
  // Where the context came from, e.g. "EGL surfaceless (Mesa)" or "EGL device /dev/dri/renderD128".
  const std::string& platform() const;
  // eglGetProcAddress, to load GL with.
  static GlLoader loader();

 private:
  struct Impl;
  explicit HeadlessGl(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sf::gpu
