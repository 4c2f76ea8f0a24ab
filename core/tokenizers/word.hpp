// Word-level tokenization (paper §4): one token per word of a vocabulary built from a corpus.
//
// Words: runs of letters (with their combining marks), runs of digits, and single punctuation or
// symbol characters; whitespace separates words and is not kept. A word outside the vocabulary
// is [UNK] (id 1), so every text can be encoded. decode_text joins the words with single spaces
// (the original spacing is not kept).
//
// Stored in ModelConfig: tokenizer = Word, vocab = the words ("[UNK]" first), ids 1 … |vocab|,
// then [MASK], [BOS], [EOS].
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/config.hpp"
#include "core/tokenizers/tokenizer.hpp"

namespace sf {

constexpr const char* kUnknownWord = "[UNK]";

// The words of text with their byte offsets, in order.
struct WordSpan {
  std::string word;
  size_t byte = 0;
};
std::vector<WordSpan> split_words(const std::string& text);

// "[UNK]", then the corpus's words, most frequent first (ties: first occurrence first), at most
// max_words entries in all (0: no limit). Throws sf::Error when max_words is 1 (room for [UNK]
// only) or the corpus has no words.
std::vector<std::string> build_word_vocab(const std::string& text, int max_words);

class WordTokenizer : public VocabTokenizer {
 public:
  // Throws sf::Error when the vocabulary does not start with "[UNK]" or repeats a word.
  explicit WordTokenizer(const ModelConfig& c);
  TokenizerKind kind() const override { return TokenizerKind::Word; }
  std::string describe() const override;
  std::vector<TextPiece> tokenize(const std::string& text) const override;
  std::string label(int id) const override;
  std::string piece(int id) const override { return label(id); }
  std::string decode_text(const Tokens& ids) const override;
};

}  // namespace sf
