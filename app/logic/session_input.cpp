#include "app/logic/session_input.hpp"

#include <algorithm>
#include <cctype>

namespace sf {

namespace {

// The pieces of a character-level vocabulary (special tokens left out); empty for other tokenizers.
std::vector<std::string> character_pieces(const Tokenizer& tok) {
  std::vector<std::string> pieces;
  if (tok.kind() != TokenizerKind::Char) return pieces;
  for (int id = 1; id <= tok.N_V(); ++id)
    if (id != tok.bos_token() && id != tok.eos_token() && id != tok.mask_token() && id != tok.pad_token())
      pieces.push_back(tok.piece(id));
  return pieces;
}

std::string run_name(char first, char last) {
  const std::string range = std::string(1, first) + "–" + last;
  if (first == 'a' && last == 'z') return "lowercase " + range;
  if (first == 'A' && last == 'Z') return "capitals " + range;
  if (std::isdigit(static_cast<unsigned char>(first))) return "digits " + range;
  return range;
}

// Lowercase first (what a learner types), then capitals, then digits; by code within each.
bool reading_order(char a, char b) {
  auto group = [](char c) { return std::islower(static_cast<unsigned char>(c)) ? 0 : std::isupper(static_cast<unsigned char>(c)) ? 1 : 2; };
  return group(a) != group(b) ? group(a) < group(b) : a < b;
}

}  // namespace

std::string vocabulary_summary(const Tokenizer& tok) {
  const std::vector<std::string> pieces = character_pieces(tok);
  if (pieces.empty()) return tok.describe();
  std::string alnum, symbols;  // one-byte letters and digits (sorted, to find runs); the other printables
  std::vector<std::string> others;
  bool space = false;
  for (const std::string& p : pieces) {
    if (p == " ") space = true;
    else if (p.size() == 1 && std::isalnum(static_cast<unsigned char>(p[0]))) alnum += p;
    else if (p.size() == 1 && p[0] > ' ' && p[0] < 0x7F) symbols += p;
    else others.push_back(describe_char(p));  // é, a tab: as messages name them
  }
  std::sort(alnum.begin(), alnum.end(), reading_order);
  std::sort(symbols.begin(), symbols.end());
  std::vector<std::string> parts;
  for (size_t i = 0; i < alnum.size();) {
    size_t j = i;  // a run of consecutive codes (in ASCII, letters and digits never run into each other)
    while (j + 1 < alnum.size() && alnum[j + 1] == alnum[j] + 1) ++j;
    if (j - i >= 2) {  // three or more in a row read better as a range; one or two are listed
      parts.push_back(run_name(alnum[i], alnum[j]));
    } else {
      for (size_t k = i; k <= j; ++k) parts.emplace_back(1, alnum[k]);
    }
    i = j + 1;
  }
  if (space) parts.push_back("space");
  parts.insert(parts.end(), others.begin(), others.end());
  if (!symbols.empty()) parts.push_back("the symbols " + symbols);
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string unknown_input_message(const Tokenizer& tok, const std::vector<UnknownChar>& bad) {
  constexpr size_t kNamed = 5;  // a handful reads as a list; more are counted
  const size_t named = std::min(bad.size(), kNamed);
  std::string list;
  for (size_t i = 0; i < named; ++i) {
    const bool last = i + 1 == named && bad.size() <= kNamed;
    list += std::string(i == 0 ? "" : last ? " and " : ", ") + describe_char(bad[i].chr) + " at " +
            std::to_string(bad[i].position);
  }
  if (bad.size() > kNamed) list += " and " + std::to_string(bad.size() - kNamed) + " more";
  return list + (bad.size() == 1 ? " is" : " are") + " not in the vocabulary (" + vocabulary_summary(tok) + ")";
}

std::string default_prompt(const Tokenizer& tok, int l_max, bool with_eos, const std::string& preferred) {
  TokenInput probe("prompt", with_eos);
  probe.text = preferred;
  if (probe.encode(tok, l_max) || tok.kind() != TokenizerKind::Char) return preferred;
  constexpr size_t kCharacters = 5;  // as many as "hello" has
  std::string alnum;
  bool separator = false;
  for (const std::string& p : character_pieces(tok)) {
    if (p.size() == 1 && std::isalnum(static_cast<unsigned char>(p[0]))) alnum += p;
    separator |= p == "=";
  }
  std::stable_sort(alnum.begin(), alnum.end(), reading_order);
  std::string text = alnum.substr(0, kCharacters) + (separator ? "=" : "");
  const int room = l_max - 1 - (with_eos ? 1 : 0);  // the tokens left beside <bos> (and <eos>)
  if (static_cast<int>(text.size()) > room) text.resize(static_cast<size_t>(std::max(room, 0)));
  return text;
}

bool TokenInput::encode(const Tokenizer& tok, int l_max) {
  unknown = tok.unknown(text);
  error.clear();
  stale = true;
  if (!unknown.empty()) {
    error = unknown_input_message(tok, unknown) + ". Replace or remove the marked characters (special tokens are "
            "written [MASK], [BOS], [EOS]); until then the trace is stale: it shows the last " + what +
            " that could be encoded";
    return false;
  }
  Tokens t = tok.encode_sequence(text, with_eos);
  if (static_cast<int>(t.size()) > l_max) {
    error = std::string("the ") + what + " is " + std::to_string(t.size()) + " tokens with <bos>" +
            (with_eos ? " and <eos>" : "") + ", but ℓ_max = " + std::to_string(l_max) +
            ": shorten it (until then the trace is stale: it shows the last " + what + " that fits)";
    return false;
  }
  tokens = std::move(t);
  stale = false;
  return true;
}

}  // namespace sf
