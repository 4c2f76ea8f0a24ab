// The backward of the embedding line of Algorithms 8, 9 and 10 ("for t ∈ [ℓ]: e_t ← W_e[:, x[t]] +
// W_p[:, t]", Algorithm 10 line 2), not in the paper: the ecosystem extras' adjoints first (they ran
// last), then per position t an Algorithm 1 adjoint frame and, for a learned W_p, an Algorithm 2 one.
#include "core/backprop/adjoints.hpp"

namespace sf {

template <class T>
void adjoint_embed_line(const ModelConfig& c, const Tokens& s, const ExtrasW<const T>& extras,
                        const EmbeddingExtrasCache<T>& cache, CView<T> dE, MapM<T>& dW_e, MapM<T>& dW_p,
                        ExtrasW<T>& dextras, Tracer* tr, int alg, int line) {
  const TraceBackward backward(tr);
  Mat<T> de = dE;  // (d_e, ℓ) ∇e_t, then ∇ of the sum before the extras
  if (c.embedding_norm) {
    // Not in the paper: adjoint of e_t ← layer_norm(e_t | γ_emb, β_emb) (Algorithm 6's adjoint per column)
    Mat<T> d_in = Mat<T>::Zero(de.rows(), de.cols());
    adjoint_norm_columns<T>(Norm::LayerNorm, static_cast<T>(c.eps), cache.E, cache.ln, extras.emb_gamma, de, d_in,
                            dextras.emb_gamma, dextras.emb_beta, tr);
    de.swap(d_in);
    if (tr)
      tr->substep(LineRef{alg, line}, "∇ of layer_norm(e_t | γ_emb, β_emb) — not in the paper: BERT checkpoints",
                  {tv(c.token_types > 0 ? "∇(e_t + W_s[:, 1])" : "∇e_t", de, Axis::Feature, Axis::TokenX),
                   tv("∇γ_emb", dextras.emb_gamma), tv("∇β_emb", dextras.emb_beta)});
  }
  if (c.token_types > 0) {
    // Not in the paper: adjoint of e_t ← e_t + W_s[:, 1] (every position reads column 1)
    dextras.W_s.col(0) += de.rowwise().sum();
    if (tr)
      tr->substep(LineRef{alg, line}, "∇W_s[:, 1] ← Σ_t ∇e_t — not in the paper: BERT checkpoints (token-type embedding)",
                  {tv("∇W_s[:, 1]", dextras.W_s.col(0))});
  }
  const bool learned = c.position == Position::Learned;
  for (int t = 1; t <= static_cast<int>(s.size()); ++t) {
    const TraceIndex it(tr, &Indices::t, t);
    adjoint_token_embedding<T>(s[t - 1], de.col(t - 1), dW_e, tr);                // W_e[:, x[t]], Algorithm 1
    if (learned) adjoint_positional_embedding<T>(t, de.col(t - 1), dW_p, tr);    // W_p[:, t], Algorithm 2
  }
}

#define SF_ADJOINT_EMBED_LINE(T)                                                                                  \
  template void adjoint_embed_line<T>(const ModelConfig&, const Tokens&, const ExtrasW<const T>&,                \
                                      const EmbeddingExtrasCache<T>&, CView<T>, MapM<T>&, MapM<T>&, ExtrasW<T>&, \
                                      Tracer*, int, int);
SF_ADJOINT_EMBED_LINE(float)
SF_ADJOINT_EMBED_LINE(double)
#undef SF_ADJOINT_EMBED_LINE

}  // namespace sf
