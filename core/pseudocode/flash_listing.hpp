// Algorithm 4-F (FlashAttention, NOT IN THE PAPER): its plain-words explanations and its entries in
// the three notations, which explanations.cpp and notations.cpp add to the paper's. The listing
// itself is extra_pseudocode() (pseudocode.hpp).
#pragma once
#include <vector>

#include "core/pseudocode/notations.hpp"

namespace sf {
// The tooltip of line `line` of Algorithm 4-F, or nullptr for a line without one.
const char* explain_flash_line(int line);
// One entry per numbered line of Algorithm 4-F: Carpenter's and DYZ's text, or why there is none.
std::vector<NotationEntry> flash_notation_entries();
}  // namespace sf
