// Summaries of ONE sequence's gradient for the Inspector's "Gradient flow" tab (issue 24, item 4):
// how ∂loss/∂X spreads over the residual stream's layers and tokens, how large each attention
// head's ∇W_q, ∇W_k, ∇W_v are, and each input token's saliency. Not in the paper: the gradient of
// the training loss (Algorithms 11–13) for this one sequence, from sequence_gradient (double).
#pragma once
#include <string>
#include <vector>

#include "core/gradients/sequence_gradient.hpp"

namespace sf {

// ‖∂loss/∂X‖ of one residual stream (X, or the encoder-decoder's Z) at each layer boundary
// l = 1 … L+1 (1: entering layer 1, the embedding's output; L+1: after layer L).
struct StreamFlow {
  Mat<double> token_norms;                 // (L+1, ℓ): row l−1, column t−1 = ‖∂loss/∂X_l[:, t]‖₂
  std::vector<double> layer_norms;  // (L+1): ‖∂loss/∂X_l‖_F = √(Σ_t token_norms[l−1, t−1]²)
  bool empty() const { return layer_norms.empty(); }
};
// The norms of the gradients ∂loss/∂X_l (d_e, ℓ) of ResidualGradients.
StreamFlow stream_flow(const std::vector<Mat<double>>& grads);

// The Frobenius norms of one multi-head attention block's per-head gradients.
struct HeadGradNorms {
  std::string prefix;  // the block's checkpoint prefix, e.g. "layer2.attn.", "dec.layer1.cross_attn."
  std::string label;   // e.g. "layer 2", "decoder layer 1, cross-attention"
  int layer = 0;       // 1-based
  std::vector<double> q;     // (H)    ‖∇W_q^h‖_F, h = 1 … H
  std::vector<double> k, v;  // (H_kv) ‖∇W_k^g‖_F, ‖∇W_v^g‖_F of the key/value heads g = 1 … H_kv
};
// Every attention block of the table, in table order, from ∇θ in θ's layout.
std::vector<HeadGradNorms> head_gradient_norms(const ParamTable& table, const std::vector<double>& grad);

struct GradientFlow {
  double loss = 0;                  // the summed loss of the sequence (sequence_gradient)
  StreamFlow x;                     // GPT's, BERT's or the decoder's X
  StreamFlow z;                     // the encoder-decoder's encoder Z; empty otherwise
  std::vector<HeadGradNorms> heads;
  // Saliency of input token t: ‖∂loss/∂e_t‖, the column norms of ∂loss/∂X entering layer 1
  // (x.token_norms' first row; the encoder's tokens: z.token_norms' first row).
  std::vector<double> saliency() const;
  std::vector<double> saliency_z() const;
};

// sequence_gradient(m, batch) summarised. Throws sf::Error as it does.
GradientFlow gradient_flow(const Model& m, const Batch& batch);

}  // namespace sf
