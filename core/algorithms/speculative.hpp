// Algorithm 14-S, speculative decoding (NOT IN THE PAPER: Leviathan et al. 2023, Chen et al. 2023,
// as the encyclopedia article, seed 004, describes it): a small draft model proposes K tokens, the
// target model scores them all in one forward pass, and an acceptance rule keeps the output
// distributed exactly as the target's Algorithm 14 (at τ = 0: exactly Algorithm 14's greedy output).
//
// Names follow the issue and the articles, not Algorithm 14: p is the TARGET's distribution after
// τ (what Algorithm 14 calls q), q is the DRAFT's distribution after τ.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"

namespace sf {

struct SpeculativeOptions {
  int K = 4;          // proposals per round (1 … 64)
  double tau = 0.0;   // τ for both models; 0 = argmax (greedy)
  int l_gen = 16;     // ℓ_gen, tokens to generate
  uint64_t seed = 1;  // the one generator every draw comes from (order: speculative_decoding's comment)
};

// One pass of lines 2–16: what the draft proposed, what the target thought of it, what was kept.
struct SpeculativeRound {
  int K = 0;                   // K′, this round's proposals (K, or fewer near ℓ_gen or ℓ_max)
  Tokens proposals;            // x̃_1 … x̃_K′ (1-based ids)
  std::vector<VecF> q;         // the draft's distribution after τ at each proposal (K′ vectors of N_V)
  std::vector<VecF> p;         // the target's distribution after τ at each of the K′ + 1 positions
  std::vector<double> ratio;   // r_i = p_i(x̃_i)/q_i(x̃_i) for each proposal examined
  std::vector<double> u;       // the acceptance draws u_i ~ U[0, 1) (empty at τ = 0: no draws)
  int accepted = 0;            // how many proposals were accepted (the first `accepted` of them)
  VecF residual;               // norm(max(0, p_i − q_i)) at the rejected proposal; empty when none
  int y = 0;                   // the round's last token: from the residual (rejection) or p_{K′+1}
  int fed = 0;                 // length(x) when the round began (the target's input is fed + K′)
};

struct SpeculativeResult {
  Tokens y;                               // x[ℓ+1 : ℓ+ℓ_gen]
  std::vector<SpeculativeRound> rounds;
  int target_passes = 0;                  // the target's forward passes (one per round)
  int draft_passes = 0;                   // the draft's forward passes (one per proposal)
  int plain_passes() const { return static_cast<int>(y.size()); }  // Algorithm 14: one target pass per token
  int proposed() const;                   // Σ K′ over the rounds
  int accepted() const;                   // Σ accepted over the rounds
  std::string stopped;                    // "" or why generation ended before ℓ_gen tokens
};

// Throws sf::Error saying what differs when `draft` cannot draft for `target`: both must be
// decoder-only (Algorithm 10) with the same vocabulary (the same N_V, tokenizer kind, tokens,
// merges and special tokens). A tokenizer kept in files (GPT-2, WordPiece) is compared by N_V and kind.
void check_draft_model(const Model& target, const Model& draft);

// Algorithm 14-S. Every random number comes from one Rng(opt.seed), in this order within a round
// (τ > 0 only; at τ = 0 nothing is drawn): one uniform per proposal as the draft samples x̃_1 … x̃_K′,
// then one u_i per proposal examined (stopping at the first rejection), then one for the round's
// last token (from the residual or from p_{K′+1}). The DTransformer passes run untraced; the trace
// holds the listing's lines with p, q, u, r and the residual bound.
SpeculativeResult speculative_decoding(const Tokens& x, const Model& target, const Model& draft,
                                       const SpeculativeOptions& opt, Tracer* tr = nullptr);

// norm(max(0, p − q)): where the target puts more mass than the draft, renormalised. When nothing is
// left (p ≤ q everywhere, which only rounding can cause once a proposal is rejected) it is p itself.
VecF residual_distribution(const VecF& p, const VecF& q);

}  // namespace sf
