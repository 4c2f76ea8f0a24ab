// File helpers shared by every writer in core: atomic replacement and bounded reads.
#pragma once
#include <string>

namespace sf {
// Writes `bytes` to path.tmp.<pid>, flushes, then renames over `path`, so a reader never
// sees a half-written file and a failed write leaves the old file intact. Throws sf::Error.
void write_file_atomic(const std::string& path, const std::string& bytes);
// Reads a whole file; throws sf::Error if it cannot be opened or is larger than max_bytes.
std::string read_file(const std::string& path, size_t max_bytes);
}  // namespace sf
