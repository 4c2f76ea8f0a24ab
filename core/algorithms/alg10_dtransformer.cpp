// Algorithm 10: P ← DTransformer(x | θ)
//   /* GPT, a decoder-only transformer, forward pass */
//   Input: x ∈ V*, a sequence of token IDs.
//   Output: P ∈ (0,1)^{N_V×length(x)}, where the t-th column of P represents P̂_θ(x[t+1] | x[1:t]).
//   Hyperparameters: ℓ_max, L, H, d_e, d_mlp ∈ ℕ
//   Parameters: W_e, W_p; for l ∈ [L]: W_l (eq. 4), γ¹_l, β¹_l, γ²_l, β²_l ∈ ℝ^{d_e},
//               W^l_mlp1, b^l_mlp1, W^l_mlp2, b^l_mlp2; γ, β ∈ ℝ^{d_e}; W_u ∈ ℝ^{N_V×d_e}.
// This is pre-LN (GPT-2): layer_norm is applied before attention and before the MLP.
#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"

namespace sf {

void check_tokens(const Tokens& x, const ModelConfig& c) {
  if (x.empty()) throw Error("the input sequence is empty: DTransformer needs at least one token");
  if (static_cast<int>(x.size()) > c.l_max)
    throw Error("the input has " + std::to_string(x.size()) + " tokens but this model's ℓ_max is " +
                std::to_string(c.l_max) + ": shorten it to at most ℓ_max tokens");
  for (size_t t = 0; t < x.size(); ++t)
    if (x[t] < 1 || x[t] > c.N_V())
      throw Error("token " + std::to_string(t + 1) + " has id " + std::to_string(x[t]) + ", outside [1, N_V] = [1, " +
                  std::to_string(c.N_V()) + "]");
}

template <class T>
Mat<T> dtransformer(const Tokens& x, const ModelConfig& c, const GptW<const T>& W, Tracer* tr,
                    const MHAttentionFn<T>& attn) {
  check_tokens(x, c);
  TraceFrame frame(tr, 10,
                   tr ? std::vector<Value>{ttokens("x", x), tv("W_e", W.W_e, Axis::Feature, Axis::Vocab), tv("W_p", W.W_p),
                                           tv("γ", W.gamma), tv("β", W.beta), tv("W_u", W.W_u, Axis::Vocab, Axis::Feature)}
                      : std::vector<Value>{});
  if (tr) tr->trace().tokens_x = x;
  const T eps = static_cast<T>(c.eps);

  // L1: ℓ ← length(x)
  const int l = static_cast<int>(x.size());
  if (tr) tr->line(10, 1, {tscalar("ℓ", l)});
  // L2: for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t]
  Mat<T> X(c.d_e, l);  // (d_e, ℓ): column t is e_t
  for (int t = 1; t <= l; ++t) {
    TraceIndex it(tr, &Indices::t, t);
    const Vec<T> e = token_embedding<T>(x[t - 1], W.W_e, tr);  // W_e[:, x[t]], Algorithm 1
    X.col(t - 1) = e + positional_embedding<T>(t, W.W_p, tr);   // + W_p[:, t], Algorithm 2
  }
  if (tr) tr->line(10, 2, {tv("e_t", X, Axis::Feature, Axis::TokenX)});
  // L3: X ← [e_1, e_2, … e_ℓ]
  if (tr) tr->line(10, 3, {tv("X", X, Axis::Feature, Axis::TokenX)});
  const Mask mask = unidirectional_mask(l, l);  // Mask[t, t′] = [[t ≤ t′]]
  // L4: for l = 1, 2, …, L do
  for (int layer = 1; layer <= c.L; ++layer) {
    TraceIndex il(tr, &Indices::l, layer);
    const LayerW<const T>& Wl = W.layers[layer - 1];
    if (tr) tr->line(10, 4, {tscalar("l", layer)});
    // L5: for t ∈ [ℓ]: X̃[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)
    Mat<T> Xt = layer_norm_columns<T>(X, Wl.gamma1, Wl.beta1, eps, tr);  // (d_e, ℓ)
    if (tr) tr->line(10, 5, {tv("X̃", Xt, Axis::Feature, Axis::TokenX)});
    // L6: X ← X + MHAttention(X̃ | W_l, Mask[t, t′] = [[t ≤ t′]])
    X += attn ? attn(Xt, Xt, Wl.attn, mask) : mh_attention<T>(Xt, Xt, Wl.attn, mask, tr);
    if (tr) tr->line(10, 6, {tmask("Mask", mask, Axis::TokenZ, Axis::TokenX), tv("X", X, Axis::Feature, Axis::TokenX)});
    // L7: for t ∈ [ℓ]: X̃[:, t] ← layer_norm(X[:, t] | γ²_l, β²_l)
    Xt = layer_norm_columns<T>(X, Wl.gamma2, Wl.beta2, eps, tr);
    if (tr) tr->line(10, 7, {tv("X̃", Xt, Axis::Feature, Axis::TokenX)});
    // L8: X ← X + W^l_mlp2 GELU(W^l_mlp1 X̃ + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
    Mat<T> Hpre = (Wl.W_mlp1 * Xt).colwise() + Wl.b_mlp1;  // (d_mlp, ℓ)
    if (tr) tr->substep(10, 8, "W_mlp1 X̃ + b_mlp1 1ᵀ", {tv("W_mlp1 X̃ + b_mlp1 1ᵀ", Hpre, Axis::Feature, Axis::TokenX)});
    const Mat<T> Hact = gelu<T>(Hpre);  // (d_mlp, ℓ)
    if (tr) tr->substep(10, 8, "GELU(…)", {tv("GELU(…)", Hact, Axis::Feature, Axis::TokenX)});
    X.noalias() += Wl.W_mlp2 * Hact;
    X.colwise() += Wl.b_mlp2;
    if (tr) tr->line(10, 8, {tv("X", X, Axis::Feature, Axis::TokenX)});
  }
  // L10: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)
  X = layer_norm_columns<T>(X, W.gamma, W.beta, eps, tr);
  if (tr) tr->line(10, 10, {tv("X", X, Axis::Feature, Axis::TokenX)});
  // L11: return P = softmax(W_u X)
  const Mat<T> logits = W.W_u * X;  // (N_V, ℓ)
  if (tr) tr->substep(10, 11, "W_u X", {tv("W_u X", logits, Axis::Vocab, Axis::TokenX)});
  Mat<T> P = softmax_columns<T>(logits);  // (N_V, ℓ)
  if (tr) tr->line(10, 11, {tv("P", P, Axis::Vocab, Axis::TokenX)});
  return P;
}

template Mat<float> dtransformer(const Tokens&, const ModelConfig&, const GptW<const float>&, Tracer*,
                                 const MHAttentionFn<float>&);
template Mat<double> dtransformer(const Tokens&, const ModelConfig&, const GptW<const double>&, Tracer*,
                                  const MHAttentionFn<double>&);

}  // namespace sf
