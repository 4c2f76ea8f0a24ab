// Sampling from a distribution with temperature (Algorithms 14 and 15, line "sample a token
// y from q ∝ p^{1/τ}"), as small pure functions with an explicit seeded generator.
#pragma once
#include <vector>

#include "core/model/rng.hpp"
#include "core/model/types.hpp"

namespace sf {
// q ∝ p^{1/τ}. τ = 0 gives the one-hot of the argmax (the limit τ → 0).
VecF temperature(const VecF& p, double tau);
// 1-based index of the largest entry (the first one on ties).
int sample_argmax(const VecF& p);
// 1-based index drawn from the distribution q with the uniform number coin ∈ [0, 1).
int sample_mult(const VecF& q, double coin);

// Top-k and top-p (nucleus) sampling: not in the paper (the encyclopedia article, seed 004; Fan et
// al. 2018 for top-k, Holtzman et al. 2020 for top-p). Applied AFTER τ, to q ∝ p^{1/τ}:
//   1. sort the tokens by decreasing p (equal p: the smaller id first, so the order is stable and
//      the first token is sample_argmax's; τ > 0 keeps this order, since q is increasing in p);
//   2. the cut: keep the first n tokens of that order, n = min(n_k, n_p), where
//      n_k = min(k, N_V) (k ≥ N_V: no top-k cut), and
//      n_p = the smallest n ≤ n_k whose mass Σ_{j ≤ n} q_(j) ≥ p · Σ_{j ≤ n_k} q_(j): top-p measured on
//      q after the top-k cut, renormalised, as Hugging Face applies the two in turn (p = 1: no top-p cut);
//      n ≥ 1 always (the most likely token is never cut);
//   3. the renormalised q': q'_v = q_v / Σ_{kept} q for the kept tokens v, 0 for the cut ones.
struct TopKTopP {
  int k = 0;         // top-k; 0: off
  double p = 1.0;    // top-p ∈ (0, 1]; 1: off
  bool active() const { return k > 0 || p < 1.0; }
};
// Throws sf::Error saying what is wrong with k or p (k ≥ 0, where 0 is off; 0 < p ≤ 1).
void check_top_k_top_p(const TopKTopP& cut);
struct TokenCut {
  std::vector<int> order;  // 0-based token ids by decreasing p (the smaller id first on ties)
  VecF p_sorted;           // p in that order
  VecF q_sorted;           // q (after τ) in that order
  int kept = 0;            // n: the first n tokens of `order` are kept
  double mass = 1.0;       // Σ of the kept tokens' q, before renormalising
  VecF q;                  // the renormalised q' over the vocabulary (q itself when nothing is cut)
};
// Token ids (0-based) by decreasing p, the smaller id first on ties.
std::vector<int> order_by_decreasing(const VecF& p);
// Steps 1–3 above for the model's p and q ∝ p^{1/τ}. With cut.active() false: kept = N_V and q unchanged.
TokenCut cut_top_k_top_p(const VecF& p, const VecF& q, const TopKTopP& cut);
}  // namespace sf
