// Interpretation tools, not in the paper (issue 26 items 3 and 4): the logit lens (nostalgebraist
// 2020; TransformerLens, Ecco) and direct logit attribution (Elhage et al. 2021; TransformerLens's
// method). Both read the residual stream of a traced forward run (Algorithm 10, 9 or 8's decoder):
// they never run a forward pass of their own. docs/interpretation.md says what they compute.
//
// The residual stream X^l: the value X after layer l of the forward algorithm's layer loop (l = 1 … L),
// X^0 the embedding X of line 3 (Algorithm 8: line 12, the decoder's). Under post-LN X^l is after the
// layer's second norm; under pre-LN before any norm.
#pragma once
#include <string>
#include <vector>

#include "core/model/params.hpp"
#include "core/trace/trace.hpp"

namespace sf {

// The lens at every layer: P^l = softmax(W_u head(X^l) + b_u 1ᵀ), where head is what the forward
// algorithm does after its layer loop with the model's own weights:
//   Algorithm 10 (GPT):  the final norm (γ, β; RMSNorm when configured), none under post-LN;
//   Algorithm 9 (BERT):  the pre-LN stack norm (γ_enc, β_enc) if any, GELU(W_f X + b_f 1ᵀ), norm (γ, β);
//   Algorithm 8 (ED):    the decoder's pre-LN norm (γ_dec, β_dec) if any (encoder: not lensed).
// W_u is the model's own (W_eᵀ when tied), b_u only when the model has one (ecosystem checkpoints).
// At l = L it is the forward's P bit for bit (same helpers, same float inputs: tested).
struct LogitLens {
  int alg = 0;              // the forward algorithm: 10, 9 or 8
  std::vector<MatF> P;      // P[l], l = 0 … L: (N_V, ℓ_x); P[0] reads the embedding X^0
  MatF P_model;             // the forward algorithm's P (N_V, ℓ_x)
  Tokens x;                 // the sequence whose positions the columns are
  int layers() const { return static_cast<int>(P.size()) - 1; }
};

// A traced forward run of m on (z, x) (z ignored unless m's architecture reads a context), the trace
// it was read from kept for direct_logit_attribution.
struct LensRun {
  Trace trace;
  LogitLens lens;
};

// Runs m's forward algorithm traced, and the lens over its residual stream. Throws sf::Error on input
// the model cannot take (the forward algorithm's messages).
LensRun logit_lens(const Model& m, const Tokens& z, const Tokens& x);
// The lens over the residual stream of a trace of m's forward algorithm (one forward run, top level).
LogitLens logit_lens(const Model& m, const Trace& t);

// The residual stream X^l as the trace bound it, l = 0 … L: (d_e, ℓ_x). Throws sf::Error when the trace
// is not a forward run of m.
std::vector<MatF> residual_stream(const Model& m, const Trace& t);

// --- direct logit attribution ---
// One term of the logit W_u[y, :] X_f[:, t] + b_u[y] (X_f: the stream after the final norm).
struct DlaPart {
  enum class Kind { Embedding, Head, AttentionBias, Mlp, NormOffset, UnembeddingBias };
  Kind kind = Kind::Head;
  int l = 0, h = 0;     // the layer (1-based; 0: none) and the head (1-based; 0: none)
  LineRef line;         // the forward algorithm's line that wrote it into the stream (the norm's line for β)
  std::string label;    // for people, e.g. "L1 H2 (self)", "MLP 2", "β (final norm)", "b_u"
  double value = 0;     // its contribution to the logit
};

// The direct logit attribution of token y (1-based id) at position t (1-based) in a traced forward run:
// every norm on the stream after a part (the final norm; under post-LN each layer's two norms too) is
// frozen at the run, ê = γ ⊙ C(e)/σ + β with σ = √(v + ε) of the actual input (C: centring, none for
// RMSNorm), which is linear in e. So with u the readout W_u[y, :] carried back through the frozen norms,
//   logit = Σ parts u·(part) + Σ norms u·β + b_u[y]   (exactly, in real arithmetic),
// the parts being the direct path X^0[:, t], each head's W_o[:, head h's columns] Y^h[:, t], each
// attention's b_o and each MLP's output. Algorithm 9 (BERT) has no attribution: its head
// GELU(W_f X + b_f) is not linear (throws sf::Error saying so).
struct LogitAttribution {
  int t = 0, y = 0;
  double logit = 0;             // the forward's own logit (W_u X + b_u)[y, t], as the trace bound it
  std::vector<DlaPart> parts;   // in the stream's order: direct path, layer 1's parts …, norm offsets, b_u
  double sum() const;
};
LogitAttribution direct_logit_attribution(const Model& m, const Trace& t, int pos, int y);
// The same on a fresh traced forward run of (z, x); y = 0: the token the model predicts at pos.
LogitAttribution direct_logit_attribution(const Model& m, const Tokens& z, const Tokens& x, int pos, int y = 0);

// The token with the highest probability in column t (0-based) of P: 1-based id.
int top_token(const MatF& P, int t);
// The k most probable tokens of column t (0-based), most probable first: 1-based ids.
std::vector<int> top_tokens(const MatF& P, int t, int k);

}  // namespace sf
