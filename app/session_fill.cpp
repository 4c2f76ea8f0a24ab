#include "app/session_fill.hpp"

#include <algorithm>

namespace sf {

const FillResult& FillIn::result(const Tokens& x, const Model& m, const Architecture& a) const {
  std::vector<double> key(x.begin(), x.end());
  key.insert(key.end(), {settings.tau, static_cast<double>(settings.seed), static_cast<double>(settings.top_k),
                         static_cast<double>(m.table.total())});
  if (key == key_) return fill_;
  key_ = key;
  fill_ = {};
  error_.clear();
  if (a.output() != OutputKind::FillIn) {
    error_ = "this model does not fill in [MASK] (" + a.title() + ")";
    return fill_;
  }
  try {
    fill_ = fill_masks(x, m, settings.tau, settings.seed, settings.top_k);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
  return fill_;
}

const std::string& FillIn::error(const Tokens& x, const Model& m, const Architecture& a) const {
  result(x, m, a);
  return error_;
}

void FillIn::clear() {
  origins_.clear();
  key_.clear();
}

bool FillIn::toggle_mask(int t, const TokenInput& prompt, const Tokenizer& tok, std::string& text,
                         std::string& error) {
  const bool with_eos = prompt.with_eos;  // the last token is then eos_token
  const int last = static_cast<int>(prompt.tokens.size()) - (with_eos ? 1 : 0);
  if (!tok.mask_token())
    return error = "this model's vocabulary has no mask token ([MASK]): there is nothing to fill in", false;
  if (t < 2 || t > last)
    return error = "position " + std::to_string(t) + " is not a prompt token (2 … " + std::to_string(last) +
                   "; 1 is <bos>" + (with_eos ? ", " + std::to_string(last + 1) + " <eos>)" : ")"),
           false;
  // The piece of the prompt's text at t: masking replaces its bytes with "[MASK]", unmasking
  // puts them back (a word piece of WordPiece, a character of the paper's vocabulary).
  const std::vector<TextPiece> pieces = tok.tokenize(prompt.text);
  if (!prompt.error.empty() || static_cast<int>(pieces.size()) != last - 1)
    return error = "the prompt cannot be encoded as it is (" + prompt.error + "): fix it first", false;
  const TextPiece& p = pieces[static_cast<size_t>(t - 2)];
  auto it = std::find_if(origins_.begin(), origins_.end(), [&](const auto& o) { return o.first == t; });
  std::string replacement;
  if (p.id == tok.mask_token()) {
    if (it == origins_.end())
      return error = "the [MASK] at position " + std::to_string(t) + " was typed: there is no piece to restore", false;
    replacement = it->second;
    origins_.erase(it);
  } else {
    if (it != origins_.end()) origins_.erase(it);
    origins_.emplace_back(t, p.text);
    replacement = "[MASK]";
  }
  text = prompt.text.substr(0, p.byte) + replacement + prompt.text.substr(p.byte + p.text.size());
  return true;
}

}  // namespace sf
