// Shared by the libFuzzer targets: a private scratch folder, writing the input to files, splitting it.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

namespace fuzz {

// One folder per process (libFuzzer's -jobs/-workers run several), removed at exit. Under
// $STEPFORMER_FUZZ_SCRATCH when set, else in /dev/shm (memory) where there is one: the readers read the
// same bytes from the same kind of file, but writing a file per input to a disk's file system is slow
// (docs/hardening.md, "Speed": the targets that read files ran several times faster).
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    std::error_code ec;
    const char* env = std::getenv("STEPFORMER_FUZZ_SCRATCH");
    const std::filesystem::path base = env && *env                                  ? std::filesystem::path(env)
                                       : std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm")
                                                                                     : std::filesystem::temp_directory_path();
    std::filesystem::path d = base / ("stepformer-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup;
  return dir;
}

inline std::string write(const std::string& name, std::string_view bytes) {
  const std::filesystem::path p = scratch() / name;
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return p.string();
}

inline void remove(const std::string& name) {
  std::error_code ec;
  std::filesystem::remove(scratch() / name, ec);
}

// A file of the test data (tests/data/REL): under $STEPFORMER_FUZZ_TEST_DATA when set (fuzz/device_run.sh
// sets it where the binaries run away from this build tree), else the source tree's. A missing file stops
// the target: fuzzing on without it would silently lose the coverage it gives.
inline std::string test_data(const std::string& rel) {
  const char* env = std::getenv("STEPFORMER_FUZZ_TEST_DATA");
  const std::string path = std::string(env && *env ? env : STEPFORMER_TEST_DATA) + "/" + rel;
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "fuzz: cannot read the test data %s (set STEPFORMER_FUZZ_TEST_DATA)\n", path.c_str());
    std::exit(2);
  }
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Two files in one input: the bytes before the first NUL and the bytes after it (text files hold no NUL).
inline std::pair<std::string_view, std::string_view> split(const uint8_t* data, size_t size) {
  const std::string_view s(reinterpret_cast<const char*>(data), size);
  const size_t nul = s.find('\0');
  if (nul == std::string_view::npos) return {s, {}};
  return {s.substr(0, nul), s.substr(nul + 1)};
}

}  // namespace fuzz
