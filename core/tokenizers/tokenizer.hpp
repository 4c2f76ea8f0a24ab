// Character-level tokenizer with the paper's special tokens (§4), ids 1-based:
// ordinary characters 1 … N_V−3, mask_token = N_V−2, bos_token = N_V−1, eos_token = N_V.
// In text the special tokens are written [MASK], [BOS] and [EOS]; any other [WORD] of capital
// letters between brackets is an error (other brackets are ordinary characters).
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/config.hpp"
#include "core/model/types.hpp"

namespace sf {

// A character of the input that is not in the vocabulary, or an unknown [WORD].
struct UnknownChar {
  size_t position;   // 1-based character position in the text
  size_t byte;       // byte offset in the text (for marking it in an editor)
  std::string chr;   // the character (UTF-8), or the whole "[WORD]"
};

class CharTokenizer {
 public:
  explicit CharTokenizer(const ModelConfig& c);
  int N_V() const { return static_cast<int>(vocab_.size()) + 3; }
  int mask_token() const { return N_V() - 2; }
  int bos_token() const { return N_V() - 1; }
  int eos_token() const { return N_V(); }

  // Every character not in the vocabulary, and every [WORD] that is not [MASK], [BOS] or [EOS]
  // (empty when the text can be encoded).
  std::vector<UnknownChar> unknown(const std::string& text) const;
  // Encodes the characters and the written special tokens; throws sf::Error naming the first
  // unknown character(s) or [WORD].
  Tokens encode(const std::string& text) const;
  // §4's form of a sequence: [bos_token, characters…], plus eos_token when `with_eos`.
  Tokens encode_sequence(const std::string& text, bool with_eos) const;
  // The label of one id: its character, or <mask>, <bos>, <eos>; "?" outside [1, N_V].
  std::string label(int id) const;
  // Concatenated labels.
  std::string decode(const Tokens& ids) const;
  // Ordinary characters only (special tokens dropped): text a user would read.
  std::string decode_text(const Tokens& ids) const;
  // Parses "3,1,4" (1-based ids); throws sf::Error on anything else or an id outside [1, N_V].
  Tokens parse_ids(const std::string& list) const;

 private:
  // The text cut into pieces: one UTF-8 character each, or a bracketed [WORD] of capitals.
  struct Piece {
    std::string text;
    size_t byte;
    int id;  // 0 when the piece has no id
  };
  std::vector<Piece> pieces(const std::string& text) const;

  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int> ids_;
};

// A printable form of a character for messages (e.g. "é", "U+0009 (tab)").
std::string describe_char(const std::string& chr);

}  // namespace sf
