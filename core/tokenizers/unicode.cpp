#include "core/tokenizers/unicode.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <clocale>
#include <cwctype>
#include <locale.h>

#include "core/model/error.hpp"

namespace sf {

size_t utf8_next(const std::string& text, size_t i, char32_t& cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > text.size()) {
    cp = kInvalidUtf8;
    return 1;
  }
  char32_t v = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      cp = kInvalidUtf8;
      return 1;
    }
    v = (v << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {  // overlong, out of range, surrogate
    cp = kInvalidUtf8;
    return 1;
  }
  cp = v;
  return len;
}

std::string utf8_encode(char32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

struct UnicodeRegex::Impl {
  pcre2_code* code = nullptr;
};

UnicodeRegex::UnicodeRegex(const std::string& pattern, bool anchored) : impl_(std::make_unique<Impl>()) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF;
  if (anchored) options |= PCRE2_ANCHORED | PCRE2_ENDANCHORED;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &err, &offset, nullptr);
  if (!impl_->code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    throw Error("PCRE2 cannot compile /" + pattern + "/ at offset " + std::to_string(offset) + ": " +
                reinterpret_cast<const char*>(msg));
  }
  pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE);  // optional speed-up; the interpreter is used without it
}

UnicodeRegex::~UnicodeRegex() { pcre2_code_free(impl_->code); }

std::vector<std::pair<size_t, size_t>> UnicodeRegex::find_all(const std::string& text) const {
  std::vector<std::pair<size_t, size_t>> out;
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start <= text.size()) {
    const int rc = pcre2_match(impl_->code, subject, text.size(), start, 0, md, nullptr);
    if (rc < 0) break;  // PCRE2_ERROR_NOMATCH (invalid UTF-8 cannot fail: PCRE2_MATCH_INVALID_UTF)
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    out.emplace_back(ov[0], ov[1] - ov[0]);
    start = ov[1] > ov[0] ? ov[1] : ov[1] + 1;  // an empty match moves on by one byte
  }
  pcre2_match_data_free(md);
  return out;
}

bool UnicodeRegex::matches(const std::string& s) const {
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  const int rc = pcre2_match(impl_->code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, md, nullptr);
  pcre2_match_data_free(md);
  return rc >= 0;
}

namespace {
bool category(char32_t cp, const char* pattern) {
  if (cp == kInvalidUtf8) return false;
  thread_local std::vector<std::pair<std::string, std::unique_ptr<UnicodeRegex>>> compiled;
  for (auto& [p, re] : compiled)
    if (p == pattern) return re->matches(utf8_encode(cp));
  compiled.emplace_back(pattern, std::make_unique<UnicodeRegex>(pattern, true));
  return compiled.back().second->matches(utf8_encode(cp));
}
}  // namespace

bool is_letter(char32_t cp) { return cp < 0x80 ? std::isalpha(static_cast<int>(cp)) != 0 : category(cp, "\\p{L}"); }
bool is_number(char32_t cp) { return cp < 0x80 ? (cp >= '0' && cp <= '9') : category(cp, "\\p{N}"); }
bool is_punctuation(char32_t cp) { return category(cp, "\\p{P}"); }
bool is_combining_mark(char32_t cp) { return cp >= 0x300 && category(cp, "\\p{Mn}"); }
bool is_control(char32_t cp) { return category(cp, "\\p{C}"); }
bool is_space_separator(char32_t cp) { return category(cp, "\\p{Zs}"); }

char32_t to_lower(char32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
  if (!utf8 || cp == kInvalidUtf8) return cp;
  return static_cast<char32_t>(towlower_l(static_cast<wint_t>(cp), utf8));
}

namespace {
struct Accent {
  char32_t cp;
  const char* stripped;
};
constexpr Accent kAccents[] = {
#include "core/tokenizers/accent_table.inc"
};
}  // namespace

std::string strip_accents(char32_t cp) {
  // Hangul syllables: NFD is the conjoining jamo L V (T) (Unicode §3.12), none of them a mark.
  constexpr char32_t SBase = 0xAC00, LBase = 0x1100, VBase = 0x1161, TBase = 0x11A7;
  constexpr char32_t VCount = 21, TCount = 28, NCount = VCount * TCount, SCount = 19 * NCount;
  if (cp >= SBase && cp < SBase + SCount) {
    const char32_t s = cp - SBase;
    std::string out = utf8_encode(LBase + s / NCount) + utf8_encode(VBase + (s % NCount) / TCount);
    if (s % TCount) out += utf8_encode(TBase + s % TCount);
    return out;
  }
  const auto it = std::lower_bound(std::begin(kAccents), std::end(kAccents), cp,
                                   [](const Accent& a, char32_t c) { return a.cp < c; });
  if (it != std::end(kAccents) && it->cp == cp) return it->stripped;
  return cp == kInvalidUtf8 ? std::string() : utf8_encode(cp);
}

}  // namespace sf
