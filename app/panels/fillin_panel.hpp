// Inspector tab "Fill-in" (models whose output is FillIn, i.e. BERT, Algorithm 9): the prompt's
// tokens as buttons (a click masks or unmasks one), and at each [MASK] the tokens the model
// puts there, from the column of P = ETransformer(x) at that position: the top candidates with
// their probabilities, the whole column as a strip, τ and the seed to sample instead of argmax.
// The fill itself is not a paper algorithm (the paper prints none for using BERT).
#pragma once
#include <string>
#include <vector>

#include "app/app.hpp"

namespace sf {

struct FillInPanel {
  void draw(App& app);
  // The text of each token button drawn in the last frame, <bos> first (for --dump-state).
  const std::vector<std::string>& button_labels() const { return button_labels_; }

 private:
  std::vector<std::string> button_labels_;
};

}  // namespace sf
