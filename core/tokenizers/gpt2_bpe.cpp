#include "core/tokenizers/gpt2_bpe.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/model/error.hpp"
#include "core/tokenizers/unicode.hpp"
#include "core/tokenizers/utf8.hpp"

namespace sf {

const std::vector<std::string>& gpt2_byte_symbols() {
  static const std::vector<std::string> symbols = [] {
    std::vector<std::string> s(256);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      s[b] = utf8_encode(printable ? static_cast<char32_t>(b) : next++);
    }
    return s;
  }();
  return symbols;
}

// GPT-2's pre-tokenizer (openai/gpt-2 src/encoder.py).
struct Gpt2Tokenizer::Regex {
  UnicodeRegex re{R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"};
};

Gpt2Tokenizer::Gpt2Tokenizer(std::vector<std::string> pieces,
                             const std::vector<std::pair<std::string, std::string>>& merges,
                             const std::vector<std::string>& specials, std::string source)
    : pieces_(std::move(pieces)), source_(std::move(source)), regex_(std::make_unique<Regex>()) {
  for (size_t i = 0; i < pieces_.size(); ++i) ids_.emplace(pieces_[i], static_cast<int>(i) + 1);
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto& [left, right] = merges[r];
    for (const std::string* p : {&left, &right})
      if (!ids_.count(*p))
        throw Error(source_ + ": merge " + std::to_string(r + 1) + " \"" + left + " " + right + "\" names \"" + *p +
                    "\", which is not in the vocabulary");
    if (!ids_.count(left + right))
      throw Error(source_ + ": merge " + std::to_string(r + 1) + " \"" + left + " " + right + "\" makes \"" + left + right +
                  "\", which is not in the vocabulary");
    ranks_.emplace(merge_key(left, right), static_cast<int>(r));
  }
  for (const std::string& s : specials) {
    const auto it = ids_.find(s);
    if (it == ids_.end()) throw Error(source_ + ": the special token \"" + s + "\" is not in the vocabulary");
    specials_.emplace_back(s, it->second);
  }
  const auto eot = ids_.find("<|endoftext|>");
  if (eot != ids_.end()) {
    eot_ = eot->second;
    if (std::find(specials.begin(), specials.end(), "<|endoftext|>") == specials.end()) specials_.emplace_back("<|endoftext|>", eot_);
  }
  const auto& symbols = gpt2_byte_symbols();
  for (int b = 0; b < 256; ++b) symbol_bytes_.emplace(symbols[b], static_cast<unsigned char>(b));
}

Gpt2Tokenizer::~Gpt2Tokenizer() = default;

std::string Gpt2Tokenizer::describe() const {
  return "GPT-2 byte-level BPE from " + source_ + " (" + std::to_string(N_V()) + " tokens, " +
         std::to_string(ranks_.size()) + " merges)";
}

std::vector<std::string> Gpt2Tokenizer::bpe(const std::string& symbols) const {
  const auto hit = cache_.find(symbols);
  if (hit != cache_.end()) return hit->second;
  return cache_.emplace(symbols, apply_merges(utf8_split(symbols), ranks_)).first->second;
}

void Gpt2Tokenizer::encode_chunk(const std::string& text, size_t byte, std::vector<TextPiece>& out) const {
  const auto& symbols = gpt2_byte_symbols();
  size_t covered = 0;
  const auto emit = [&](size_t from, size_t len) {
    std::string sym;
    for (size_t k = from; k < from + len; ++k) sym += symbols[static_cast<unsigned char>(text[k])];
    size_t at = from;
    for (const std::string& p : bpe(sym)) {
      size_t n = utf8_length(p);  // one symbol per byte
      const auto id = ids_.find(p);
      out.push_back({text.substr(at, n), byte + at, id == ids_.end() ? 0 : id->second});
      at += n;
    }
  };
  for (const auto& [from, len] : regex_->re.find_all(text)) {
    if (from > covered) emit(covered, from - covered);  // bytes that are not UTF-8 (no regex matches them)
    emit(from, len);
    covered = from + len;
  }
  if (covered < text.size()) emit(covered, text.size() - covered);
}

std::vector<TextPiece> Gpt2Tokenizer::tokenize(const std::string& text) const {
  std::vector<TextPiece> out;
  for (const TextSegment& s : split_specials(text, specials_)) {
    if (s.special)
      out.push_back({s.text, s.byte, s.special});
    else
      encode_chunk(s.text, s.byte, out);
  }
  return out;
}

std::string Gpt2Tokenizer::piece(int id) const { return id >= 1 && id <= N_V() ? pieces_[id - 1] : ""; }

static bool is_special_of(const std::vector<std::pair<std::string, int>>& specials, int id) {
  for (const auto& s : specials)
    if (s.second == id) return true;
  return false;
}

std::string Gpt2Tokenizer::bytes(int id) const {
  if (id < 1 || id > N_V() || is_special_of(specials_, id)) return "";
  std::string out;
  for (const std::string& sym : utf8_split(pieces_[id - 1])) {
    const auto b = symbol_bytes_.find(sym);
    out += b == symbol_bytes_.end() ? sym : std::string(1, static_cast<char>(b->second));
  }
  return out;
}

std::string Gpt2Tokenizer::label(int id) const {
  if (id < 1 || id > N_V()) return "?";
  if (is_special_of(specials_, id)) return pieces_[id - 1];
  const std::string b = bytes(id);
  std::string out;
  for (size_t i = 0; i < b.size();) {
    char32_t cp;
    const size_t n = utf8_next(b, i, cp);
    if (cp == ' ') out += "␣";
    else if (cp == '\n') out += "↵";
    else if (cp == '\t') out += "⇥";
    else if (cp == kInvalidUtf8 || cp < 0x20 || cp == 0x7F) {
      char hex[8];
      snprintf(hex, sizeof hex, "<0x%02X>", static_cast<unsigned char>(b[i]));
      out += hex;
    } else {
      out += b.substr(i, n);
    }
    i += n;
  }
  return out;
}

std::string Gpt2Tokenizer::decode_text(const Tokens& ids) const {
  std::string s;
  for (int id : ids) s += bytes(id);
  return s;
}

namespace {
std::string read_text(const std::string& path, const char* what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot read " + path + " (" + what + ")");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
}  // namespace

// vocab.json read as a stream of SAX events: a flat {"piece": id, …} needs no document tree
// (GPT-2's 50257 entries parse several times faster this way).
class VocabJsonReader : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit VocabJsonReader(std::string path) : path_(std::move(path)) {}
  std::vector<std::pair<std::string, long long>> entries;

  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool number_unsigned(number_unsigned_t v) override { return value(static_cast<long long>(v), std::to_string(v)); }
  bool number_integer(number_integer_t v) override { return value(v, std::to_string(v)); }
  bool number_float(number_float_t, const string_t& raw) override { return value(-1, raw); }
  bool null() override { return value(-1, "null"); }
  bool boolean(bool v) override { return value(-1, v ? "true" : "false"); }
  bool string(string_t& v) override { return value(-1, "\"" + v + "\""); }
  bool binary(binary_t&) override { return value(-1, "binary"); }
  bool start_object(std::size_t) override {
    if (depth_++ > 0) return value(-1, "an object");
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return depth_ == 0 ? top_level() : value(-1, "an array"); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    throw Error(path_ + " is not valid JSON: " + e.what());
  }

 private:
  bool value(long long id, const std::string& text) {
    if (depth_ == 0) return top_level();
    if (id < 0) throw Error(path_ + ": entry \"" + key_ + "\" has id " + text + "; ids must be integers 0, 1, …");
    entries.emplace_back(key_, id);
    return true;
  }
  bool top_level() const {
    throw Error(path_ + " must be a JSON object {\"piece\": id, …} (GPT-2's vocabulary); it is not");
  }
  std::string path_, key_;
  int depth_ = 0;
};

std::unique_ptr<Gpt2Tokenizer> load_gpt2_files(const std::string& vocab_json, const std::string& merges_txt) {
  VocabJsonReader reader(vocab_json);
  nlohmann::json::sax_parse(read_text(vocab_json, "GPT-2's vocabulary"), &reader);
  if (reader.entries.empty()) throw Error(vocab_json + " has no entries (GPT-2's vocabulary, {\"piece\": id, …})");
  const size_t n = reader.entries.size();
  std::vector<std::string> pieces(n);
  std::vector<bool> taken(n, false);
  for (auto& [piece, id] : reader.entries) {
    if (id >= static_cast<long long>(n))
      throw Error(vocab_json + ": entry \"" + piece + "\" has id " + std::to_string(id) + "; ids must be integers 0 … " +
                  std::to_string(n - 1) + " (one per entry)");
    if (taken[id])
      throw Error(vocab_json + ": entries \"" + pieces[id] + "\" and \"" + piece + "\" both have id " + std::to_string(id));
    taken[id] = true;
    pieces[id] = std::move(piece);
  }
  std::vector<std::pair<std::string, std::string>> merges;
  std::istringstream lines(read_text(merges_txt, "GPT-2's merges"));
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (n == 1 && line.rfind("#version", 0) == 0)) continue;
    const size_t sp = line.find(' ');
    if (sp == std::string::npos || sp == 0 || sp + 1 == line.size() || line.find(' ', sp + 1) != std::string::npos)
      throw Error(merges_txt + " line " + std::to_string(n) + ": \"" + line +
                  "\" is not a merge (expected two pieces separated by one space, e.g. \"Ġ t\")");
    merges.emplace_back(line.substr(0, sp), line.substr(sp + 1));
  }
  return std::make_unique<Gpt2Tokenizer>(std::move(pieces), merges, std::vector<std::string>{},
                                         base_name(vocab_json) + " + " + base_name(merges_txt));
}

}  // namespace sf
