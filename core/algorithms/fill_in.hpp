// Filling in [MASK] positions with a trained BERT (Algorithm 9). NOT a paper algorithm: the paper
// trains BERT (Algorithm 12) but prints no algorithm for using it. This is the natural one: a
// single ETransformer pass over the prompt, then, at each position t with x[t] = mask_token, a
// token from the distribution P[:, t] (argmax at τ = 0, else a sample from q ∝ p^{1/τ}, as
// Algorithms 14 and 15 sample).
#pragma once
#include <cstdint>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/model/params.hpp"
#include "core/trace/trace.hpp"

namespace sf {

struct FillCandidate {
  int id;   // 1-based token id
  float p;  // P[id, t]
};
struct FillPosition {
  int t;                             // 1-based position of a mask_token in the prompt
  int chosen;                        // the token put there
  std::vector<FillCandidate> top;    // the top_k tokens by P[:, t], most likely first
  VecF p;                            // (N_V) P[:, t]
};
struct FillResult {
  Tokens filled;                       // the prompt with every mask_token replaced
  std::vector<FillPosition> positions;  // one per mask_token, in order of t
};

// One pass of the model's forward algorithm (Architecture::forward, traced when tr is given),
// then each mask_token position filled: τ = 0 takes the argmax, τ > 0 samples from q ∝ p^{1/τ}
// with a generator seeded by `seed` (one draw per position, in order). top_k ≥ 0 candidates
// are listed (at most N_V). mask_token is the model's own (c.mask_token(): the paper's N_V − 2, or
// a checkpoint's [MASK] wherever its vocabulary puts it). Throws sf::Error when the model has no
// mask token, when the prompt has none ("the prompt has no [MASK] to fill"), when the model is not
// an encoder-only one, on a bad τ or top_k, and on a prompt the model cannot take.
// `attn`, when set, is another implementation of Algorithm 5 (e.g. the GPU's) for the pass's
// attention lines (Architecture::forward's hook; then those lines are untraced).
FillResult fill_masks(const Tokens& x, const Model& m, double tau, uint64_t seed, int top_k, Tracer* tr = nullptr,
                      const MHAttentionFn<float>& attn = {});

}  // namespace sf
