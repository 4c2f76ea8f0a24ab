// Minimal UTF-8 helpers for the character-level tokenizer.
#pragma once
#include <string>
#include <vector>

namespace sf {
// Splits UTF-8 text into characters (code points, each as its UTF-8 bytes). Invalid bytes
// become single-byte entries so that they can be reported, never dropped.
std::vector<std::string> utf8_split(const std::string& text);
// Number of characters utf8_split would return.
size_t utf8_length(const std::string& text);
}  // namespace sf
