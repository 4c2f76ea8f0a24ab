// Shared by the libFuzzer targets: a private scratch folder, writing the input to files, splitting it.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>

namespace fuzz {

// One folder per process (libFuzzer's -jobs/-workers run several), removed at exit.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() / ("stepformer-fuzz-" + std::to_string(::getpid()));
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

// Two files in one input: the bytes before the first NUL and the bytes after it (text files hold no NUL).
inline std::pair<std::string_view, std::string_view> split(const uint8_t* data, size_t size) {
  const std::string_view s(reinterpret_cast<const char*>(data), size);
  const size_t nul = s.find('\0');
  if (nul == std::string_view::npos) return {s, {}};
  return {s.substr(0, nul), s.substr(nul + 1)};
}

}  // namespace fuzz
