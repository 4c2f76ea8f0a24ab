#include "core/about/build_info.hpp"

#include <Eigen/Core>
#include <filesystem>
#include <system_error>

#include "core/about/data_dirs.hpp"

namespace sf {

std::string version_text(const std::string& program) {
  const BuildInfo& b = build_info();
  const std::string eigen = std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                            std::to_string(EIGEN_MINOR_VERSION);
  const DataRoot& data = data_root();
  std::error_code ec;
  const bool present = std::filesystem::is_directory(data.path, ec);
  return program + " " + b.version + "\n" +
         "build type: " + b.build_type + "\n" +
         "instruction set: " + (*b.march ? b.march : "the compiler's default (any x86-64 CPU)") + "\n" +
         "compiler: " + b.compiler + "\n" +
         "Eigen: " + eigen + "\n" +
         "GPU compute shaders: " + (b.gpu ? "compiled in" : "not compiled in (STEPFORMER_GPU=OFF)") + "\n" +
         "data: " + data.path + " (from " + data.found_by + (present ? "" : "; the folder is missing") + ")\n";
}

}  // namespace sf
