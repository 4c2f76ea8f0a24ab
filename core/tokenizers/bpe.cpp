#include "core/tokenizers/bpe.hpp"

#include <algorithm>

#include "core/model/error.hpp"
#include "core/tokenizers/utf8.hpp"

namespace sf {

namespace {
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// The readable form of a piece: space "␣", newline "↵", tab "⇥".
std::string readable(const std::string& piece) {
  std::string out;
  for (char c : piece) out += c == ' ' ? "␣" : c == '\n' ? "↵" : c == '\t' ? "⇥" : std::string(1, c);
  return out;
}
}  // namespace

std::vector<std::string> apply_merges(std::vector<std::string> word, const MergeRanks& ranks) {
  while (word.size() > 1) {
    int best = -1;
    size_t at = 0;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      const auto r = ranks.find(merge_key(word[i], word[i + 1]));
      if (r != ranks.end() && (best < 0 || r->second < best)) best = r->second, at = i;
    }
    if (best < 0) break;
    const std::string first = word[at], second = word[at + 1];
    std::vector<std::string> merged;
    for (size_t i = 0; i < word.size(); ++i) {
      if (i + 1 < word.size() && word[i] == first && word[i + 1] == second) {
        merged.push_back(first + second);
        ++i;
      } else {
        merged.push_back(word[i]);
      }
    }
    word = std::move(merged);
  }
  return word;
}

std::vector<std::string> bpe_words(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    size_t end = i + (text[i] == ' ' && i + 1 < text.size() && !is_space(text[i + 1]) ? 1 : 0);
    if (is_space(text[end])) {  // a whitespace character of its own
      out.push_back(text.substr(i, 1));
      ++i;
      continue;
    }
    while (end < text.size() && !is_space(text[end])) ++end;  // " ?\S+"
    out.push_back(text.substr(i, end - i));
    i = end;
  }
  return out;
}

// ---- training ----

BpeTrainer::BpeTrainer(const std::string& corpus, int target_vocab) : target_(target_vocab) {
  if (corpus.empty()) throw Error("BPE training needs a corpus; the text is empty");
  std::vector<std::string> chars = utf8_split(corpus);
  std::sort(chars.begin(), chars.end());
  chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
  for (const std::string& c : chars) symbol(c);
  std::unordered_map<std::string, int> index;  // distinct word → index into words_
  for (const std::string& w : bpe_words(corpus)) {
    auto [it, fresh] = index.try_emplace(w, static_cast<int>(words_.size()));
    if (fresh) {
      Word word;
      for (const std::string& c : utf8_split(w)) word.symbols.push_back(ids_.at(c));
      words_.push_back(std::move(word));
    }
    ++words_[it->second].count;
    corpus_.push_back(it->second);
  }
  std::vector<Pair> touched;
  for (size_t w = 0; w < words_.size(); ++w) count_pairs(static_cast<int>(w), +1, touched);
  push_counts(touched);
}

int BpeTrainer::symbol(const std::string& piece) {
  auto [it, fresh] = ids_.try_emplace(piece, static_cast<int>(vocab_.size()));
  if (fresh) vocab_.push_back(piece);
  return it->second;
}

void BpeTrainer::count_pairs(int word, int sign, std::vector<Pair>& touched) {
  const Word& w = words_[word];
  for (size_t i = 0; i + 1 < w.symbols.size(); ++i) {
    const Pair p{w.symbols[i], w.symbols[i + 1]};
    const int c = pair_counts_[p] += sign * w.count;
    if (c == 0) pair_counts_.erase(p);
    if (sign > 0) pair_words_[p].push_back(word);
    touched.push_back(p);
  }
}

// Pushes the current count of each touched pair onto the heap (once per pair).
void BpeTrainer::push_counts(std::vector<Pair>& touched) {
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  const auto worse = [this](const HeapEntry& a, const HeapEntry& b) { return better(b.first, b.second, a.first, a.second); };
  for (const Pair& p : touched) {
    const auto it = pair_counts_.find(p);
    if (it == pair_counts_.end()) continue;
    heap_.emplace_back(p, it->second);
    std::push_heap(heap_.begin(), heap_.end(), worse);
  }
  touched.clear();
}

// More frequent first; equal counts: the lexicographically smaller (left, right) first.
bool BpeTrainer::better(const Pair& a, int count_a, const Pair& b, int count_b) const {
  if (count_a != count_b) return count_a > count_b;
  const std::string &al = vocab_[a.first], &bl = vocab_[b.first];
  return al != bl ? al < bl : vocab_[a.second] < vocab_[b.second];
}

bool BpeTrainer::done() const { return static_cast<int>(vocab_.size()) >= target_ || pair_counts_.empty(); }

const BpeMerge& BpeTrainer::step() {
  if (done()) throw Error("BPE training is done: the vocabulary has " + std::to_string(vocab_.size()) + " of " +
                          std::to_string(target_) + " pieces" + (pair_counts_.empty() ? " and no pair is left" : ""));
  const auto worse = [this](const HeapEntry& a, const HeapEntry& b) { return better(b.first, b.second, a.first, a.second); };
  for (;;) {  // drop stale entries: the top is then the best pair with its current count
    const auto it = pair_counts_.find(heap_.front().first);
    if (it != pair_counts_.end() && it->second == heap_.front().second) break;
    std::pop_heap(heap_.begin(), heap_.end(), worse);
    heap_.pop_back();
  }
  const auto [pair, count] = heap_.front();
  std::vector<Pair> touched;
  const int merged = symbol(vocab_[pair.first] + vocab_[pair.second]);
  std::vector<int> candidates = std::move(pair_words_[pair]);
  pair_words_.erase(pair);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  for (int index : candidates) {
    Word& w = words_[index];
    bool has = false;
    for (size_t i = 0; i + 1 < w.symbols.size() && !has; ++i) has = w.symbols[i] == pair.first && w.symbols[i + 1] == pair.second;
    if (!has) continue;
    count_pairs(index, -1, touched);
    std::vector<int> out;
    for (size_t i = 0; i < w.symbols.size(); ++i) {
      if (i + 1 < w.symbols.size() && w.symbols[i] == pair.first && w.symbols[i + 1] == pair.second) {
        out.push_back(merged);
        ++i;
      } else {
        out.push_back(w.symbols[i]);
      }
    }
    w.symbols = std::move(out);
    count_pairs(index, +1, touched);
  }
  push_counts(touched);
  merges_.push_back({vocab_[pair.first], vocab_[pair.second], vocab_[merged], count, static_cast<int>(merges_.size()) + 1});
  return merges_.back();
}

void BpeTrainer::run() {
  while (!done()) step();
}

std::vector<std::vector<std::string>> BpeTrainer::corpus_pieces() const {
  std::vector<std::vector<std::string>> out;
  out.reserve(corpus_.size());
  for (int w : corpus_) {
    std::vector<std::string> pieces;
    for (int s : words_[w].symbols) pieces.push_back(vocab_[s]);
    out.push_back(std::move(pieces));
  }
  return out;
}

std::vector<std::pair<std::pair<std::string, std::string>, int>> BpeTrainer::top_pairs(int k) const {
  std::vector<std::pair<Pair, int>> all(pair_counts_.begin(), pair_counts_.end());
  const size_t n = std::min(all.size(), static_cast<size_t>(std::max(k, 0)));
  std::partial_sort(all.begin(), all.begin() + n, all.end(),
                    [&](const auto& a, const auto& b) { return better(a.first, a.second, b.first, b.second); });
  std::vector<std::pair<std::pair<std::string, std::string>, int>> out;
  for (size_t i = 0; i < n; ++i) out.push_back({{vocab_[all[i].first.first], vocab_[all[i].first.second]}, all[i].second});
  return out;
}

ModelConfig BpeTrainer::config_for(const ModelConfig& base) const {
  ModelConfig c = base;
  c.tokenizer = TokenizerKind::Bpe;
  c.vocab = vocab_;
  c.merges.clear();
  for (const BpeMerge& m : merges_) c.merges.push_back(m.left + " " + m.right);
  c.vocab_size = 0;
  c.bos_id = c.eos_id = c.mask_id = c.pad_id = 0;  // the paper's three special tokens after the pieces
  return c;
}

ModelConfig train_bpe(const std::string& corpus, int target_vocab, const ModelConfig& base) {
  BpeTrainer t(corpus, target_vocab);
  t.run();
  return t.config_for(base);
}

// ---- the trained tokenizer ----

BpeTokenizer::BpeTokenizer(const ModelConfig& c) : VocabTokenizer(c.vocab, "BPE", readable) {
  for (size_t r = 0; r < c.merges.size(); ++r) {
    const std::string& m = c.merges[r];
    const size_t sp = m.rfind(' ');  // only a left piece holds a space (its leading one)
    const std::string where = "BPE merge " + std::to_string(r + 1) + " \"" + readable(m) + "\"";
    if (sp == std::string::npos || sp == 0 || sp + 1 == m.size())
      throw Error(where + " is not \"left right\" (two pieces separated by a space)");
    const std::string left = m.substr(0, sp), right = m.substr(sp + 1);
    for (const std::string& p : {left, right, left + right})
      if (!ids_.count(p)) throw Error(where + " names \"" + readable(p) + "\", which is not in the vocabulary");
    ranks_.emplace(merge_key(left, right), static_cast<int>(r));
  }
}

std::string BpeTokenizer::describe() const {
  return "BPE trained here (" + std::to_string(vocab_.size()) + " pieces, " + std::to_string(ranks_.size()) +
         " merges, + [MASK], [BOS], [EOS])";
}

std::vector<std::string> BpeTokenizer::encode_word(const std::string& word) const {
  const auto hit = cache_.find(word);
  if (hit != cache_.end()) return hit->second;
  return cache_.emplace(word, apply_merges(utf8_split(word), ranks_)).first->second;
}

std::vector<TextPiece> BpeTokenizer::tokenize(const std::string& text) const {
  std::vector<TextPiece> out;
  for (const TextSegment& s : split_specials(text, {{"[MASK]", mask_token()}, {"[BOS]", bos_token()}, {"[EOS]", eos_token()}})) {
    if (s.special) {
      out.push_back({s.text, s.byte, s.special});
      continue;
    }
    size_t at = s.byte;
    for (const std::string& w : bpe_words(s.text))
      for (const std::string& p : encode_word(w)) {
        const auto it = ids_.find(p);
        out.push_back({p, at, it == ids_.end() ? 0 : it->second});
        at += p.size();
      }
  }
  return out;
}

std::string BpeTokenizer::label(int id) const {
  if (ordinary(id)) return readable(vocab_[id - 1]);
  return special_label(id);
}

std::string BpeTokenizer::piece(int id) const {
  if (ordinary(id)) return vocab_[id - 1];
  return special_label(id);
}

std::string BpeTokenizer::decode_text(const Tokens& ids) const {
  std::string s;
  for (int id : ids)
    if (ordinary(id)) s += vocab_[id - 1];
  return s;
}

}  // namespace sf
