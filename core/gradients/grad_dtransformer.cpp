// Forward and backward of Algorithm 10, P ← DTransformer(x | θ), over a batch of sequences,
// with the loss of Algorithm 13 line 5. The backward runs the forward's lines in mirrored
// order (11, 10, then 8, 7, 6, 5 for l = L … 1, then 2).
//   L2:  for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t]        L3: X ← [e_1, e_2, … e_ℓ]
//   L4:  for l = 1, 2, …, L do
//   L5:    for t ∈ [ℓ]: X̃[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)
//   L6:    X ← X + MHAttention(X̃ | W_l, Mask[t, t′] = [[t ≤ t′]])
//   L7:    for t ∈ [ℓ]: X̃[:, t] ← layer_norm(X[:, t] | γ²_l, β²_l)
//   L8:    X ← X + W^l_mlp2 GELU(W^l_mlp1 X̃ + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
//   L10: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)
//   L11: return P = softmax(W_u X)
// Variants (docs/variants.md) through layer_forward / layer_backward and the blocks: post-LN (GPT-1:
// no line 10), RMSNorm, positions, activations, tied W_u = W_eᵀ, H_kv < H, the prefix-LM mask; and
// the ecosystem extras (not in the paper): line 2's W_s[:, 1] and embedding layer norm, line 11's b_u.
#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"
#include "core/gradients/grad.hpp"

namespace sf {

int Batch::n_targets() const {
  int n = 0;
  for (int y : targets) n += y != 0;
  return n;
}

int Batch::real_tokens() const {
  int n = 0;
  for (int len : lengths) n += len;
  return n;
}

void pad_sequences(const std::vector<const Tokens*>& xs, int l, int pad, const char* side, Tokens& tokens,
                   std::vector<int>& lengths) {
  const size_t B = xs.size();
  tokens.assign(B * l, pad);
  lengths.resize(B);
  for (size_t i = 0; i < B; ++i) {
    const Tokens& x = *xs[i];
    if (x.empty() || static_cast<int>(x.size()) > l)
      throw Error(std::string(side) + " has " + std::to_string(x.size()) + " tokens; it must have 1 to " +
                  std::to_string(l));
    std::copy(x.begin(), x.end(), tokens.begin() + i * l);
    lengths[i] = static_cast<int>(x.size());
  }
}

void make_batch(const std::vector<Tokens>& xs, const std::vector<size_t>& pick, int l, int pad, Batch& b) {
  std::vector<const Tokens*> seqs;
  for (size_t i : pick) seqs.push_back(&xs.at(i));
  b.B = static_cast<int>(pick.size());
  b.l = l;
  pad_sequences(seqs, l, pad, "a training sequence", b.tokens, b.lengths);
  next_token_targets(b);
  b.l_z = 0;
  b.z_tokens.clear();
  b.z_lengths.clear();
}

void next_token_targets(Batch& b) {
  // Algorithms 11 and 13, line 5: position t of sequence b predicts x_b[t+1], t = 1 … ℓ_b − 1.
  b.targets.assign(b.tokens.size(), 0);
  for (int s = 0; s < b.B; ++s)
    for (int t = 0; t + 1 < b.lengths[s]; ++t)
      b.targets[static_cast<size_t>(s) * b.l + t] = b.tokens[static_cast<size_t>(s) * b.l + t + 1];
}

Batch make_batch(const std::vector<Tokens>& xs, int l, int pad) {
  std::vector<size_t> all(xs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  Batch b;
  make_batch(xs, all, l, pad, b);
  return b;
}

Mask prefix_masks(const Batch& b, const ModelConfig& c) {
  Mask m(b.l, static_cast<Eigen::Index>(b.B) * b.l);  // (ℓ, B·ℓ)
  for (int s = 0; s < b.B; ++s) {
    const auto first = b.tokens.begin() + static_cast<std::ptrdiff_t>(s) * b.l;
    const int p = prefix_position(Tokens(first, first + b.lengths[s]), c);  // p_b of the real tokens
    // Mask_b[t_z, t_x] = [[t_z ≤ max(t_x, p_b)]]
    m.middleCols(static_cast<Eigen::Index>(s) * b.l, b.l) = windowed(prefix_mask(b.l, p), c.window);  // (window: ∧ |t_z − t_x| ≤ w)
  }
  return m;
}

template <class T>
T dtransformer_forward(const ModelConfig& c, const GptW<const T>& W, const Batch& batch, T loss_weight,
                       GptCache<T>& cache) {
  const int B = batch.B, l = batch.l;
  if (B < 1 || l < 1 || l > c.l_max || static_cast<int>(batch.tokens.size()) != B * l ||
      static_cast<int>(batch.lengths.size()) != B)
    throw Error("a batch must hold B ≥ 1 sequences of 1 to ℓ_max = " + std::to_string(c.l_max) +
                " tokens, with their lengths");
  for (int id : batch.tokens)
    if (id < 1 || id > c.N_V())
      throw Error("token id " + std::to_string(id) + " is outside [1, N_V] = [1, " + std::to_string(c.N_V()) + "]");
  const LayerSpec spec = layer_spec(c);
  const Eigen::Index N = static_cast<Eigen::Index>(B) * l;
  cache.B = B;
  cache.l = l;
  cache.tokens = batch.tokens;
  cache.lengths = batch.lengths;  // (B) key padding (the causal mask hides it already; the prefix mask too)
  if (c.mask == MaskKind::Prefix)
    cache.mask = prefix_masks(batch, c);  // (ℓ, B·ℓ) [[t_z ≤ max(t_x, p_b)]] (variant)
  else if (cache.mask.rows() != l || cache.mask.cols() != l)
    cache.mask = windowed(unidirectional_mask(l, l), c.window);  // (ℓ, ℓ) Mask[t, t′] = [[t ≤ t′]] (window: ∧ t′ − w ≤ t)
  cache.layers.resize(c.L);

  // The loss terms: the batch's targets (position t of sequence b predicts x_b[t+1]).
  if (batch.targets.size() != batch.tokens.size()) throw Error("a batch needs one target per position");
  cache.targets = batch.targets;  // (N)
  cache.weights.resize(N);        // (N)
  for (Eigen::Index k = 0; k < N; ++k) cache.weights(k) = cache.targets[k] ? loss_weight : T(0);

  // L2: for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t];  L3: X ← [e_1, e_2, … e_ℓ]
  embedding_forward<T>(batch.tokens, l, W.W_e, positions_for<T>(c, W.W_p, cache.W_p), cache.X);  // (d_e, N)
  embedding_extras_forward<T>(c, W.extras, cache.extras, cache.X);  // not in the paper: + W_s[:, 1], layer_norm
  // L4: for l = 1, 2, …, L do   L5–L8 (pre-LN; GPT-1's post-LN is a variant)
  for (int layer = 0; layer < c.L; ++layer)
    layer_forward<T>(spec, W.layers[layer], B, l, cache.mask, &cache.lengths, cache.layers[layer], cache.X);
  if (spec.position == NormPosition::Pre) {
    // L10: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)
    layer_norm_forward<T>(cache.X, W.gamma, W.beta, static_cast<T>(c.eps), cache.ln_f, cache.X_f, c.norm);
  } else {
    cache.X_f = cache.X;  // post-LN (GPT-1): no line 10, the last layer ends with its norm
  }
  // L11: return P = softmax(W_u X) (tied: W_u = W_eᵀ; + b_u 1ᵀ, not in the paper), then Alg. 13 L5:
  //      loss = Σ_t w_t · (−log P[x[t+1], t])
  return loss_forward<T>(cache.X_f, unembedding_for<T>(W.W_u, W.W_e, cache.W_u), W.extras.b_u, cache.targets,
                         cache.weights, cache.loss);
}

template <class T>
void dtransformer_backward(const ModelConfig& c, const GptW<const T>& W, const GptCache<T>& cache,
                           GptWorkspace<T>& ws, GptW<T>& dW, ResidualGradients<T>* kept) {
  const LayerSpec spec = layer_spec(c);
  const Eigen::Index d_e = cache.X_f.rows(), N = cache.X_f.cols();
  ws.dX_f.resize(d_e, N);  // (d_e, N)
  // ∂ of Alg. 13 L5 and of L11: P = softmax(W_u X)
  loss_backward<T>(cache.X_f, unembedding_used<T>(W.W_u, cache.W_u), cache.targets,
                   cache.weights, cache.loss, ws.dlogits, unembedding_gradient<T>(dW.W_u, dW.W_e, ws.dW_u),
                   dW.extras.b_u, ws.dX_f);
  if (spec.position == NormPosition::Pre) {
    // ∂ of L10: X[:, t] ← layer_norm(X[:, t] | γ, β)
    ws.s.dX.setZero(d_e, N);  // (d_e, N)
    layer_norm_backward<T>(ws.dX_f, W.gamma, cache.ln_f, ws.s.dX, dW.gamma, dW.beta);
  } else {
    ws.s.dX = ws.dX_f;  // post-LN: no line 10
  }
  const int L = static_cast<int>(cache.layers.size());
  if (kept) kept->X.assign(L + 1, Mat<T>());
  if (kept) kept->X[L] = ws.s.dX;  // after layer L
  // ∂ of L4's loop body, for l = L, …, 1
  for (int layer = L - 1; layer >= 0; --layer) {
    layer_backward<T>(spec, W.layers[layer], cache.B, cache.l, cache.layers[layer], ws.s, ws.mlp, ws.attn,
                      dW.layers[layer]);
    if (kept) kept->X[layer] = ws.s.dX;  // as X enters layer `layer` + 1
  }
  // ∂ of line 2's extras (not in the paper): layer_norm(e_t | γ_emb, β_emb), e_t + W_s[:, 1]
  embedding_extras_backward<T>(c, W.extras, cache.extras, ws.s.dX, ws.dE, dW.extras.emb_gamma, dW.extras.emb_beta,
                               dW.extras.W_s);
  // ∂ of L2: e_t ← W_e[:, x[t]] + W_p[:, t]   (no gradient for a W_p that is not trained)
  embedding_backward<T>(cache.tokens, cache.l, ws.s.dX, dW.W_e, dW.W_p);
  add_tied_gradient<T>(dW.W_u, ws.dW_u, dW.W_e);
}

template <class T>
GptGradient<T>::GptGradient(const ParamTable& table) : grad(table.total(), T(0)), dW(bind_gpt<T>(table, grad.data())) {}

template <class T>
T GptGradient<T>::loss_and_gradient(const ModelConfig& c, const GptW<const T>& W, const Batch& batch, T loss_weight) {
  const T loss = dtransformer_forward<T>(c, W, batch, loss_weight, cache);
  dtransformer_backward<T>(c, W, cache, ws, dW);
  return loss;
}

template struct GptGradient<float>;
template struct GptGradient<double>;
template float dtransformer_forward<float>(const ModelConfig&, const GptW<const float>&, const Batch&, float,
                                           GptCache<float>&);
template double dtransformer_forward<double>(const ModelConfig&, const GptW<const double>&, const Batch&, double,
                                             GptCache<double>&);
template void dtransformer_backward<float>(const ModelConfig&, const GptW<const float>&, const GptCache<float>&,
                                           GptWorkspace<float>&, GptW<float>&, ResidualGradients<float>*);
template void dtransformer_backward<double>(const ModelConfig&, const GptW<const double>&, const GptCache<double>&,
                                            GptWorkspace<double>&, GptW<double>&, ResidualGradients<double>*);

}  // namespace sf
