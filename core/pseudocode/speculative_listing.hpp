// Algorithm 14-S (speculative decoding, NOT IN THE PAPER): its listing, its plain-words
// explanations and its entries in the three notations, which extra_pseudocode(), explanations.cpp
// and notations.cpp add to the paper's.
#pragma once
#include <vector>

#include "core/pseudocode/notations.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace sf {
// The listing of Algorithm 14-S, numbered as lines::speculative_decoding (vocabulary.hpp).
PseudoAlgorithm speculative_pseudocode();
// The tooltip of line `line` of Algorithm 14-S, or nullptr for a line without one.
const char* explain_speculative_line(int line);
// One entry per numbered line of Algorithm 14-S: Carpenter's and DYZ's text, or why there is none.
std::vector<NotationEntry> speculative_notation_entries();
}  // namespace sf
