#include "core/tokenizers/utf8.hpp"

namespace sf {

static size_t char_len(const std::string& s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 1;
  return n;
}

std::vector<std::string> utf8_split(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    size_t n = char_len(text, i);
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

size_t utf8_length(const std::string& text) {
  size_t n = 0;
  for (size_t i = 0; i < text.size(); i += char_len(text, i)) ++n;
  return n;
}

}  // namespace sf
