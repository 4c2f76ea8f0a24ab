// What this build of Stepformer is: its version and the options it was built with. Both come from CMake
// (core/about/build_info.cpp.in, configured into the build directory), so that CMake's project(VERSION)
// is the one place the version is written.
#pragma once
#include <string>

namespace sf {

struct BuildInfo {
  const char* version;     // CMake's project(VERSION), e.g. "0.9.0"
  const char* build_type;  // CMAKE_BUILD_TYPE, e.g. "Release"
  const char* march;       // "-march=x86-64-v2", "-march=native", or "" (the compiler's default: any x86-64)
  const char* compiler;    // CMake's compiler id and version, e.g. "GNU 12.2.0"
  bool gpu;                // the OpenGL compute shaders (gpu/, shaders/) are compiled in
  const char* source_dir;  // the source tree it was built from (its assets/ and shaders/)
  const char* binary_dir;  // the build tree; a program run from inside it reads the source tree's data
};

const BuildInfo& build_info();

// What `PROGRAM --version` prints: "PROGRAM VERSION", then one line each for the build's options
// (build type, -march, compiler, Eigen, whether the GPU shaders are compiled in) and the data folder
// with how it was found (core/about/data_dirs.hpp).
std::string version_text(const std::string& program);

}  // namespace sf
