// GPT-2's byte-level BPE (Radford et al. 2019; openai/gpt-2 src/encoder.py), read from the
// ecosystem's files: vocab.json + merges.txt (Hugging Face), encoder.json + vocab.bpe (OpenAI),
// or tokenizer.json (Hugging Face tokenizers). Not in the paper: §4 describes BPE in general.
//
// Encoding: the special tokens written in the text (<|endoftext|> and tokenizer.json's other
// added tokens) are cut out first; the rest is split by GPT-2's pre-tokenizer regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (PCRE2, UTF + UCP); each piece's UTF-8 bytes become symbols through the byte→unicode map
// (space → "Ġ", newline → "Ċ"); the adjacent pair of lowest merge rank is merged until no pair is
// a merge; the symbols are looked up in the vocabulary. Paper id = file id + 1.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/tokenizers/bpe.hpp"
#include "core/tokenizers/tokenizer.hpp"

namespace sf {

// The byte→unicode map of GPT-2: bytes '!'…'~', '¡'…'¬', '®'…'ÿ' map to themselves, the other
// 68 bytes in order to U+0100, U+0101, … Each entry is the symbol's UTF-8.
const std::vector<std::string>& gpt2_byte_symbols();

class Gpt2Tokenizer : public Tokenizer {
 public:
  // pieces: the vocabulary in file-id order (pieces[i] has file id i); merges: (left, right) in
  // rank order; specials: the added special tokens' pieces (each must be in pieces); source: the
  // files read, for describe(). Throws sf::Error for a merge naming a piece not in pieces.
  Gpt2Tokenizer(std::vector<std::string> pieces, const std::vector<std::pair<std::string, std::string>>& merges,
                const std::vector<std::string>& specials, std::string source);
  ~Gpt2Tokenizer() override;
  TokenizerKind kind() const override { return TokenizerKind::Gpt2; }
  std::string describe() const override;
  int N_V() const override { return static_cast<int>(pieces_.size()); }
  // <|endoftext|> (when the vocabulary has it; else 0).
  int bos_token() const override { return eot_; }
  int eos_token() const override { return eot_; }
  int mask_token() const override { return 0; }
  std::vector<TextPiece> tokenize(const std::string& text) const override;
  // "Ġthe" → "␣the", "Ċ" → "↵", "ĉ" → "⇥"; bytes that are not valid UTF-8 as "<0xE2>" each.
  std::string label(int id) const override;
  std::string piece(int id) const override;
  int file_id(int id) const override { return id - 1; }
  std::string decode_text(const Tokens& ids) const override;
  // The bytes a token stands for ("Ġthe" → " the"); "" for a special token or outside [1, N_V].
  std::string bytes(int id) const;

 private:
  struct Regex;
  std::vector<std::string> bpe(const std::string& symbols) const;
  void encode_chunk(const std::string& text, size_t byte, std::vector<TextPiece>& out) const;

  std::vector<std::string> pieces_;
  std::unordered_map<std::string, int> ids_;     // piece → paper id
  MergeRanks ranks_;
  std::vector<std::pair<std::string, int>> specials_;  // special piece → paper id
  std::unordered_map<std::string, unsigned char> symbol_bytes_;  // byte symbol → byte
  std::string source_;
  int eot_ = 0;
  std::unique_ptr<Regex> regex_;
  mutable std::unordered_map<std::string, std::vector<std::string>> cache_;
};

// vocab.json (or encoder.json): {"piece": file id, …} with ids 0 … n−1 each once; merges.txt (or
// vocab.bpe): an optional "#version" line, then "left right" per line in rank order. Throws
// sf::Error naming the file and the entry or line at fault.
std::unique_ptr<Gpt2Tokenizer> load_gpt2_files(const std::string& vocab_json, const std::string& merges_txt);

}  // namespace sf
