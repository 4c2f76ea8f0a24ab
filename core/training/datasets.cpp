#include "core/training/datasets.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>
#include <unordered_set>

#include "core/model/error.hpp"
#include "core/io/fileio.hpp"
#include "core/model/rng.hpp"
#include "core/tokenizers/tokenizer.hpp"
#include "core/tokenizers/utf8.hpp"

namespace sf {

namespace {

constexpr size_t kMaxTextBytes = size_t{256} << 20;  // 256 MiB
constexpr double kValFraction = 0.1;

std::string random_letters(Rng& rng, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>('a' + rng.below(26)));
  return s;
}

int uniform_int(Rng& rng, int lo, int hi) {
  return lo + static_cast<int>(rng.below(static_cast<uint64_t>(hi - lo + 1)));
}

// Fisher–Yates with the project's generator (std::shuffle's algorithm is implementation-defined).
template <class V>
void shuffle(V& v, Rng& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

// train_size examples, then val_size more that are not in train (a generator whose space is
// too small to give them stops trying after a bounded number of draws).
void generate(Dataset& d, const TaskOptions& opt, const std::function<std::string(Rng&)>& make) {
  Rng rng(opt.seed);
  d.train.reserve(opt.train_size);
  std::unordered_set<std::string> seen;
  for (int i = 0; i < opt.train_size; ++i) {
    d.train.push_back(make(rng));
    seen.insert(d.train.back());
  }
  for (long tries = 0; static_cast<int>(d.val.size()) < opt.val_size && tries < 100L * (opt.val_size + 1); ++tries) {
    std::string s = make(rng);
    if (!seen.count(s)) {
      seen.insert(s);
      d.val.push_back(std::move(s));
    }
  }
}

void require_room(const std::string& task, int needed, const TaskOptions& opt) {
  if (opt.max_chars < needed)
    throw Error("the " + task + " task has sequences of up to " + std::to_string(needed) +
                " characters, which need ℓ_max ≥ " + std::to_string(needed + 2) + " (with bos_token and eos_token); " +
                "this model's ℓ_max is " + std::to_string(opt.max_chars + 2));
}

std::vector<std::string> letters(const std::string& extra) {
  std::vector<std::string> v;
  for (char c = 'a'; c <= 'z'; ++c) v.emplace_back(1, c);
  for (char c : extra) v.emplace_back(1, c);
  return v;
}

// The distinct characters of the texts, in code-point order.
std::vector<std::string> vocabulary_of(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::set<std::string> chars;
  for (const auto* texts : {&a, &b})
    for (const auto& t : *texts)
      for (auto& ch : utf8_split(t)) chars.insert(std::move(ch));
  return {chars.begin(), chars.end()};  // UTF-8 byte order is code-point order
}

// The file's lines, without "\r\n" or "\n"; throws naming the first byte that is not UTF-8.
std::vector<std::string> utf8_lines(const std::string& path) {
  const std::string text = read_file(path, kMaxTextBytes);
  std::vector<std::string> lines;
  std::istringstream in(text);
  size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    for (const auto& ch : utf8_split(line))
      if (ch.size() == 1 && static_cast<unsigned char>(ch[0]) >= 0x80)
        throw Error(path + ": line " + std::to_string(number) + " is not valid UTF-8 (" + describe_char(ch) + ")");
    lines.push_back(std::move(line));
  }
  return lines;
}

void split_train_val(Dataset& d, std::vector<std::string> all, uint64_t seed) {
  Rng rng(seed);
  shuffle(all, rng);
  const size_t n_val = all.size() < 2 ? 0 : std::max<size_t>(1, static_cast<size_t>(all.size() * kValFraction));
  d.val.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n_val));
  d.train.assign(all.begin() + static_cast<std::ptrdiff_t>(n_val), all.end());
}

}  // namespace

std::vector<std::string> Dataset::preview(size_t n) const {
  return {train.begin(), train.begin() + static_cast<std::ptrdiff_t>(std::min(n, train.size()))};
}

const std::vector<std::string>& task_names() {
  static const std::vector<std::string> names{"sort", "reverse", "copy", "add", "words"};
  return names;
}

Dataset make_task(const std::string& name, const TaskOptions& opt) {
  if (opt.train_size < 1 || opt.val_size < 0) throw Error("a task needs at least one training sequence");
  Dataset d;
  d.name = name + ", seed " + std::to_string(opt.seed);
  if (name == "sort" || name == "reverse") {
    require_room(name, 2 * 8 + 1, opt);
    const bool sort = name == "sort";
    d.description = sort ? "3–8 random letters, \"=\", the same letters sorted (\"dcab=abcd\")"
                         : "3–8 random letters, \"=\", the same letters reversed (\"abcd=dcba\")";
    d.vocab = letters("=");
    generate(d, opt, [sort](Rng& rng) {
      const std::string in = random_letters(rng, uniform_int(rng, 3, 8));
      std::string out = in;
      if (sort)
        std::sort(out.begin(), out.end());
      else
        std::reverse(out.begin(), out.end());
      return in + "=" + out;
    });
  } else if (name == "copy") {
    require_room(name, 24, opt);
    d.description = "a random 2–5 letter pattern repeated to 12–24 letters (\"xkqxkqxkqxkq\")";
    d.vocab = letters("");
    generate(d, opt, [](Rng& rng) {
      const std::string pattern = random_letters(rng, uniform_int(rng, 2, 5));
      const int n = uniform_int(rng, 12, 24);
      std::string s;
      while (static_cast<int>(s.size()) < n) s += pattern;
      return s.substr(0, n);
    });
  } else if (name == "add") {
    require_room(name, 3 + 1 + 3 + 1 + 4, opt);
    d.description = "two numbers of 1–3 digits, their sum (\"12+345=357\")";
    for (char c = '0'; c <= '9'; ++c) d.vocab.emplace_back(1, c);
    d.vocab.emplace_back("+");
    d.vocab.emplace_back("=");
    generate(d, opt, [](Rng& rng) {
      auto number = [&] {
        const int digits = uniform_int(rng, 1, 3);
        return uniform_int(rng, digits == 1 ? 0 : digits == 2 ? 10 : 100, digits == 1 ? 9 : digits == 2 ? 99 : 999);
      };
      const int a = number(), b = number();
      return std::to_string(a) + "+" + std::to_string(b) + "=" + std::to_string(a + b);
    });
  } else if (name == "words") {
    return word_dataset(kDictWords, opt);
  } else {
    std::string known;
    for (const auto& n : task_names()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown task \"" + name + "\"; the tasks are " + known);
  }
  return d;
}

Dataset word_dataset(const std::string& path, const TaskOptions& opt) {
  std::vector<std::string> lines;
  try {
    lines = utf8_lines(path);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + (path == kDictWords
                                             ? " (the words task reads the word list of the Debian package wamerican: "
                                               "apt-get install wamerican)"
                                             : ""));
  }
  std::vector<std::string> words;
  for (auto& w : lines)
    if (!w.empty() && static_cast<int>(w.size()) <= opt.max_chars &&
        std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
      words.push_back(std::move(w));
  if (words.empty())
    throw Error(path + " holds no lowercase a–z words of at most " + std::to_string(opt.max_chars) + " letters");
  Dataset d;
  d.name = "words, seed " + std::to_string(opt.seed);
  d.description = "one lowercase a–z word of " + path;
  d.vocab = letters("");
  split_train_val(d, std::move(words), opt.seed);
  return d;
}

Dataset text_dataset(const std::string& path, const TaskOptions& opt) {
  if (opt.max_chars < 1) throw Error("ℓ_max is too small for any text (it must leave room for bos and eos)");
  std::vector<std::string> pieces;
  for (const auto& line : utf8_lines(path)) {
    const auto chars = utf8_split(line);
    for (size_t i = 0; i < chars.size(); i += static_cast<size_t>(opt.max_chars)) {
      std::string piece;
      for (size_t k = i; k < std::min(chars.size(), i + opt.max_chars); ++k) piece += chars[k];
      pieces.push_back(std::move(piece));
    }
  }
  if (pieces.empty()) throw Error(path + " has no text (every line is empty)");
  Dataset d;
  d.name = "text " + path + ", seed " + std::to_string(opt.seed);
  d.description =
      "a line of " + path + " (long lines cut into pieces of " + std::to_string(opt.max_chars) + " characters)";
  split_train_val(d, std::move(pieces), opt.seed);
  d.vocab = vocabulary_of(d.train, d.val);
  return d;
}

Dataset sequences_dataset(const std::string& path, int max_chars) {
  Dataset d;
  d.name = "sequences " + path;
  d.description = "a line of " + path + ", in file order";
  size_t number = 0;
  for (auto& line : utf8_lines(path)) {
    ++number;
    if (line.empty()) continue;
    if (static_cast<int>(utf8_length(line)) > max_chars)
      throw Error(path + ": line " + std::to_string(number) + " has " + std::to_string(utf8_length(line)) +
                  " characters; with bos_token and eos_token the model takes at most " + std::to_string(max_chars));
    d.train.push_back(std::move(line));
  }
  if (d.train.empty()) throw Error(path + " has no sequences (every line is empty)");
  d.vocab = vocabulary_of(d.train, d.val);
  return d;
}

std::vector<std::string> missing_characters(const std::vector<std::string>& vocab, const ModelConfig& c) {
  if (c.tokenizer == TokenizerKind::Word || c.file_tokenizer()) return {};  // an unknown word is [UNK]
  const std::set<std::string> have(c.vocab.begin(), c.vocab.end());  // characters, or BPE's pieces (its base characters among them)
  std::vector<std::string> missing;
  for (const auto& ch : vocab)
    if (!have.count(ch)) missing.push_back(ch);
  return missing;
}

std::vector<Tokens> tokenize(const std::vector<std::string>& texts, const ModelConfig& c) {
  const std::unique_ptr<Tokenizer> tok_owner = make_tokenizer(c);
  const Tokenizer& tok = *tok_owner;
  std::vector<Tokens> out;
  out.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    Tokens x;
    try {
      x = tok.encode_sequence(texts[i], true);  // [bos_token, characters…, eos_token]
    } catch (const Error& e) {
      throw Error("sequence " + std::to_string(i + 1) + " (\"" + texts[i] + "\"): " + e.what());
    }
    if (static_cast<int>(x.size()) > c.l_max)
      throw Error("sequence " + std::to_string(i + 1) + " (\"" + texts[i] + "\") is " + std::to_string(x.size()) +
                  " tokens with bos_token and eos_token, more than ℓ_max = " + std::to_string(c.l_max));
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace sf
