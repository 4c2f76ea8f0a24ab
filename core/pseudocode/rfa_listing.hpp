// Algorithm 4-R (random-feature attention, NOT IN THE PAPER): its listing, its plain-words
// explanations and its entries in the three notations, which flash_listing.cpp (extra_pseudocode),
// explanations.cpp and notations.cpp add to the paper's.
#pragma once
#include <vector>

#include "core/pseudocode/notations.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace sf {
// The listing, in the paper's style (lines as core/algorithms/alg04r_random_feature_attention.cpp).
PseudoAlgorithm rfa_pseudocode();
// The tooltip of line `line` of Algorithm 4-R, or nullptr for a line without one.
const char* explain_rfa_line(int line);
// One entry per numbered line of Algorithm 4-R: Carpenter's and DYZ's text, or why there is none.
std::vector<NotationEntry> rfa_notation_entries();
}  // namespace sf
