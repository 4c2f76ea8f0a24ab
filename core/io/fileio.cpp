#include "core/io/fileio.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/model/error.hpp"

namespace sf {

void write_file_atomic(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error("cannot write " + path + ": " + std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0 &&
                  ::fsync(::fileno(f)) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    throw Error("cannot write " + path + ": " + std::strerror(err ? err : EIO) + " (the old file, if any, is untouched)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw Error("cannot replace " + path + ": " + std::strerror(e));
  }
}

std::string read_file(const std::string& path, size_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path + " is a directory, not a file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open " + path + ": " + std::strerror(errno));
  f.seekg(0, std::ios::end);
  const std::streamoff n = f.tellg();
  if (n < 0) throw Error("cannot read " + path);
  if (static_cast<size_t>(n) > max_bytes)
    throw Error(path + " is " + std::to_string(n) + " bytes, more than the limit of " + std::to_string(max_bytes));
  std::string s(static_cast<size_t>(n), '\0');
  f.seekg(0);
  f.read(s.data(), n);
  if (!f) throw Error("cannot read " + path);
  return s;
}

}  // namespace sf
