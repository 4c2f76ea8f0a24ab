// The tokenizers of GPT-layout models that come without GPT-2's tokenizer files (docs/ecosystem.md,
// "Models without tokenizer files"):
//  - TokenListTokenizer: the model's own list of tokens (a nanoGPT/minGPT character vocabulary from
//    config.json, vocab.txt or meta.pkl), no special tokens; text is cut greedily into the longest
//    listed pieces.
//  - PlainIdsTokenizer: no list at all; token k is labelled "#k" and text is a list of ids.
// Both number tokens as the rest of Stepformer does: paper id k (1-based, what --tokens takes) is
// the model's own 0-based id k − 1, its row k − 1 of wte. They have no bos, eos or mask token.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tokenizers/tokenizer.hpp"

namespace sf {

// What the two share: N_V tokens, no special tokens, the model's own ids 0-based.
class FileListTokenizer : public Tokenizer {
 public:
  // A GPT layout's tokenizer from beside the checkpoint: the configuration's kind (ModelConfig::
  // file_tokenizer), so that a session keeps it when the model is retrained.
  TokenizerKind kind() const override { return TokenizerKind::Gpt2; }
  int bos_token() const override { return 0; }
  int eos_token() const override { return 0; }
  int mask_token() const override { return 0; }
  int file_id(int id) const override { return id - 1; }
};

class TokenListTokenizer : public FileListTokenizer {
 public:
  // tokens[i] has paper id i + 1; `source` names where they came from, for describe() and errors
  // (e.g. "meta.pkl's itos"). Throws sf::Error when the list is empty, a token is empty or repeats.
  TokenListTokenizer(std::vector<std::string> tokens, std::string source);
  std::string describe() const override;
  int N_V() const override { return static_cast<int>(tokens_.size()); }
  std::vector<TextPiece> tokenize(const std::string& text) const override;
  // The token with whitespace made visible ("␣", "↵", "⇥"); "?" outside [1, N_V].
  std::string label(int id) const override;
  std::string piece(int id) const override;
  std::string decode_text(const Tokens& ids) const override;

 protected:
  std::string unknown_message(const std::vector<UnknownChar>& bad) const override;

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int> ids_;  // token → paper id
  size_t longest_ = 0;                        // bytes of the longest token
  std::string source_;
};

class PlainIdsTokenizer : public FileListTokenizer {
 public:
  explicit PlainIdsTokenizer(int n_v);
  std::string describe() const override;
  int N_V() const override { return n_v_; }
  // Ids separated by spaces or commas, each k or #k (1 ≤ k ≤ N_V); anything else has no id.
  std::vector<TextPiece> tokenize(const std::string& text) const override;
  std::string label(int id) const override;  // "#k"
  std::string piece(int id) const override { return label(id); }
  // The ids as a prompt takes them again: "#5 #12 #7".
  std::string decode_text(const Tokens& ids) const override;

 protected:
  std::string unknown_message(const std::vector<UnknownChar>& bad) const override;

 private:
  int n_v_;
};

// vocab.txt as a token list: one token per line (the last line's newline optional, "\r\n" read as
// "\n"); the escapes \n, \t, \r and \\ stand for a newline, tab, carriage return and backslash, so
// that a character vocabulary can list them. Throws sf::Error naming the file and line for an
// empty line, an unknown escape or a file over max_bytes.
std::vector<std::string> read_token_list(const std::string& path, size_t max_bytes);
// The same, from the file's bytes (`name` for messages).
std::vector<std::string> parse_token_list(const std::string& bytes, const std::string& name);

}  // namespace sf
