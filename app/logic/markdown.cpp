#include "app/logic/markdown.hpp"

namespace sf {

namespace {

// Appends `text` in the given style, merged with the last span when the style is the same.
void emit(std::vector<MdSpan>& out, const std::string& text, bool bold, bool italic, bool code) {
  if (text.empty()) return;
  if (!out.empty() && out.back().bold == bold && out.back().italic == italic && out.back().code == code)
    out.back().text += text;
  else
    out.push_back({text, bold, italic, code});
}

// The inline spans of one block's text.
std::vector<MdSpan> parse_inline(const std::string& s) {
  std::vector<MdSpan> out;
  bool bold = false, italic = false;
  std::string cur;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '`') {
      const size_t close = s.find('`', i + 1);
      if (close != std::string::npos) {
        emit(out, cur, bold, italic, false);
        cur.clear();
        emit(out, s.substr(i + 1, close - i - 1), bold, italic, true);
        i = close + 1;
        continue;
      }
    }
    const bool two = s.compare(i, 2, "**") == 0;
    if (two || s[i] == '*') {
      const std::string marker = two ? "**" : "*";
      bool& on = two ? bold : italic;
      // Opens only if it closes later in the block and is not followed by a space (a "*" between
      // spaces is a multiplication sign).
      const bool opens = !on && i + marker.size() < s.size() && s[i + marker.size()] != ' ' &&
                         s.find(marker, i + marker.size()) != std::string::npos;
      if (on || opens) {
        emit(out, cur, bold, italic, false);
        cur.clear();
        on = !on;
        i += marker.size();
        continue;
      }
    }
    cur += s[i++];
  }
  emit(out, cur, bold, italic, false);
  return out;
}

}  // namespace

std::vector<MdBlock> parse_markdown(const std::string& text) {
  std::vector<MdBlock> blocks;
  std::vector<std::string> raw;  // each block's text, joined
  std::vector<bool> items;
  bool open = false;  // the last block takes continuation lines
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    size_t lead = line.find_first_not_of(' ');
    if (lead == std::string::npos) {
      open = false;
      continue;
    }
    line = line.substr(lead);
    const bool item = line.size() >= 2 && (line[0] == '-' || line[0] == '*') && line[1] == ' ';
    if (item || !open) {
      raw.push_back(item ? line.substr(2) : line);
      items.push_back(item);
      open = true;
    } else {
      raw.back() += " " + line;
    }
  }
  for (size_t k = 0; k < raw.size(); ++k) blocks.push_back({items[k], parse_inline(raw[k])});
  return blocks;
}

}  // namespace sf
