#include "core/tokenizers/token_list.hpp"

#include <sstream>

#include "core/io/fileio.hpp"
#include "core/model/error.hpp"
#include "core/tokenizers/utf8.hpp"

namespace sf {

namespace {

// One UTF-8 character (or one stray byte) starting at text[byte].
std::string char_at(const std::string& text, size_t byte) {
  return utf8_split(text.substr(byte, std::min<size_t>(4, text.size() - byte))).front();
}

// Whitespace a panel could not show, made visible as GPT-2's labels show it.
std::string visible(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == ' ') out += "␣";
    else if (c == '\n') out += "↵";
    else if (c == '\t') out += "⇥";
    else if (c == '\r') out += "␍";
    else out += c;
  }
  return out;
}

// The pieces the list tokenizers report after the first unknown one: "(and 2 more unknown pieces)".
std::string more(const std::vector<UnknownChar>& bad) {
  if (bad.size() < 2) return "";
  return " (and " + std::to_string(bad.size() - 1) + " more unknown piece" + (bad.size() > 2 ? "s" : "") + ")";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// TokenListTokenizer

TokenListTokenizer::TokenListTokenizer(std::vector<std::string> tokens, std::string source)
    : tokens_(std::move(tokens)), source_(std::move(source)) {
  if (tokens_.empty()) throw Error(source_ + " lists no tokens");
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i].empty()) throw Error(source_ + ": token " + std::to_string(i) + " (0-based) is empty");
    if (!ids_.emplace(tokens_[i], static_cast<int>(i) + 1).second)
      throw Error(source_ + " lists " + describe_char(tokens_[i]) + " twice (0-based ids " +
                  std::to_string(ids_[tokens_[i]] - 1) + " and " + std::to_string(i) + ")");
    longest_ = std::max(longest_, tokens_[i].size());
  }
}

std::string TokenListTokenizer::describe() const {
  return "the model's own token list from " + source_ + " (" + std::to_string(tokens_.size()) + " tokens, no special tokens)";
}

std::vector<TextPiece> TokenListTokenizer::tokenize(const std::string& text) const {
  std::vector<TextPiece> out;
  size_t byte = 0;
  while (byte < text.size()) {
    int id = 0;
    size_t len = std::min(longest_, text.size() - byte);
    for (; len > 0 && !id; --len)  // the longest listed token starting here
      if (const auto it = ids_.find(text.substr(byte, len)); it != ids_.end()) id = it->second;
    const std::string piece = id ? tokens_[id - 1] : char_at(text, byte);
    out.push_back({piece, byte, id});
    byte += piece.size();
  }
  return out;
}

std::string TokenListTokenizer::label(int id) const {
  return id >= 1 && id <= N_V() ? visible(tokens_[id - 1]) : "?";
}

std::string TokenListTokenizer::piece(int id) const { return id >= 1 && id <= N_V() ? tokens_[id - 1] : ""; }

std::string TokenListTokenizer::decode_text(const Tokens& ids) const {
  std::string s;
  for (int id : ids) s += piece(id);
  return s;
}

std::string TokenListTokenizer::unknown_message(const std::vector<UnknownChar>& bad) const {
  std::string listed;
  for (size_t i = 0; i < tokens_.size() && i < 80; ++i) listed += label(static_cast<int>(i) + 1);
  if (tokens_.size() > 80) listed += " …";
  return "character " + describe_char(bad[0].chr) + " at position " + std::to_string(bad[0].position) +
         " is not in the model's token list" + more(bad) + "; " + source_ + " lists: " + listed;
}

// ---------------------------------------------------------------------------------------------
// PlainIdsTokenizer

PlainIdsTokenizer::PlainIdsTokenizer(int n_v) : n_v_(n_v) {
  if (n_v < 1) throw Error("a model needs at least one token (N_V = " + std::to_string(n_v) + ")");
}

std::string PlainIdsTokenizer::describe() const {
  return "plain ids #1 … #" + std::to_string(n_v_) + " (no tokenizer files: type ids)";
}

std::vector<TextPiece> PlainIdsTokenizer::tokenize(const std::string& text) const {
  auto separator = [](char c) { return c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r'; };
  std::vector<TextPiece> out;
  for (size_t byte = 0; byte < text.size();) {
    if (separator(text[byte])) {
      ++byte;
      continue;
    }
    size_t end = byte;
    while (end < text.size() && !separator(text[end])) ++end;
    const std::string word = text.substr(byte, end - byte);
    const size_t digits = word[0] == '#' ? 1 : 0;
    // At most 9 digits: every N_V fits, and the number cannot overflow an int.
    const bool number = word.size() > digits && word.size() - digits <= 9 &&
                        word.find_first_not_of("0123456789", digits) == std::string::npos;
    const int k = number ? std::stoi(word.substr(digits)) : 0;
    out.push_back({word, byte, k >= 1 && k <= n_v_ ? k : 0});
    byte = end;
  }
  return out;
}

std::string PlainIdsTokenizer::label(int id) const {
  return id >= 1 && id <= n_v_ ? "#" + std::to_string(id) : "?";
}

std::string PlainIdsTokenizer::decode_text(const Tokens& ids) const {
  std::string s;
  for (int id : ids) s += (s.empty() ? "" : " ") + label(id);
  return s;
}

std::string PlainIdsTokenizer::unknown_message(const std::vector<UnknownChar>& bad) const {
  return "\"" + bad[0].chr + "\" at position " + std::to_string(bad[0].position) + " is not a token id" + more(bad) +
         ": the model has no tokenizer files, so the input is a list of ids 1 … " + std::to_string(n_v_) +
         " separated by spaces or commas (e.g. 1 2 3), id k being the model's own token k − 1";
}

// ---------------------------------------------------------------------------------------------
// vocab.txt as a token list

std::vector<std::string> parse_token_list(const std::string& bytes, const std::string& name) {
  std::vector<std::string> tokens;
  std::istringstream in(bytes);
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = name + " line " + std::to_string(number);
    if (line.empty())
      throw Error(where + " is empty: vocab.txt lists one token per line (write a space as a line holding one space, "
                  "a newline as \\n, a tab as \\t)");
    std::string token;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] != '\\') {
        token += line[i];
        continue;
      }
      const char e = i + 1 < line.size() ? line[++i] : '\0';
      if (e == 'n') token += '\n';
      else if (e == 't') token += '\t';
      else if (e == 'r') token += '\r';
      else if (e == '\\') token += '\\';
      else
        throw Error(where + ": a backslash must start \\n, \\t, \\r or \\\\ (write a backslash token as \\\\)");
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

std::vector<std::string> read_token_list(const std::string& path, size_t max_bytes) {
  return parse_token_list(read_file(path, max_bytes), path);
}

}  // namespace sf
