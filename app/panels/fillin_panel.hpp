// Inspector tab "Fill-in" (models whose output is FillIn, i.e. BERT, Algorithm 9): the prompt's
// tokens as buttons (a click masks or unmasks one), and at each [MASK] the tokens the model
// puts there, from the column of P = ETransformer(x) at that position: the top candidates with
// their probabilities, the whole column as a strip, τ and the seed to sample instead of argmax.
// The fill itself is not a paper algorithm (the paper prints none for using BERT).
#pragma once
#include "app/app.hpp"

namespace sf {

struct FillInPanel {
  void draw(App& app);
};

}  // namespace sf
