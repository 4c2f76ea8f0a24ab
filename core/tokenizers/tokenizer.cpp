#include "core/tokenizers/tokenizer.hpp"

#include <sstream>

#include "core/model/error.hpp"
#include "core/tokenizers/utf8.hpp"

namespace sf {

VocabTokenizer::VocabTokenizer(std::vector<std::string> vocab, const std::string& what,
                               std::string (*show)(const std::string&))
    : vocab_(std::move(vocab)) {
  for (size_t i = 0; i < vocab_.size(); ++i)
    if (!ids_.emplace(vocab_[i], static_cast<int>(i) + 1).second)
      throw Error("the " + what + " vocabulary has \"" + (show ? show(vocab_[i]) : vocab_[i]) + "\" twice (entries " +
                  std::to_string(ids_[vocab_[i]]) + " and " + std::to_string(i + 1) + ")");
}

CharTokenizer::CharTokenizer(const ModelConfig& c) : VocabTokenizer(c.vocab, "character") {}

std::string describe_char(const std::string& chr) {
  unsigned char c = chr.empty() ? 0 : static_cast<unsigned char>(chr[0]);
  if (chr.size() == 1 && (c < 0x20 || c == 0x7F)) {
    char buf[32];
    snprintf(buf, sizeof buf, "U+%04X", c);
    std::string s = buf;
    if (c == '\n') s += " (newline)";
    if (c == '\t') s += " (tab)";
    return s;
  }
  if (chr.size() == 1 && c >= 0x80) {
    char buf[40];
    snprintf(buf, sizeof buf, "byte 0x%02X (not valid UTF-8)", c);
    return buf;
  }
  return "\"" + chr + "\"";
}

std::string CharTokenizer::describe() const {
  return "character-level (" + std::to_string(vocab_.size()) + " characters + [MASK], [BOS], [EOS])";
}

std::vector<TextPiece> CharTokenizer::tokenize(const std::string& text) const {
  std::vector<TextPiece> out;
  size_t byte = 0;
  while (byte < text.size()) {
    if (text[byte] == '[') {  // [MASK], [BOS], [EOS], or an unknown [WORD]
      size_t end = byte + 1;
      while (end < text.size() && text[end] >= 'A' && text[end] <= 'Z') ++end;
      if (end > byte + 1 && end < text.size() && text[end] == ']') {
        const std::string word = text.substr(byte, end + 1 - byte);
        const int id = word == "[MASK]" ? mask_token() : word == "[BOS]" ? bos_token() : word == "[EOS]" ? eos_token() : 0;
        out.push_back({word, byte, id});
        byte = end + 1;
        continue;
      }
    }
    const std::string ch = utf8_split(text.substr(byte, std::min<size_t>(4, text.size() - byte))).front();
    const auto it = ids_.find(ch);
    out.push_back({ch, byte, it == ids_.end() ? 0 : it->second});
    byte += ch.size();
  }
  return out;
}

std::vector<UnknownChar> Tokenizer::unknown(const std::string& text) const {
  std::vector<UnknownChar> out;
  size_t pos = 0;
  for (const TextPiece& p : tokenize(text)) {
    ++pos;
    if (!p.id) out.push_back({pos, p.byte, p.text});
  }
  return out;
}

std::string Tokenizer::unknown_message(const std::vector<UnknownChar>& bad) const {
  std::ostringstream m;
  m << "piece " << describe_char(bad[0].chr) << " at position " << bad[0].position << " has no id in the "
    << describe() << " vocabulary";
  if (bad.size() > 1) m << " (and " << bad.size() - 1 << " more unknown piece" << (bad.size() > 2 ? "s" : "") << ")";
  return m.str();
}

std::string CharTokenizer::unknown_message(const std::vector<UnknownChar>& bad) const {
  std::ostringstream m;
  if (bad[0].chr.size() > 2 && bad[0].chr.front() == '[')
    m << bad[0].chr << " at position " << bad[0].position
      << " is not a special token: the paper's special tokens are written [MASK], [BOS] and [EOS]";
  else
    m << "character " << describe_char(bad[0].chr) << " at position " << bad[0].position
      << " is not in the model's vocabulary";
  if (bad.size() > 1) m << " (and " << bad.size() - 1 << " more unknown piece" << (bad.size() > 2 ? "s" : "") << ")";
  m << "; the vocabulary is: ";
  for (const auto& v : vocab_) m << v;
  return m.str();
}

Tokens Tokenizer::encode(const std::string& text) const {
  const std::vector<TextPiece> pieces = tokenize(text);
  Tokens out;
  std::vector<UnknownChar> bad;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (!pieces[i].id) bad.push_back({i + 1, pieces[i].byte, pieces[i].text});
    out.push_back(pieces[i].id);
  }
  if (!bad.empty()) throw Error(unknown_message(bad));
  return out;
}

Tokens Tokenizer::encode_sequence(const std::string& text, bool with_eos) const {
  Tokens out;
  if (bos_token()) out.push_back(bos_token());  // a model without one (plain ids) reads the text alone
  const Tokens body = encode(text);
  out.insert(out.end(), body.begin(), body.end());
  if (with_eos && eos_token()) out.push_back(eos_token());
  return out;
}

std::string CharTokenizer::label(int id) const {
  if (ordinary(id)) return vocab_[id - 1];
  return special_label(id);
}

std::string Tokenizer::special_label(int id) const {
  if (id == mask_token() && id) return "<mask>";
  if (id == bos_token()) return "<bos>";
  if (id == eos_token()) return "<eos>";
  return "?";
}

std::string Tokenizer::decode(const Tokens& ids) const {
  std::string s;
  for (int id : ids) s += label(id);
  return s;
}

std::string CharTokenizer::decode_text(const Tokens& ids) const {
  std::string s;
  for (int id : ids)
    if (ordinary(id)) s += vocab_[id - 1];
  return s;
}

Tokens Tokenizer::parse_ids(const std::string& list) const {
  Tokens out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    long v = 0;
    try {
      v = std::stol(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    while (used < item.size() && item[used] == ' ') ++used;
    if (item.empty() || used != item.size())
      throw Error("token list: \"" + item + "\" is not an integer (expected 1-based ids such as 3,1,4)");
    if (v < 1 || v > N_V())
      throw Error("token list: id " + std::to_string(v) + " is outside [1, N_V] = [1, " + std::to_string(N_V()) + "]");
    out.push_back(static_cast<int>(v));
  }
  if (out.empty()) throw Error("token list is empty (expected 1-based ids such as 3,1,4)");
  return out;
}

std::vector<TextSegment> split_specials(const std::string& text, const std::vector<std::pair<std::string, int>>& specials) {
  std::vector<TextSegment> out;
  size_t plain = 0;  // where the current ordinary text began
  for (size_t i = 0; i < text.size();) {
    const std::pair<std::string, int>* hit = nullptr;
    for (const auto& s : specials)
      if (!s.first.empty() && text.compare(i, s.first.size(), s.first) == 0 && (!hit || s.first.size() > hit->first.size()))
        hit = &s;
    if (!hit) {
      ++i;
      continue;
    }
    if (i > plain) out.push_back({text.substr(plain, i - plain), plain, 0});
    out.push_back({hit->first, i, hit->second});
    i += hit->first.size();
    plain = i;
  }
  if (text.size() > plain) out.push_back({text.substr(plain), plain, 0});
  return out;
}

}  // namespace sf
