// Where Stepformer reads its data at run time: the data root holds assets/ (the bundled models,
// examples.json, lessons/) and shaders/ (the GPU's compute shaders), as the source tree does and as the
// package installs them under /usr/share/stepformer. The root is, in order:
//   1. $STEPFORMER_DATA_DIR, when set and not empty (an explicit choice wins over any guess);
//   2. for a program inside the build tree it was built in (development, the tests): the source tree;
//   3. otherwise (an installed program): <prefix>/share/stepformer, <prefix> being the folder above the
//      one that holds the executable (/usr/bin/stepformer → /usr/share/stepformer).
#pragma once
#include <filesystem>
#include <string>

#include "core/about/build_info.hpp"

namespace sf {

struct DataRoot {
  std::string path;
  std::string found_by;  // "STEPFORMER_DATA_DIR", "the build tree" or "the installed prefix"
};

// The rule above for an executable `exe` (an absolute, canonical path), the value of $STEPFORMER_DATA_DIR
// (null when unset) and the build's folders; pure, for the tests.
DataRoot data_root_for(const std::filesystem::path& exe, const char* env_data_dir, const BuildInfo& build);

// The rule applied to this process (/proc/self/exe, the environment, this build); found once.
const DataRoot& data_root();

// A folder of the data root: data_path("assets"), data_path("shaders").
std::string data_path(const std::string& sub);

}  // namespace sf
