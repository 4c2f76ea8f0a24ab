// BPE trained on the user's text (paper §4; Sennrich, Haddow & Birch 2016), and the tokenizer it
// gives. Not GPT-2's byte-level BPE (that one is read from files: gpt2_bpe.hpp).
//
// Words: the text is cut into "words" that merges never cross: a word is an optional single
// leading space followed by a run of non-whitespace characters (" ?\S+"), and every other
// whitespace character (a second space, a newline, a tab) is a word of its own. The leading space
// belongs to its word, as in GPT-2 ("␣the" is one piece), so decode_text(encode(s)) == s exactly.
// Whitespace here is ASCII's: space, \t, \n, \v, \f, \r.
//
// Base vocabulary: the corpus's characters, sorted by their UTF-8 bytes. Then each merge joins
// the most frequent adjacent pair of pieces within words (counted over the corpus, a word counted
// once per occurrence); ties go to the lexicographically smallest (left, right). Training stops
// when the vocabulary reaches the target size or no adjacent pair is left.
//
// Stored in ModelConfig: tokenizer = Bpe, vocab = the pieces in id order (ids 1 … |vocab|, then
// [MASK], [BOS], [EOS]), merges = "left right" in rank order. Only a left piece can hold a space
// (its leading one), so a merge line splits at its LAST space.
#pragma once
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/model/config.hpp"
#include "core/tokenizers/tokenizer.hpp"

namespace sf {

// One merge: left + right → merged, made when the pair occurred `count` times; rank 1 is the
// first merge (applied first when encoding).
struct BpeMerge {
  std::string left, right, merged;
  int count = 0;
  int rank = 0;
};

// Merge ranks, keyed by merge_key(left, right); rank 0 is the first merge.
using MergeRanks = std::unordered_map<std::string, int>;
inline std::string merge_key(const std::string& left, const std::string& right) { return left + '\x01' + right; }
// GPT-2's bpe() (openai/gpt-2 encoder.py), shared by both BPE tokenizers: repeatedly the adjacent
// pair of lowest rank is merged, every occurrence left to right, until no adjacent pair is a merge.
std::vector<std::string> apply_merges(std::vector<std::string> symbols, const MergeRanks& ranks);

// The corpus cut into BPE's words (" ?\S+" or one whitespace character), in order.
std::vector<std::string> bpe_words(const std::string& text);

// BPE training, one merge per step (the app steps through it).
class BpeTrainer {
 public:
  // target_vocab: the number of pieces to reach (the base characters count; the three special
  // tokens do not). Throws sf::Error when the corpus is empty.
  BpeTrainer(const std::string& corpus, int target_vocab);

  // True when the vocabulary has target_vocab pieces or no adjacent pair is left.
  bool done() const;
  // Makes one merge (the most frequent pair) and returns it. Throws sf::Error when done().
  const BpeMerge& step();
  // Steps until done().
  void run();

  int target_vocab() const { return target_; }
  // The pieces so far: the base characters (sorted), then each new merged piece.
  const std::vector<std::string>& vocab() const { return vocab_; }
  // The merges so far, in rank order.
  const std::vector<BpeMerge>& merges() const { return merges_; }
  // The corpus as it is tokenized now: each word (in corpus order) as its pieces.
  std::vector<std::vector<std::string>> corpus_pieces() const;
  // The k most frequent adjacent pairs now (ties as step() breaks them), with their counts.
  std::vector<std::pair<std::pair<std::string, std::string>, int>> top_pairs(int k) const;
  // `base` with tokenizer = Bpe, vocab = vocab(), merges = merges() as "left right".
  ModelConfig config_for(const ModelConfig& base) const;

 private:
  using Pair = std::pair<int, int>;  // symbol ids (indices into vocab_)
  struct PairHash {
    size_t operator()(const Pair& p) const { return std::hash<long long>()((static_cast<long long>(p.first) << 32) ^ p.second); }
  };
  struct Word {
    std::vector<int> symbols;  // indices into vocab_
    int count = 0;             // occurrences in the corpus
  };
  void count_pairs(int word, int sign, std::vector<Pair>& touched);
  void push_counts(std::vector<Pair>& touched);
  bool better(const Pair& a, int count_a, const Pair& b, int count_b) const;
  int symbol(const std::string& piece);

  int target_;
  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int> ids_;
  std::vector<BpeMerge> merges_;
  std::vector<Word> words_;          // distinct words
  std::vector<int> corpus_;          // the corpus as indices into words_
  std::unordered_map<Pair, int, PairHash> pair_counts_;
  // Max-heap of (pair, count) by better(); an entry whose count is no longer the pair's is stale
  // and dropped when it reaches the top (a lazy priority queue: no scan of every pair per merge).
  using HeapEntry = std::pair<Pair, int>;
  std::vector<HeapEntry> heap_;
  // The words each pair was seen in (some may no longer hold it): a merge visits only these.
  std::unordered_map<Pair, std::vector<int>, PairHash> pair_words_;
};

// Trains to completion: BpeTrainer(corpus, target_vocab).run(), as a configuration.
ModelConfig train_bpe(const std::string& corpus, int target_vocab, const ModelConfig& base);

// The tokenizer of a trained BPE (tokenizer = Bpe): encodes like GPT-2's bpe(): each word's
// characters, then repeatedly the adjacent pair of lowest rank merged, until none is a merge.
// [MASK], [BOS] and [EOS] written in the text are the special tokens; a character outside the
// base vocabulary has no id (unknown()).
class BpeTokenizer : public VocabTokenizer {
 public:
  // Throws sf::Error for a merge line without a space or naming a piece not in the vocabulary.
  explicit BpeTokenizer(const ModelConfig& c);
  TokenizerKind kind() const override { return TokenizerKind::Bpe; }
  std::string describe() const override;
  std::vector<TextPiece> tokenize(const std::string& text) const override;
  // The piece with its space shown as "␣" (newline "↵", tab "⇥"); <mask>, <bos>, <eos>.
  std::string label(int id) const override;
  std::string piece(int id) const override;
  std::string decode_text(const Tokens& ids) const override;
  // The pieces of one word (no special tokens), by merge rank.
  std::vector<std::string> encode_word(const std::string& word) const;

 private:
  MergeRanks ranks_;
  mutable std::unordered_map<std::string, std::vector<std::string>> cache_;
};

}  // namespace sf
