// Algorithm 9: P ← ETransformer(x | θ)
//   /* BERT, an encoder-only transformer, forward pass */
//   Input: x ∈ V*, a sequence of token IDs.
//   Output: P ∈ (0,1)^{N_V×length(x)}, where each column of P is a distribution over the vocabulary.
//   Hyperparameters: ℓ_max, L, H, d_e, d_mlp, d_f ∈ ℕ
//   Parameters: W_e, W_p; for l ∈ [L]: W_l (eq. 4), γ¹_l, β¹_l, γ²_l, β²_l ∈ ℝ^{d_e},
//               W^l_mlp1, b^l_mlp1, W^l_mlp2, b^l_mlp2; W_f ∈ ℝ^{d_f×d_e}, b_f ∈ ℝ^{d_f},
//               γ, β ∈ ℝ^{d_f}, the final linear projection and layer-norm parameters;
//               W_u ∈ ℝ^{N_V×d_e} as printed, a slip: see kWuNote.
// This is post-LN (as in the original Transformer and BERT): layer_norm is applied AFTER each
// residual addition. Attention is bidirectional (Mask ≡ 1): every column of P sees every token.
#include "core/algorithms/algorithms.hpp"

namespace sf {

namespace {

// The paper prints W_u ∈ ℝ^{N_V×d_e}, but after line 10 X ∈ ℝ^{d_f×ℓ}, so W_u X needs d_f columns.
const char* const kWuNote =
    "The paper prints W_u ∈ ℝ^{N_V×d_e}, a slip: after line 10, X ∈ ℝ^{d_f×ℓ}, so W_u must be N_V×d_f "
    "(as here). The two agree only when d_f = d_e.";

}  // namespace

template <class T>
Mat<T> etransformer(const Tokens& x, const ModelConfig& c, const BertW<const T>& W, Tracer* tr,
                    const MHAttentionFn<T>& attn) {
  check_tokens(x, c);
  TraceFrame frame(
      tr, 9,
      tr ? std::vector<Value>{ttokens("x", x), tv("W_e", W.W_e, Axis::Feature, Axis::Vocab), tv("W_p", W.W_p),
                              tv("W_f", W.W_f), tv("b_f", W.b_f), tv("γ", W.gamma), tv("β", W.beta),
                              with_note(tv("W_u", W.W_u, Axis::Vocab, Axis::Feature), kWuNote)}
         : std::vector<Value>{});
  if (tr) tr->trace().tokens_x = x;
  const T eps = static_cast<T>(c.eps);

  // L1: ℓ ← length(x)
  const int l = static_cast<int>(x.size());
  if (tr) tr->line(9, 1, {tscalar("ℓ", l)});
  // L2: for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t]
  Mat<T> X(c.d_e, l);  // (d_e, ℓ): column t is e_t
  for (int t = 1; t <= l; ++t) {
    TraceIndex it(tr, &Indices::t, t);
    const Vec<T> e = token_embedding<T>(x[t - 1], W.W_e, tr);  // W_e[:, x[t]], Algorithm 1
    X.col(t - 1) = e + positional_embedding<T>(t, W.W_p, tr);   // + W_p[:, t], Algorithm 2
  }
  if (tr) tr->line(9, 2, {tv("e_t", X, Axis::Feature, Axis::TokenX)});
  // L3: X ← [e_1, e_2, … e_ℓ]
  if (tr) tr->line(9, 3, {tv("X", X, Axis::Feature, Axis::TokenX)});
  const Mask mask = bidirectional_mask(l, l);  // (ℓ, ℓ) Mask ≡ 1
  // L4: for l = 1, 2, …, L do
  for (int layer = 1; layer <= c.L; ++layer) {
    TraceIndex il(tr, &Indices::l, layer);
    const LayerW<const T>& Wl = W.layers[layer - 1];
    if (tr) tr->line(9, 4, {tscalar("l", layer)});
    // L5: X ← X + MHAttention(X | W_l, Mask ≡ 1)
    X += attn ? attn(X, X, Wl.attn, mask) : mh_attention<T>(X, X, Wl.attn, mask, tr);
    if (tr) tr->line(9, 5, {tmask("Mask", mask, Axis::TokenZ, Axis::TokenX), tv("X", X, Axis::Feature, Axis::TokenX)});
    // L6: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)
    X = layer_norm_columns<T>(X, Wl.gamma1, Wl.beta1, eps, tr);
    if (tr) tr->line(9, 6, {tv("X", X, Axis::Feature, Axis::TokenX)});
    // L7: X ← X + W^l_mlp2 GELU(W^l_mlp1 X + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
    const Mat<T> Hpre = (Wl.W_mlp1 * X).colwise() + Wl.b_mlp1;  // (d_mlp, ℓ)
    if (tr) tr->substep(9, 7, "W_mlp1 X + b_mlp1 1ᵀ", {tv("W_mlp1 X + b_mlp1 1ᵀ", Hpre, Axis::Feature, Axis::TokenX)});
    const Mat<T> Hact = gelu<T>(Hpre);  // (d_mlp, ℓ)
    if (tr) tr->substep(9, 7, "GELU(…)", {tv("GELU(…)", Hact, Axis::Feature, Axis::TokenX)});
    X.noalias() += Wl.W_mlp2 * Hact;
    X.colwise() += Wl.b_mlp2;
    if (tr) tr->line(9, 7, {tv("X", X, Axis::Feature, Axis::TokenX)});
    // L8: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ²_l, β²_l)
    X = layer_norm_columns<T>(X, Wl.gamma2, Wl.beta2, eps, tr);
    if (tr) tr->line(9, 8, {tv("X", X, Axis::Feature, Axis::TokenX)});
  }
  // L10: X ← GELU(W_f X + b_f 1ᵀ)
  const Mat<T> Fpre = (W.W_f * X).colwise() + W.b_f;  // (d_f, ℓ)
  if (tr) tr->substep(9, 10, "W_f X + b_f 1ᵀ", {tv("W_f X + b_f 1ᵀ", Fpre, Axis::Feature, Axis::TokenX)});
  X = gelu<T>(Fpre);  // (d_f, ℓ) from here on
  if (tr) tr->line(9, 10, {tv("X", X, Axis::Feature, Axis::TokenX)});
  // L11: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)   (γ, β ∈ ℝ^{d_f})
  X = layer_norm_columns<T>(X, W.gamma, W.beta, eps, tr);
  if (tr) tr->line(9, 11, {tv("X", X, Axis::Feature, Axis::TokenX)});
  // L12: return P = softmax(W_u X)   (W_u ∈ ℝ^{N_V×d_f}: kWuNote)
  const Mat<T> logits = W.W_u * X;  // (N_V, ℓ)
  if (tr) tr->substep(9, 12, "W_u X", {tv("W_u X", logits, Axis::Vocab, Axis::TokenX)});
  Mat<T> P = softmax_columns<T>(logits);  // (N_V, ℓ)
  if (tr)
    tr->line(9, 12, {tv("P", P, Axis::Vocab, Axis::TokenX),
                     with_note(tv("W_u", W.W_u, Axis::Vocab, Axis::Feature), kWuNote)});
  return P;
}

template Mat<float> etransformer(const Tokens&, const ModelConfig&, const BertW<const float>&, Tracer*,
                                 const MHAttentionFn<float>&);
template Mat<double> etransformer(const Tokens&, const ModelConfig&, const BertW<const double>&, Tracer*,
                                  const MHAttentionFn<double>&);

}  // namespace sf
