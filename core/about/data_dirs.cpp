#include "core/about/data_dirs.hpp"

#include <cstdlib>
#include <system_error>

namespace sf {

namespace fs = std::filesystem;

namespace {

// Whether `path` is `dir` or lies below it (both compared after resolving symbolic links, so that a
// build tree reached through a link still counts).
bool is_inside(const fs::path& path, const fs::path& dir) {
  std::error_code ec;
  const fs::path d = fs::weakly_canonical(dir, ec);
  if (ec || d.empty()) return false;
  const fs::path rel = path.lexically_relative(d);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

DataRoot data_root_for(const fs::path& exe, const char* env_data_dir, const BuildInfo& build) {
  if (env_data_dir && *env_data_dir) return {env_data_dir, "STEPFORMER_DATA_DIR"};
  if (*build.binary_dir && is_inside(exe, build.binary_dir)) return {build.source_dir, "the build tree"};
  return {(exe.parent_path().parent_path() / "share" / "stepformer").string(), "the installed prefix"};
}

const DataRoot& data_root() {
  static const DataRoot root = [] {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return data_root_for(ec ? fs::path() : exe, std::getenv("STEPFORMER_DATA_DIR"), build_info());
  }();
  return root;
}

std::string data_path(const std::string& sub) { return (fs::path(data_root().path) / sub).string(); }

}  // namespace sf
