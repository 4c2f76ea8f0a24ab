// Filling in [MASK] in the Session (models whose output is FillIn): the settings, which prompt
// pieces were masked (so that unmasking restores them) and fill_masks' result for the prompt.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "app/logic/session_input.hpp"
#include "core/algorithms/fill_in.hpp"
#include "core/arch/architecture.hpp"

namespace sf {

// τ = 0 takes the argmax.
struct FillSettings {
  double tau = 0.0;
  uint64_t seed = 1;
  int top_k = 5;
};

class FillIn {
 public:
  FillSettings settings;

  // fill_masks on x (untraced) for `settings`, computed again only when x, the settings or the
  // model change; positions empty when x has no [MASK] or the model does not fill in (error()).
  const FillResult& result(const Tokens& x, const Model& m, const Architecture& a) const;
  const std::string& error(const Tokens& x, const Model& m, const Architecture& a) const;
  // The prompt text that the [MASK] at 1-based t replaced when it was masked here; nullptr for a
  // [MASK] typed by hand.
  const std::string* masked_piece(int t) const {
    for (const auto& [pos, text] : origins_)
      if (pos == t) return &text;
    return nullptr;
  }

 private:
  friend class Session;  // masking edits the prompt, which the Session owns and traces

  // Forgets the model's fill and the masked pieces (a new model).
  void clear();
  // Typed text: the pieces that [MASK]s replaced are forgotten.
  void forget_masks() { origins_.clear(); }
  // The prompt's text with its token at 1-based position t (<bos> is 1) masked, or unmasked to
  // the piece that was there, in `text`. False with `error` at <bos>, outside the prompt, when
  // the prompt cannot be encoded, when a [MASK] typed by hand has no piece to restore, or when
  // the vocabulary has no mask token.
  bool toggle_mask(int t, const TokenInput& prompt, const Tokenizer& tok, std::string& text, std::string& error);

  std::vector<std::pair<int, std::string>> origins_;  // (t, the prompt text that [MASK] replaced)
  mutable FillResult fill_;
  mutable std::string error_;
  mutable std::vector<double> key_;  // tokens and settings fill_ was computed for
};

}  // namespace sf
