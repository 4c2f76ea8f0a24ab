#include "core/explanations.hpp"

#include <map>
#include <utility>

namespace sf {

const char* explain_line(int alg, int line) {
  static const std::map<std::pair<int, int>, const char*> text{
      {{10, 1}, "Count the tokens of the input: ℓ is the sequence length."},
      {{10, 2}, "For each position t, look up the token's embedding column and add the position's embedding column."},
      {{10, 3}, "Put the ℓ vectors side by side: X has one column per token."},
      {{10, 4}, "Repeat the transformer block once per layer."},
      {{10, 5}, "Normalise each token's column before attention (pre-LN, as in GPT-2)."},
      {{10, 6}, "Each token gathers information from itself and earlier tokens (the causal mask), added to X as a residual."},
      {{10, 7}, "Normalise each token's column again, before the MLP."},
      {{10, 8}, "A two-layer MLP with GELU, applied to every token separately, added to X as a residual."},
      {{10, 10}, "A final layer norm of each column."},
      {{10, 11}, "Project each column to one score per vocabulary entry and turn the scores into probabilities."},
  };
  auto it = text.find({alg, line});
  return it == text.end() ? "" : it->second;
}

}  // namespace sf
