// Small wording helpers for text the panels show.
#pragma once
#include <string>

namespace sf {

// "1 time", "3 times", "0 times": a count with its noun in the right number. `noun` is the
// singular; `plural` defaults to the singular + "s" (give it for "1 sequence" / "2 sequences" alike,
// or an irregular one such as "1 index" / "2 indices").
inline std::string counted(long long n, const std::string& noun, const std::string& plural = "") {
  return std::to_string(n) + " " + (n == 1 ? noun : plural.empty() ? noun + "s" : plural);
}

}  // namespace sf
