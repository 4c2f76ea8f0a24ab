// Tokenizers (paper §4): one interface for every panel and command (docs/tokenizers.md).
//
// Token ids are the paper's: 1-based, 1 … N_V. The paper's own vocabularies (character, word,
// BPE trained here) number their ordinary tokens 1 … N_V−3 and put mask_token = N_V−2,
// bos_token = N_V−1, eos_token = N_V after them. The ecosystem's tokenizers (GPT-2's byte-level
// BPE, BERT's WordPiece) number tokens from 0 in their files: paper id = file id + 1, and their
// special tokens are the model's own (<|endoftext|>, [CLS], [SEP], [MASK]).
//
// In text, the special tokens of the paper's vocabularies (character, word, BPE) are written
// [MASK], [BOS] and [EOS]; an ecosystem tokenizer recognises only its own spellings
// (<|endoftext|>; [CLS], [SEP], [MASK], [PAD], [UNK]), so that text tokenizes exactly as the
// ecosystem's own tokenizer does.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/model/config.hpp"
#include "core/model/types.hpp"

namespace sf {

// A piece of the input that has no id: a character not in the vocabulary, or an unknown [WORD].
struct UnknownChar {
  size_t position;   // 1-based piece position in the text
  size_t byte;       // byte offset in the text (for marking it in an editor)
  std::string chr;   // the piece (UTF-8), or the whole "[WORD]"
};

// One piece of tokenized text: its id and where it came from.
struct TextPiece {
  std::string text;  // the input bytes this piece covers
  size_t byte = 0;   // byte offset of text in the input
  int id = 0;        // 1-based paper id; 0 when the piece has no id (unknown)
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual TokenizerKind kind() const = 0;
  // For people: e.g. "GPT-2 byte-level BPE from vocab.json + merges.txt (50257 tokens)".
  virtual std::string describe() const = 0;
  virtual int N_V() const = 0;
  virtual int bos_token() const = 0;
  virtual int eos_token() const = 0;
  virtual int mask_token() const = 0;  // 0 when the model has no mask token (GPT-2)
  virtual int pad_token() const { return 0; }  // the model's own padding token ([PAD]); 0: none

  // Cuts text into pieces with their ids (special tokens written in the text recognised);
  // pieces with id 0 have no id. Never throws on any input bytes.
  virtual std::vector<TextPiece> tokenize(const std::string& text) const = 0;
  // The pieces with no id (empty when the text can be encoded).
  std::vector<UnknownChar> unknown(const std::string& text) const;
  // Encodes; throws sf::Error naming the first unknown piece(s).
  Tokens encode(const std::string& text) const;
  // §4's form of a sequence: [bos_token, pieces…], plus eos_token when `with_eos` (a tokenizer
  // without them, bos_token() = 0, adds nothing: the model's own token lists, plain ids).
  Tokens encode_sequence(const std::string& text, bool with_eos) const;

  // The readable label of one id for panels: its piece with byte-level markers made readable
  // (GPT-2's Ġ shown as "␣", Ċ as "↵"), or <mask>, <bos>, <eos>, [CLS] …; "?" outside [1, N_V].
  virtual std::string label(int id) const = 0;
  // The piece exactly as the tokenizer's files write it (e.g. "Ġthe", "##ing"); "" outside.
  virtual std::string piece(int id) const = 0;
  // The id as the tokenizer's own files number it (0-based for the ecosystem's files).
  virtual int file_id(int id) const { return id; }
  // Concatenated labels.
  std::string decode(const Tokens& ids) const;
  // The text a user would read (special tokens dropped; GPT-2's bytes decoded back to UTF-8).
  virtual std::string decode_text(const Tokens& ids) const = 0;
  // Parses "3,1,4" (1-based paper ids); throws sf::Error on anything else or an id outside [1, N_V].
  Tokens parse_ids(const std::string& list) const;

 protected:
  // The message for unknown pieces (encode's error); the character tokenizer lists its vocabulary.
  virtual std::string unknown_message(const std::vector<UnknownChar>& bad) const;
  // "<mask>", "<bos>" or "<eos>" for the special tokens, else "?" (labels of the paper's vocabularies).
  std::string special_label(int id) const;
};

// The paper's own vocabularies (character, word, BPE trained here): the ordinary tokens
// 1 … |vocab| as the configuration lists them, then mask_token, bos_token and eos_token (§4).
class VocabTokenizer : public Tokenizer {
 public:
  int N_V() const override { return static_cast<int>(vocab_.size()) + 3; }
  int mask_token() const override { return N_V() - 2; }
  int bos_token() const override { return N_V() - 1; }
  int eos_token() const override { return N_V(); }

 protected:
  // Indexes `vocab`; throws sf::Error when an entry repeats, e.g. "the word vocabulary has "x"
  // twice (entries 3 and 9)" (`what` names the vocabulary, `show` writes an entry for people).
  VocabTokenizer(std::vector<std::string> vocab, const std::string& what,
                 std::string (*show)(const std::string&) = nullptr);
  // True when id names an ordinary token (1 … |vocab|).
  bool ordinary(int id) const { return id >= 1 && id <= static_cast<int>(vocab_.size()); }
  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int> ids_;
};

// Character-level (§4, today's default): one Unicode character per token.
class CharTokenizer : public VocabTokenizer {
 public:
  explicit CharTokenizer(const ModelConfig& c);
  TokenizerKind kind() const override { return TokenizerKind::Char; }
  std::string describe() const override;
  std::vector<TextPiece> tokenize(const std::string& text) const override;
  std::string label(int id) const override;
  std::string piece(int id) const override { return label(id); }
  std::string decode_text(const Tokens& ids) const override;

 protected:
  std::string unknown_message(const std::vector<UnknownChar>& bad) const override;
};

// Text cut at the special tokens written in it, in order: ordinary text (special = 0) and
// special tokens (special = the token's id). Longest spelling first where two start together.
struct TextSegment {
  std::string text;
  size_t byte = 0;
  int special = 0;
};
std::vector<TextSegment> split_specials(const std::string& text, const std::vector<std::pair<std::string, int>>& specials);

// The tokenizer of a model: made from the configuration (char, word, bpe), or read from the
// tokenizer files in `dir` (gpt2: vocab.json + merges.txt, encoder.json + vocab.bpe or
// tokenizer.json; wordpiece: vocab.txt). Throws sf::Error naming a missing or mismatched file.
std::unique_ptr<Tokenizer> make_tokenizer(const ModelConfig& c, const std::string& dir = "");

// The ecosystem's tokenizer files at `path`, without a configuration: a folder (looked for, in
// this order: vocab.json + merges.txt, encoder.json + vocab.bpe, vocab.txt, tokenizer.json), or
// one of those files (its partner beside it). Returns nullptr when a folder holds none of them;
// throws sf::Error naming the file for a malformed one, or a file without its partner.
std::unique_ptr<Tokenizer> load_tokenizer_files(const std::string& path);
// The file names load_tokenizer_files looks for, for messages: "vocab.json + merges.txt, …".
std::string tokenizer_file_names();

// A printable form of a character for messages (e.g. "é", "U+0009 (tab)").
std::string describe_char(const std::string& chr);

}  // namespace sf
