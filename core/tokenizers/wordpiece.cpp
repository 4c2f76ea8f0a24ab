#include "core/tokenizers/wordpiece.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/model/error.hpp"
#include "core/tokenizers/unicode.hpp"

namespace sf {

namespace {
constexpr size_t kMaxWordChars = 100;  // BERT's max_input_chars_per_word

bool is_cjk(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}
// _is_whitespace, and the line and paragraph separators that Python's str.split() splits on.
bool is_bert_whitespace(char32_t cp) {
  return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == 0x2028 || cp == 0x2029 || is_space_separator(cp);
}
bool is_bert_control(char32_t cp) { return cp != '\t' && cp != '\n' && cp != '\r' && is_control(cp); }
bool is_bert_punctuation(char32_t cp) {
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126) ||
         is_punctuation(cp);
}
}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> pieces, bool lowercase, std::string source)
    : pieces_(std::move(pieces)), lowercase_(lowercase), source_(std::move(source)) {
  if (pieces_.empty()) throw Error(source_ + " is empty: a WordPiece vocabulary has one token per line");
  for (size_t i = 0; i < pieces_.size(); ++i) ids_[pieces_[i]] = static_cast<int>(i) + 1;  // the last of repeats, as transformers
  unk_ = id_of("[UNK]"), cls_ = id_of("[CLS]"), sep_ = id_of("[SEP]"), mask_ = id_of("[MASK]"), pad_ = id_of("[PAD]");
  if (!unk_) throw Error(source_ + " has no [UNK] line: BERT's WordPiece needs it for words it cannot split");
}

int WordPieceTokenizer::id_of(const std::string& p) const {
  const auto it = ids_.find(p);
  return it == ids_.end() ? 0 : it->second;
}

std::string WordPieceTokenizer::describe() const {
  return "BERT WordPiece from " + source_ + " (" + std::to_string(N_V()) + " tokens, " +
         (lowercase_ ? "uncased: lowercased, accents stripped" : "cased") + ")";
}

std::string WordPieceTokenizer::piece(int id) const { return id >= 1 && id <= N_V() ? pieces_[id - 1] : "?"; }

// Greedy longest-match-first (WordpieceTokenizer.tokenize) of one basic-tokenized word.
void WordPieceTokenizer::wordpiece(const std::string& word, size_t byte, std::vector<TextPiece>& out) const {
  std::vector<size_t> starts;  // byte offset of each character
  for (size_t i = 0; i < word.size();) {
    char32_t cp;
    starts.push_back(i);
    i += utf8_next(word, i, cp);
  }
  const size_t n = starts.size();
  starts.push_back(word.size());
  std::vector<TextPiece> pieces;
  for (size_t begin = 0; n <= kMaxWordChars && begin < n;) {
    size_t end = n;
    int id = 0;
    for (; end > begin; --end) {
      const std::string sub = (begin ? "##" : "") + word.substr(starts[begin], starts[end] - starts[begin]);
      if ((id = id_of(sub))) break;
    }
    if (!id) {
      pieces.clear();
      break;
    }
    pieces.push_back({word.substr(starts[begin], starts[end] - starts[begin]), byte + starts[begin], id});
    begin = end;
  }
  if (pieces.empty()) pieces.push_back({word, byte, unk_});
  out.insert(out.end(), pieces.begin(), pieces.end());
}

std::vector<TextPiece> WordPieceTokenizer::tokenize(const std::string& text) const {
  std::vector<std::pair<std::string, int>> specials;
  for (const char* s : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
    if (id_of(s)) specials.emplace_back(s, id_of(s));
  std::vector<TextPiece> out;
  for (const TextSegment& seg : split_specials(text, specials)) {
    if (seg.special) {
      out.push_back({seg.text, seg.byte, seg.special});
      continue;
    }
    // BasicTokenizer: each word (its normalised text, and where it starts in the input).
    std::string word;
    size_t word_byte = 0;
    const auto flush = [&] {
      if (!word.empty()) wordpiece(word, word_byte, out);
      word.clear();
    };
    const std::string& s = seg.text;
    for (size_t i = 0; i < s.size();) {
      char32_t cp;
      const size_t n = utf8_next(s, i, cp);
      const size_t at = seg.byte + i;
      i += n;
      if (cp == 0 || cp == 0xFFFD || cp == kInvalidUtf8 || is_bert_control(cp)) continue;  // _clean_text
      if (is_bert_whitespace(cp)) {
        flush();
        continue;
      }
      std::string chr = utf8_encode(cp);
      if (lowercase_) {  // lowercase, then NFD with the combining marks dropped
        if (is_combining_mark(cp)) continue;
        chr = strip_accents(to_lower(cp));
      }
      if (is_cjk(cp) || is_bert_punctuation(cp)) {  // a word of its own
        flush();
        word_byte = at;
        word = chr;
        flush();
        continue;
      }
      if (word.empty()) word_byte = at;
      word += chr;
    }
    flush();
  }
  return out;
}

std::string WordPieceTokenizer::decode_text(const Tokens& ids) const {
  std::string s;
  for (int id : ids) {
    if (id < 1 || id > N_V() || id == cls_ || id == sep_ || id == pad_ || id == mask_) continue;
    const std::string& p = pieces_[id - 1];
    if (p.rfind("##", 0) == 0 && !s.empty())
      s += p.substr(2);
    else
      s += (s.empty() ? "" : " ") + p;
  }
  return s;
}

std::unique_ptr<WordPieceTokenizer> load_wordpiece_files(const std::string& vocab_txt) {
  std::ifstream f(vocab_txt, std::ios::binary);
  if (!f) throw Error("cannot read " + vocab_txt + " (BERT's WordPiece vocabulary, one token per line)");
  std::vector<std::string> pieces;
  std::string line;
  while (std::getline(f, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    pieces.push_back(line);
  }
  bool lowercase = true;
  const std::filesystem::path config = std::filesystem::path(vocab_txt).parent_path() / "tokenizer_config.json";
  std::string source = std::filesystem::path(vocab_txt).filename().string();
  if (std::filesystem::exists(config)) {
    std::ifstream c(config);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(c);
    } catch (const nlohmann::json::exception& e) {
      throw Error(config.string() + " is not valid JSON: " + e.what());
    }
    if (j.contains("do_lower_case")) {
      if (!j["do_lower_case"].is_boolean())
        throw Error(config.string() + ": \"do_lower_case\" must be true or false, not " + j["do_lower_case"].dump());
      lowercase = j["do_lower_case"].get<bool>();
    }
    source += " + tokenizer_config.json";
  }
  return std::make_unique<WordPieceTokenizer>(std::move(pieces), lowercase, source);
}

}  // namespace sf
