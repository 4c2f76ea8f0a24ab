// BERT's WordPiece (Devlin et al. 2019; Hugging Face's BasicTokenizer + WordpieceTokenizer), read
// from vocab.txt: one token per line, file id = line number − 1, paper id = line number. Not in
// the paper: §4 describes subword tokenization in general.
//
// Basic tokenization (uncased models): drop NUL, U+FFFD and control characters, whitespace →
// space; CJK ideographs split off as words; lowercase and strip accents (NFD, combining marks
// dropped — from a decomposition table covering Latin-1 Supplement, Latin Extended-A/B and
// Additional, Greek and Cyrillic: an accented letter outside them keeps its accent); split on
// whitespace and on punctuation (Unicode P* and ASCII's non-alphanumeric symbols). Then each word
// greedily, longest match first, into pieces ("##" marks a continuation); a word with no match,
// or longer than 100 characters, is [UNK]. [PAD] [UNK] [CLS] [SEP] [MASK] written in the text are
// single tokens (never lowercased). A TextPiece's text is the piece as normalised (lowercased,
// accents stripped, without "##"); its byte is where its word starts in the input plus its offset
// in the normalised word (exact unless normalising changed the word's length in bytes).
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tokenizers/tokenizer.hpp"

namespace sf {

class WordPieceTokenizer : public Tokenizer {
 public:
  // pieces: the vocabulary in file-id order; lowercase: the uncased models' lowercasing and
  // accent stripping; source: the files read. Throws sf::Error when pieces is empty or has no [UNK].
  WordPieceTokenizer(std::vector<std::string> pieces, bool lowercase, std::string source);
  TokenizerKind kind() const override { return TokenizerKind::WordPiece; }
  std::string describe() const override;
  int N_V() const override { return static_cast<int>(pieces_.size()); }
  int bos_token() const override { return cls_; }   // [CLS]
  int eos_token() const override { return sep_; }   // [SEP]
  int mask_token() const override { return mask_; } // [MASK] (0 when absent)
  int pad_token() const override { return pad_; }   // [PAD] (0 when absent)
  int unk_token() const { return unk_; }
  bool lowercase() const { return lowercase_; }
  std::vector<TextPiece> tokenize(const std::string& text) const override;
  std::string label(int id) const override { return piece(id); }
  std::string piece(int id) const override;
  int file_id(int id) const override { return id - 1; }
  // The pieces joined by spaces, "##" continuations glued on; special tokens dropped.
  std::string decode_text(const Tokens& ids) const override;

 private:
  void wordpiece(const std::string& word, size_t byte, std::vector<TextPiece>& out) const;
  int id_of(const std::string& p) const;

  std::vector<std::string> pieces_;
  std::unordered_map<std::string, int> ids_;  // piece → paper id
  bool lowercase_;
  std::string source_;
  int unk_ = 0, cls_ = 0, sep_ = 0, mask_ = 0, pad_ = 0;
};

// vocab.txt (one token per line) with do_lower_case from tokenizer_config.json beside it when
// present (else true). Throws sf::Error naming the file when it is missing or empty.
std::unique_ptr<WordPieceTokenizer> load_wordpiece_files(const std::string& vocab_txt);

}  // namespace sf
