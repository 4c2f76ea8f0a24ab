// Gradients of Algorithm 10 lines 2–3, the token and positional embeddings:
//   L2: for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t]      (Algorithms 1 and 2)
//   L3: X ← [e_1, e_2, … e_ℓ]
// over a batch: sequence b's token t is column b·ℓ + t − 1. Variants: no W_p (positions "rope",
// "alibi", "none": line 2 adds no position), or the fixed sinusoid of §5 ("sinusoidal"). Not in the
// paper (BERT checkpoints): after the sum, e_t ← e_t + W_s[:, 1], then e_t ← layer_norm(e_t | γ_emb, β_emb).
#include "core/gradients/grad.hpp"

namespace sf {

template <class T>
void embedding_forward(const Tokens& tokens, int l, CRef<T> W_e, CRef<T> W_p, Mat<T>& X) {
  const Eigen::Index N = static_cast<Eigen::Index>(tokens.size());
  X.resize(W_e.rows(), N);  // (d_e, B·ℓ)
  for (Eigen::Index n = 0; n < N; ++n) {
    const Eigen::Index t = n % l;  // 0-based position within its sequence
    // L2: e_t ← W_e[:, x[t]] + W_p[:, t]   (ids and positions 1-based; no W_p: no position)
    X.col(n) = W_e.col(tokens[n] - 1);
    if (W_p.size() != 0) X.col(n) += W_p.col(t);
  }
}

template <class T>
void embedding_backward(const Tokens& tokens, int l, CRef<T> dX, Ref<T> dW_e, Ref<T> dW_p) {
  // ∂ of L2: e_t ← W_e[:, x[t]] + W_p[:, t]: each column's gradient goes to the column of W_e
  // it was read from and to the column of W_p of its position (a token or position used k
  // times collects k gradients).
  // A W_p that is not trained (none, or the fixed sinusoid) has no gradient: dW_p is empty.
  const bool trained_positions = dW_p.size() != 0;
  dW_e.setZero();                         // (d_e, N_V)
  if (trained_positions) dW_p.setZero();  // (d_e, ℓ_max)
  for (Eigen::Index n = 0; n < static_cast<Eigen::Index>(tokens.size()); ++n) {
    dW_e.col(tokens[n] - 1) += dX.col(n);
    if (trained_positions) dW_p.col(n % l) += dX.col(n);
  }
}

template <class T>
void embedding_extras_forward(const ModelConfig& c, const ExtrasW<const T>& W, EmbeddingExtrasCache<T>& cache,
                              Mat<T>& X) {
  // e_t ← e_t + W_s[:, 1]   (token type: segment 0 for every token)
  if (c.token_types > 0) X.colwise() += W.W_s.col(0);  // (d_e, N)
  if (!c.embedding_norm) return;
  // e_t ← layer_norm(e_t | γ_emb, β_emb)   (always layer_norm: BERT's LayerNorm)
  cache.E = X;  // (d_e, N)
  layer_norm_forward<T>(cache.E, W.emb_gamma, W.emb_beta, static_cast<T>(c.eps), cache.ln, X);
}

template <class T>
void embedding_extras_backward(const ModelConfig& c, const ExtrasW<const T>& W, const EmbeddingExtrasCache<T>& cache,
                               Mat<T>& dX, Mat<T>& dE, Ref<T> dgamma, Ref<T> dbeta, Ref<T> dW_s) {
  if (c.embedding_norm) {
    // ∂ of e_t ← layer_norm(e_t | γ_emb, β_emb)
    dE.setZero(dX.rows(), dX.cols());  // (d_e, N)
    layer_norm_backward<T>(dX, W.emb_gamma, cache.ln, dE, dgamma, dbeta);
    dX.swap(dE);
  }
  if (c.token_types > 0) {
    // ∂ of e_t ← e_t + W_s[:, 1]: every column adds to W_s[:, 1]; the other segments are never used
    dW_s.setZero();                    // (d_e, token_types)
    dW_s.col(0) = dX.rowwise().sum();  // (d_e)
  }
}

template <class T>
Eigen::Ref<const Mat<T>> positions_for(const ModelConfig& c, const MapM<const T>& W_p, Mat<T>& fixed) {
  if (c.position == Position::Sinusoidal) {
    // Variant "sinusoidal" (§5; Vaswani et al. with position_base 10000): computed, never trained
    if (fixed.rows() != c.d_e || fixed.cols() != c.l_max)
      fixed = sinusoid_positions(c.d_e, c.l_max, c.sinusoid_base()).cast<T>();  // (d_e, ℓ_max)
    return fixed;
  }
  fixed.resize(0, 0);
  return W_p;  // learned (the paper), or empty: no position
}

template void embedding_forward<float>(const Tokens&, int, CRef<float>, CRef<float>, Mat<float>&);
template void embedding_forward<double>(const Tokens&, int, CRef<double>, CRef<double>, Mat<double>&);
template void embedding_backward<float>(const Tokens&, int, CRef<float>, Ref<float>, Ref<float>);
template void embedding_backward<double>(const Tokens&, int, CRef<double>, Ref<double>, Ref<double>);
#define SF_EMBEDDING_EXTRAS(T)                                                                                  \
  template void embedding_extras_forward<T>(const ModelConfig&, const ExtrasW<const T>&, EmbeddingExtrasCache<T>&,    \
                                            Mat<T>&);                                                                 \
  template void embedding_extras_backward<T>(const ModelConfig&, const ExtrasW<const T>&,                            \
                                             const EmbeddingExtrasCache<T>&, Mat<T>&, Mat<T>&, Ref<T>, Ref<T>, Ref<T>);
SF_EMBEDDING_EXTRAS(float)
SF_EMBEDDING_EXTRAS(double)
#undef SF_EMBEDDING_EXTRAS
template Eigen::Ref<const Mat<float>> positions_for<float>(const ModelConfig&, const MapM<const float>&, Mat<float>&);
template Eigen::Ref<const Mat<double>> positions_for<double>(const ModelConfig&, const MapM<const double>&,
                                                             Mat<double>&);

}  // namespace sf
