#include "core/tokenizers/word.hpp"

#include <algorithm>

#include "core/model/error.hpp"
#include "core/tokenizers/unicode.hpp"

namespace sf {

std::vector<WordSpan> split_words(const std::string& text) {
  // Runs of letters (with combining marks), runs of digits, single other non-space characters.
  static const UnicodeRegex words(R"([\p{L}\p{M}]+|\p{N}+|[^\s\p{L}\p{M}\p{N}])");
  std::vector<WordSpan> out;
  for (const auto& [at, len] : words.find_all(text)) out.push_back({text.substr(at, len), at});
  return out;
}

std::vector<std::string> build_word_vocab(const std::string& text, int max_words) {
  if (max_words == 1) throw Error("a word vocabulary of 1 entry holds only [UNK]; give at least 2");
  std::unordered_map<std::string, std::pair<int, size_t>> seen;  // word → (count, first occurrence)
  std::vector<std::string> order;
  for (const WordSpan& w : split_words(text)) {
    auto [it, fresh] = seen.try_emplace(w.word, 0, order.size());
    if (fresh) order.push_back(w.word);
    ++it->second.first;
  }
  if (order.empty()) throw Error("the corpus has no words to build a word vocabulary from");
  std::stable_sort(order.begin(), order.end(),
                   [&](const std::string& a, const std::string& b) { return seen[a].first > seen[b].first; });
  std::vector<std::string> vocab{kUnknownWord};
  for (const std::string& w : order) {
    if (max_words > 0 && static_cast<int>(vocab.size()) >= max_words) break;
    if (w != kUnknownWord) vocab.push_back(w);
  }
  return vocab;
}

WordTokenizer::WordTokenizer(const ModelConfig& c) : VocabTokenizer(c.vocab, "word") {
  if (vocab_.empty() || vocab_[0] != kUnknownWord)
    throw Error(std::string("a word vocabulary must start with \"") + kUnknownWord + "\" (id 1, for unknown words)" +
                (vocab_.empty() ? "; it is empty" : "; it starts with \"" + vocab_[0] + "\""));
}

std::string WordTokenizer::describe() const {
  return "word-level (" + std::to_string(vocab_.size()) + " words incl. [UNK], + [MASK], [BOS], [EOS])";
}

std::vector<TextPiece> WordTokenizer::tokenize(const std::string& text) const {
  std::vector<TextPiece> out;
  for (const TextSegment& s : split_specials(text, {{"[MASK]", mask_token()}, {"[BOS]", bos_token()}, {"[EOS]", eos_token()}})) {
    if (s.special) {
      out.push_back({s.text, s.byte, s.special});
      continue;
    }
    for (const WordSpan& w : split_words(s.text)) {
      const auto it = ids_.find(w.word);
      out.push_back({w.word, s.byte + w.byte, it == ids_.end() ? 1 : it->second});  // 1: [UNK]
    }
  }
  return out;
}

std::string WordTokenizer::label(int id) const {
  if (ordinary(id)) return vocab_[id - 1];
  return special_label(id);
}

std::string WordTokenizer::decode_text(const Tokens& ids) const {
  std::string s;
  for (int id : ids)
    if (ordinary(id)) s += (s.empty() ? "" : " ") + vocab_[id - 1];
  return s;
}

}  // namespace sf
