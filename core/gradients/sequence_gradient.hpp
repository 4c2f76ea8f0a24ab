// loss(θ) and ∇loss(θ) of ONE sequence, in double, with the residual stream's gradients: what
// stepformer-cli backward writes, for comparing with another implementation (torch autograd) entry
// by entry. It runs the batched gradients of this folder (the ones training uses) on a batch of one,
// with θ cast to double, the paper's SUMMED loss (loss_weight 1: training's mean divides by the
// number of loss terms instead) and ResidualGradients kept.
#pragma once
#include <vector>

#include "core/gradients/grad.hpp"
#include "core/model/params.hpp"

namespace sf {

// The loss of the paper's training algorithms for one sequence, as a batch of one:
//   GPT (Algorithm 13) and the encoder-decoder (Algorithm 11, with its context z): x[t+1] is the
//   target of position t = 1 … ℓ − 1 (every position: a prefix-LM model too);
Batch next_token_batch(const Tokens& z, const Tokens& x);
//   BERT (Algorithm 12): the input is x̃, x with mask_token at the 1-based `masks`, and x[t] is the
//   target of each t ∈ masks. Throws sf::Error for an empty x, a position outside [1, ℓ] or one
//   given twice.
Batch masked_batch(const Tokens& x, const std::vector<int>& masks, int mask_token);
//   the vision transformer (not in the paper; core/arch/vit.hpp): x is an 8×8 image (64 intensities)
//   and `label` its class id (class + 1), the target of the class token's column: loss = −log P[label, 1].
Batch image_batch(const Tokens& image, int label);

struct SequenceGradient {
  double loss = 0;           // Σ over the batch's targets t of −log P[target, t]
  std::vector<double> grad;  // (table.total()) ∇loss(θ) in θ's layout (ParamEntry::offset, column-major)
  // ∂loss/∂X (d_e, ℓ) as X enters layer l = 1 … L, and after layer L (ResidualGradients); for the
  // encoder-decoder the decoder's X (L_dec + 1) and the encoder's Z (L_enc + 1, (d_e, ℓ_z)).
  ResidualGradients<double> stream;
};

// Runs the model's architecture (its forward algorithm: 10, 9 or 8) on `batch` (one sequence) in
// double. Throws sf::Error on a batch the model cannot take.
SequenceGradient sequence_gradient(const Model& m, const Batch& batch);

}  // namespace sf
