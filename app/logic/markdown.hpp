// The Markdown of lesson notes, parsed for the caption box: paragraphs and "- " items made of
// spans that are plain, **bold**, *italic* or `code`. Nothing else is Markdown here (an
// underscore is the paper's subscript: W_q, ℓ_max; the caption draws those with math_text's rules).
#pragma once
#include <string>
#include <vector>

namespace sf {

struct MdSpan {
  std::string text;
  bool bold = false, italic = false, code = false;
  bool operator==(const MdSpan&) const = default;
};

struct MdBlock {
  bool item = false;  // a "- " (or "* ") list item; else a paragraph
  std::vector<MdSpan> spans;
};

// Blank lines separate paragraphs; a line starting with "- " or "* " starts an item; any other
// line continues the block before it (joined by a space). A marker with no closing partner is
// text, as is everything inside `code`.
std::vector<MdBlock> parse_markdown(const std::string& text);

}  // namespace sf
