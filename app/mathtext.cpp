#include "app/mathtext.hpp"

#include "app/app.hpp"

namespace sf {

namespace {

bool is_word_char(unsigned char c) { return std::isalnum(c) || c >= 0x80; }

// A multi-letter ASCII word before '_' (layer_norm, eos_token) keeps the underscore.
bool literal_underscore(const std::string& s, size_t i) {
  size_t start = i;
  while (start > 0 && std::isalpha(static_cast<unsigned char>(s[start - 1]))) --start;
  return i - start >= 3;
}

// The UTF-8 length of the character starting at s[i].
size_t char_len(const std::string& s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  return c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
}

// Reads the argument of _ or ^ at s[i]: {…} or a run of word characters (letters, digits, Greek).
std::string read_arg(const std::string& s, size_t& i) {
  if (i < s.size() && s[i] == '{') {
    int depth = 0;
    const size_t start = i + 1;
    for (; i < s.size(); ++i) {
      if (s[i] == '{') ++depth;
      if (s[i] == '}' && --depth == 0) break;
    }
    std::string arg = s.substr(start, i - start);
    if (i < s.size()) ++i;
    return arg;
  }
  const size_t start = i;
  while (i < s.size() && is_word_char(static_cast<unsigned char>(s[i]))) {
    if (static_cast<unsigned char>(s[i]) >= 0x80) {
      // Only letters of Greek/ℓ continue a subscript; symbols such as × or ∈ end it.
      const std::string ch = s.substr(i, char_len(s, i));
      static const char* stops[] = {"×", "∈", "←", "ᵀ", "⊙", "≤", "…", "·", "−", "√", "Σ", "∀", "→", "⟦", "⟧"};
      bool stop = false;
      for (const char* st : stops) stop |= ch == st;
      if (stop) break;
      i += ch.size();
    } else {
      ++i;
    }
  }
  return s.substr(start, i - start);
}

// "e" → "ₑ", "max" → "ₘₐₓ"; text with a letter that has no subscript form keeps "_".
std::string unicode_subscript(const std::string& t) {
  static const char* digits[] = {"₀", "₁", "₂", "₃", "₄", "₅", "₆", "₇", "₈", "₉"};
  static const std::string letters = "aehijklmnoprstuvx";
  static const char* forms[] = {"ₐ", "ₑ", "ₕ", "ᵢ", "ⱼ", "ₖ", "ₗ", "ₘ", "ₙ", "ₒ", "ₚ", "ᵣ", "ₛ", "ₜ", "ᵤ", "ᵥ", "ₓ"};
  std::string out;
  for (char c : t) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      out += digits[c - '0'];
      continue;
    }
    const size_t k = letters.find(c);
    if (k == std::string::npos) return "_" + t;
    out += forms[k];
  }
  return out;
}

}  // namespace

std::vector<MathRun> parse_math(const std::string& s) {
  std::vector<MathRun> runs;
  auto emit = [&](const std::string& t, int level) {
    if (t.empty()) return;
    if (!runs.empty() && runs.back().level == level) runs.back().text += t;
    else runs.push_back({t, level});
  };
  std::string cur;
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    const bool marker = (c == '_' || c == '^') && i > 0 && i + 1 < s.size() && s[i + 1] != ' ' &&
                        !(c == '_' && literal_underscore(s, i));
    if (!marker) {
      cur += c;
      ++i;
      continue;
    }
    emit(cur, 0);
    cur.clear();
    ++i;
    const std::string arg = read_arg(s, i);
    // A script inside a script (ℝ^{d_e}) uses Unicode subscript letters where they exist.
    std::string flat;
    for (const auto& r : parse_math(arg)) flat += r.level < 0 ? unicode_subscript(r.text) : r.text;
    emit(flat, c == '^' ? 1 : -1);
  }
  emit(cur, 0);
  return runs;
}

ImVec2 math_text_size(const Fonts& f, const std::string& s) {
  float w = 0, h = f.text->FontSize;
  for (const auto& r : parse_math(s)) {
    ImFont* font = r.level == 0 ? f.text : f.small;
    w += font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.0f, r.text.c_str()).x;
  }
  return ImVec2(w, h);
}

float draw_math(const Fonts& f, ImVec2 pos, const std::string& s, ImU32 color) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float x = pos.x;
  const float px = f.text->FontSize;
  for (const auto& r : parse_math(s)) {
    ImFont* font = r.level == 0 ? f.text : f.small;
    const float dy = r.level > 0 ? -0.12f * px : r.level < 0 ? 0.42f * px : 0.0f;
    dl->AddText(font, font->FontSize, ImVec2(x, pos.y + dy), color, r.text.c_str());
    x += font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.0f, r.text.c_str()).x;
  }
  return x - pos.x;
}

void math_text(const Fonts& f, const std::string& s, ImU32 color) {
  const ImVec2 size = math_text_size(f, s);
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  draw_math(f, pos, s, color ? color : ImGui::GetColorU32(ImGuiCol_Text));
  ImGui::Dummy(size);
}

}  // namespace sf
