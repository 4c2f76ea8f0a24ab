// Algorithm 14-S, speculative decoding: NOT IN THE PAPER. Stepformer's listing, in the paper's
// style, of Leviathan et al. 2023 / Chen et al. 2023 as the encyclopedia article (seed 004)
// describes it; its lines are those of core/algorithms/alg14s_speculative_decoding.cpp.
#include "core/pseudocode/speculative_listing.hpp"

#include "core/trace/vocabulary.hpp"

namespace sf {

PseudoAlgorithm speculative_pseudocode() {
  return {
      algs::speculative_decoding,
      "SpeculativeDecoding",
      "y ← SpeculativeDecoding(x, θ_target, θ_draft; K, τ, ℓ_gen)",
      {
          "/* Not in the paper: Leviathan et al. 2023 and Chen et al. 2023, from the encyclopedia article (seed 004).",
          "   A small draft model proposes K tokens; the target checks them all in ONE forward pass.",
          "   y has the distribution of Algorithm 14 on the target (τ = 0: exactly its greedy output). */",
          "/* Note the names: p is the TARGET's distribution after τ (Algorithm 14's q) and q the DRAFT's,",
          "   as in the issue and the articles. */",
          "Input: x ∈ V*, a prompt. θ_target, θ_draft: two trained DTransformers (Algorithm 10) with the same V.",
          "Output: y ∈ V*, the target's continuation of the prompt.",
          "Hyperparameters: K ∈ ℕ proposals per round, τ ∈ [0, ∞), ℓ_gen ∈ ℕ.",
      },
      {
          {1, "ℓ ← length(x)", 0},
          {2, "while length(x) < ℓ + ℓ_gen do        [[one round]]", 0},
          {3, "K′ ← min(K, ℓ + ℓ_gen − length(x) − 1, ℓ_max − length(x))", 1},
          {4, "for i = 1, 2, …, K′ do", 1},
          {5, "q_i ∝ P_d[:, last]^{1/τ}, where P_d ← DTransformer([x, x̃_1, …, x̃_{i−1}] | θ_draft)", 2},
          {6, "sample a token x̃_i from q_i", 2},
          {7, "end", 1},
          {8, "P ← DTransformer([x, x̃_1, …, x̃_K′] | θ_target); p_i ∝ P[:, length(x)+i−1]^{1/τ}", 1},
          {9, "for i = 1, 2, …, K′ do", 1},
          {10, "r ← p_i(x̃_i) / q_i(x̃_i); draw u ~ U[0, 1)        [[τ = 0: no draw]]", 2},
          {11, "if u < min(1, r) then x ← [x, x̃_i]        [[accept]]", 2},
          {12, "else", 2},
          {13, "p′ ← norm(max(0, p_i − q_i))        [[the residual]]", 3},
          {14, "sample y from p′; x ← [x, y]; go to line 2        [[end the round]]", 3},
          {15, "end", 1},
          {16, "sample y from p_{K′+1}; x ← [x, y]        [[all accepted: one more token]]", 1},
          {17, "end", 0},
          {18, "return y = x[ℓ + 1 : ℓ + ℓ_gen]", 0},
      },
  };
}

const char* explain_speculative_line(int line) {
  switch (line) {
    case 1: return "Remember the prompt's length ℓ: the output is what comes after it.";
    case 2: return "Each round adds between 1 and K′ + 1 tokens for one pass of the target model, where Algorithm 14 "
                   "needs one target pass per token.";
    case 3: return "Propose fewer than K tokens when fewer are still wanted (the round's extra token counts too), or "
                   "when the target's ℓ_max leaves no room: the target must read x and all the proposals at once.";
    case 4: return "The draft model proposes its tokens one after another, as Algorithm 14 would on the draft.";
    case 5: return "The draft's distribution q_i for the next token, after the temperature τ (Algorithm 14's line 5 on "
                   "the draft). The draft is small, so this pass is cheap.";
    case 6: return "Draw the proposal x̃_i from q_i (τ = 0: the draft's argmax).";
    case 8: return "ONE pass of the target over x and all K′ proposals. The causal mask makes column length(x) + i − 1 "
                   "depend only on the tokens up to x̃_{i−1}, so it is the p Algorithm 14 would compute there: K′ + 1 "
                   "predictions for the price of one pass.";
    case 10: return "How much more (or less) the target likes x̃_i than the draft did. At τ = 0 p_i and q_i are one-hots: "
                    "r = 1 when the target's argmax is x̃_i, else 0.";
    case 11: return "Accept x̃_i with probability min(1, r): always when the target gives it at least the draft's "
                    "probability. At τ = 0: accept while the target's argmax agrees.";
    case 13: return "On rejection, the next token comes from where the target has MORE mass than the draft, "
                    "renormalised. Accepting with min(1, p/q) and drawing the rest from this residual gives exactly p "
                    "(Leviathan et al., Theorem 1). At τ = 0 it is the one-hot of the target's argmax.";
    case 14: return "Append the replacement and end the round: the later proposals were made after a token that is no "
                    "longer there, so they are discarded.";
    case 16: return "Every proposal was accepted: the same target pass already gave p_{K′+1}, the distribution after "
                    "the last proposal, so one more token comes free.";
    case 18: return "Return the continuation. The counters compare the target's passes with Algorithm 14's, one per "
                    "token.";
    default: return nullptr;
  }
}

std::vector<NotationEntry> speculative_notation_entries() {
  const auto text = [](std::string s) { return NotationText{std::move(s), ""}; };
  const auto none = [](std::string why) { return NotationText{"", std::move(why)}; };
  // Carpenter's COMPLETE_TEXT (seed 002) runs one decoder, one token per DECODE call: the lines that
  // are Algorithm 14's too map to it; the draft, the one-pass check and the acceptance rule have none.
  const std::string carpenter_none =
      "no counterpart: Carpenter's COMPLETE_TEXT calls one decoder (DECODE) once per token: no draft, no check";
  const std::string dyz_none = "the tutorial stops at the model's head: no generation loop";
  const std::string end = "the end of a loop: nothing is computed";
  const int a = algs::speculative_decoding;
  const auto mapped = [&](int line, const std::string& carpenter) { return NotationEntry{a, line, text(carpenter), none(dyz_none)}; };
  const auto unmapped = [&](int line) { return NotationEntry{a, line, none(carpenter_none), none(dyz_none)}; };
  return {
      mapped(1, "COMPLETE_TEXT: toks: int<low=1, up=T>[N']   (the prompt)"),
      mapped(2, "COMPLETE_TEXT: while (True):   (until END_TOKEN or max_tokens; one token per pass)"),
      unmapped(3),
      unmapped(4),
      mapped(5, "COMPLETE_TEXT: prob = DECODE(tok, ...decoder params...)   (on the draft's parameters)"),
      mapped(6, "COMPLETE_TEXT: next_tok = categorical_rng(prob)   (τ = 1)"),
      {a, 7, none(end), none(end)},
      unmapped(8),
      unmapped(9),
      unmapped(10),
      unmapped(11),
      {a, 12, none("an else: nothing is computed"), none("an else: nothing is computed")},
      unmapped(13),
      unmapped(14),
      {a, 15, none(end), none(end)},
      mapped(16, "COMPLETE_TEXT: next_tok = categorical_rng(prob); toks.push_last(next_tok)   (the target's prob)"),
      {a, 17, none(end), none(end)},
      mapped(18, "COMPLETE_TEXT: return toks_out"),
  };
}

}  // namespace sf
