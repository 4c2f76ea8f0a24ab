// Plain words for a prompt or context the model cannot read: which characters are unknown and
// what the vocabulary is, so a learner who typed a capital letter knows what to type instead.
#pragma once
#include <string>
#include <vector>

#include "core/tokenizers/tokenizer.hpp"

namespace sf {

// A character vocabulary in a few words: runs of three or more consecutive letters or digits
// collapsed ("lowercase a–z", "digits 0–9", "capitals A–Z", "d–h"), the space named, then other
// characters, then the ASCII symbols in one piece, e.g. "lowercase a–z, space, the symbols =". For a tokenizer with no character vocabulary (GPT-2, WordPiece, word
// or BPE pieces) its describe().
std::string vocabulary_summary(const Tokenizer& tok);

// "\"H\" at 1 and \"W\" at 7 are not in the vocabulary (lowercase a–z, =, space)": up to five
// characters are named (1-based piece positions), then how many more.
std::string unknown_input_message(const Tokenizer& tok, const std::vector<UnknownChar>& bad);

}  // namespace sf
