// Unicode helpers for the tokenizers: code points, PCRE2 regular expressions with Unicode
// properties (\p{L}, \p{P}, …), lowercasing and accent stripping.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sf {

constexpr char32_t kInvalidUtf8 = 0xFFFFFFFF;

// Decodes the code point starting at text[i]; returns its length in bytes. A byte that does not
// start a valid UTF-8 sequence gives cp = kInvalidUtf8 and length 1.
size_t utf8_next(const std::string& text, size_t i, char32_t& cp);
std::string utf8_encode(char32_t cp);

// A PCRE2 pattern compiled with PCRE2_UTF | PCRE2_UCP (so \s, \w, \p{…} are Unicode's) and
// PCRE2_MATCH_INVALID_UTF (bytes that are not UTF-8 never match, and never make it fail).
class UnicodeRegex {
 public:
  // anchored: the pattern must match the whole subject (for matches()). Throws sf::Error.
  explicit UnicodeRegex(const std::string& pattern, bool anchored = false);
  ~UnicodeRegex();
  UnicodeRegex(const UnicodeRegex&) = delete;
  UnicodeRegex& operator=(const UnicodeRegex&) = delete;
  // Every match in text, left to right, as (byte offset, length).
  std::vector<std::pair<size_t, size_t>> find_all(const std::string& text) const;
  // True when the whole of s matches (an anchored pattern).
  bool matches(const std::string& s) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Unicode general categories of one code point.
bool is_letter(char32_t cp);          // L*
bool is_number(char32_t cp);          // N*
bool is_punctuation(char32_t cp);     // P*
bool is_combining_mark(char32_t cp);  // Mn
bool is_control(char32_t cp);         // C* (control, format, unassigned, private use, surrogate)
bool is_space_separator(char32_t cp); // Zs

// Simple lowercase mapping (glibc's C.UTF-8 towlower; no final-sigma rule).
char32_t to_lower(char32_t cp);
// The character without its accents (NFD, combining marks dropped) as UTF-8, from the table of
// accent_table.inc (Latin-1 Supplement, Latin Extended-A/B/Additional, Greek, Cyrillic) and
// Hangul's algorithmic decomposition; other characters are returned unchanged.
std::string strip_accents(char32_t cp);

}  // namespace sf
