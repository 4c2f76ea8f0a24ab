// Algorithm 4-F, FlashAttention: NOT IN THE PAPER. Stepformer's listing, in the paper's style, of
// Dao et al. 2022 as the encyclopedia article (seed 004) describes it; its lines are those of
// core/algorithms/alg04f_flash_attention.cpp (lines::flash_attention in vocabulary.hpp).
#include "core/pseudocode/flash_listing.hpp"
#include "core/pseudocode/pseudocode.hpp"
#include "core/pseudocode/speculative_listing.hpp"
#include "core/pseudocode/rfa_listing.hpp"
#include "core/trace/vocabulary.hpp"

namespace sf {

const std::vector<PseudoAlgorithm>& extra_pseudocode() {
  static const std::vector<PseudoAlgorithm> table{
    {algs::flash_attention,
     "FlashAttention",
     "Ṽ ← FlashAttention(X, Z | W_qkv, Mask; B_r, B_c)",
     {
         "/* Not in the paper: Dao et al. 2022, from the encyclopedia article (seed 004). Computes Algorithm 4's Ṽ "
         "(equal up to rounding) without the ℓ_z×ℓ_x score matrix: blocks of keys at a time, with an online softmax. */",
         "/* Tokens are columns, as in the paper: the \"rows\" of Q, O, m, ℓ in Dao et al. are columns here. */",
         "Input: X ∈ ℝ^{d_x×ℓ_x}, Z ∈ ℝ^{d_z×ℓ_z}, vector representations of primary and context sequence.",
         "Output: Ṽ ∈ ℝ^{d_out×ℓ_x}, Algorithm 4's Ṽ up to rounding.",
         "Parameters: W_qkv as in Algorithm 4.",
         "Hyperparameters: Mask ∈ {0,1}^{ℓ_z×ℓ_x}, ↑(3); B_r, B_c ∈ ℕ, the query and key block sizes.",
     },
     {
         {1, "Q ← W_q X + b_q 1ᵀ        [[Query ∈ ℝ^{d_attn×ℓ_x}]]", 0},
         {2, "K ← W_k Z + b_k 1ᵀ        [[Key ∈ ℝ^{d_attn×ℓ_z}]]", 0},
         {3, "V ← W_v Z + b_v 1ᵀ        [[Value ∈ ℝ^{d_out×ℓ_z}]]", 0},
         {4, "for i = 1, 2, … (ℓ_x/B_r rounded up): I ← query columns (i−1)B_r + 1 … min(iB_r, ℓ_x)", 0},
         {5, "m ← −∞ 1ᵀ, ℓ ← 0ᵀ, O ← 0        [[m, ℓ ∈ ℝ^{1×|I|}, O ∈ ℝ^{d_out×|I|}]]", 1},
         {6, "for j = 1, 2, … (ℓ_z/B_c rounded up): J ← key tokens (j−1)B_c + 1 … min(jB_c, ℓ_z)", 1},
         {7, "if ¬Mask[t_z, t_x] for all t_z ∈ J, t_x ∈ I then skip this block", 2},
         {8, "S_blk ← K[:, J]ᵀ Q[:, I] / √d_attn; ∀t_z, t_x, if ¬Mask[t_z, t_x] then S_blk[t_z, t_x] ← −∞", 2},
         {9, "m_new ← max(m, max_{t_z} S_blk[t_z, :])", 2},
         {10, "O ← O · diag(exp(m − m_new)) + V[:, J] · exp(S_blk − 1 m_new)", 2},
         {11, "ℓ ← ℓ ⊙ exp(m − m_new) + 1ᵀ exp(S_blk − 1 m_new)", 2},
         {12, "m ← m_new", 2},
         {13, "end", 1},
         {14, "Ṽ[:, I] ← O · diag(ℓ)⁻¹        [[a column with ℓ = 0 (all keys masked) is 0]]", 1},
         {15, "end", 0},
         {16, "return Ṽ", 0},
     }},
    speculative_pseudocode(),  // Algorithm 14-S (speculative_listing.cpp)
    rfa_pseudocode(),  // Algorithm 4-R, random-feature attention (rfa_listing.cpp)
  };
  return table;
}

std::string algorithm_label(int alg) {
  if (alg == algs::speculative_decoding) return "14-S";
  if (alg == algs::random_feature_attention) return "4-R";
  return alg == algs::flash_attention ? "4-F" : std::to_string(alg);
}

bool not_in_paper(int alg) {
  for (const PseudoAlgorithm& a : extra_pseudocode())
    if (a.number == alg) return true;
  return false;
}

}  // namespace sf

namespace sf {

const char* explain_flash_line(int line) {
  switch (line) {
    case 1: return "Compute a query for every token of X, as Algorithm 4's line 1 does.";
    case 2: return "Compute a key for every token of the context Z, as Algorithm 4's line 2 does.";
    case 3: return "Compute a value for every context token, as Algorithm 4's line 3 does.";
    case 4: return "Take the next block I of B_r query columns (the last block may be shorter). Each block of queries "
                   "is finished before the next one starts, so the full score matrix is never needed.";
    case 5: return "Start the block's running state: the largest score seen so far m = −∞, the running sum of "
                   "exponentials ℓ = 0, and the unnormalised output O = 0, one entry or column per query.";
    case 6: return "Take the next block J of B_c keys and values of the context.";
    case 7: return "If the mask forbids every pair in this block (e.g. keys after all of the block's queries under "
                   "the causal mask), its scores would all be −∞ and add nothing: skip it without computing it.";
    case 8: return "Score only this block: B_c keys against B_r queries, scaled by √d_attn, with −∞ where the mask "
                   "forbids a pair. This small block replaces the whole ℓ_z×ℓ_x matrix S of Algorithm 4.";
    case 9: return "Update each query's running maximum with the largest score in this block; subtracting it keeps "
                   "every exp(·) at most 1, so nothing overflows.";
    case 10: return "Rescale what O holds by exp(m − m_new), because those terms were computed against the old "
                    "maximum, then add this block's values weighted by exp(S_blk − m_new).";
    case 11: return "Update the running sum ℓ = Σ exp(s − m) the same way: rescale the old sum, add this block's terms.";
    case 12: return "The new maximum becomes the running maximum for the next key block.";
    case 13: return "End of the key blocks: O and ℓ now hold every allowed key's contribution.";
    case 14: return "Divide each column of O by its ℓ: this is the softmax's normalisation, done once at the end. The "
                    "result equals Algorithm 4's columns up to rounding. A query whose keys are all masked has ℓ = 0 "
                    "and gets a 0 column, as in Algorithm 4.";
    case 15: return "End of the query blocks.";
    case 16: return "Return Ṽ. The step also shows how far it is from Algorithm 4's Ṽ on the same inputs, and the "
                    "memory each needs: Algorithm 4's ℓ_z×ℓ_x scores against one block's working set.";
    default: return nullptr;
  }
}

std::vector<NotationEntry> flash_notation_entries() {
  const auto text = [](std::string s) { return NotationText{std::move(s), ""}; };
  const auto none = [](std::string why) { return NotationText{"", std::move(why)}; };
  const std::string carpenter_whole =
      "no counterpart: Carpenter's ATTEND scores each query against all its keys at once (lp[1:N], then SOFTMAX): "
      "no blocks, no running maximum";
  const std::string dyz_whole =
      "no counterpart: the tutorial writes the attention weights Ω^h whole (a softmax over t′), not blockwise";
  const int a = algs::flash_attention;
  std::vector<NotationEntry> t{
      {a, 1, text("ATTEND: q[n, 1:K] = x[n, 1:V] * beta.query   // as Algorithm 4 line 1"),
       text("q^h_{α;t;c} ≡ Σ_{i=1}^{n} Q^h_{ci} s_{α;t;i}   (as Algorithm 4 line 1)")},
      {a, 2, text("ATTEND: k[n, 1:K] = x[n, 1:V] * beta.key"), text("k^h_{α;t;c} ≡ Σ_{i=1}^{n} K^h_{ci} s_{α;t;i}")},
      {a, 3, text("ATTEND: v[n, 1:V] = x[n, 1:V] * beta.value"), text("v^h_{α;t;c} ≡ Σ_{i=1}^{n} V^h_{ci} s_{α;t;i}")},
  };
  for (int line = 4; line <= 13; ++line) t.push_back({a, line, none(carpenter_whole), none(dyz_whole)});
  t.push_back({a, 14, text("ATTEND: p[1:N] = SOFTMAX(lp[1:N]);  u[n, 1:V] = SUM(n' in 1:N) p[n'] * v[n', 1:V]   (the same values)"),
               text("Σ_{t′=1}^{T} Ω^h_{α;tt′} v^h_{α;t′;c}   (the same values, normalised at the end)")});
  t.push_back({a, 15, none("the end of a loop: nothing is computed"), none("the end of a loop: nothing is computed")});
  t.push_back({a, 16, text("ATTEND: u[n, 1:V]   (returned for every row n)"), text("Σ_{t′=1}^{T} Ω^h_{α;tt′} v^h_{α;t′;c}")});
  return t;
}

}  // namespace sf
