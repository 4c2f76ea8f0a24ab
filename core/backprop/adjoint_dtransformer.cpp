// Stepformer's backward listing of Algorithm 10 (not in the paper): the adjoint of DTransformer, its
// lines in reverse, each the adjoint of the forward line with the same number:
//   5̄ of Alg. 13: ∇P ← the loss's adjoint
//   11̄: for t ∈ [ℓ]: Algorithm 7's adjoint (∇X, ∇W_u)       10̄: for t ∈ [ℓ]: Algorithm 6's adjoint (γ, β)
//   for l = L, …, 1 (4̄):
//     8̄: ∇X̃ ← the MLP's adjoint (∇X passes the residual unchanged)
//     7̄: ∇X ← ∇X + Algorithm 6's adjoint of ∇X̃ per column (γ²_l, β²_l)
//     6̄: ∇X̃ ← Algorithm 5's adjoint of ∇X (self-attention: ∇X + ∇Z); ∇X the residual's path (partial)
//     5̄: ∇X ← ∇X + Algorithm 6's adjoint of ∇X̃ per column (γ¹_l, β¹_l)
//   3̄: ∇e_t ← ∇X[:, t]        2̄: for t ∈ [ℓ]: Algorithms 1 and 2's adjoints (∇W_e, ∇W_p)
// Post-LN (GPT-1, a variant): each sub-layer's norm comes after its residual line, so 8̄ is the norm's
// adjoint and 7̄ the MLP's (6̄ and 5̄ likewise).
#include "core/backprop/arch_lines.hpp"
#include "core/model/error.hpp"
#include "core/trace/vocabulary.hpp"

namespace sf {

using namespace arch_adjoint;

template <class T>
void adjoint_dtransformer(const ModelConfig& c, const GptW<const T>& W, const GptCache<T>& cache, GptW<T>& dW,
                          ResidualGradients<T>* kept, Tracer* tr) {
  if (cache.B != 1) throw Error("the traced backward runs on one sequence (a batch of B = 1)");
  const TraceBackward backward(tr);
  const T loss = cache.weights.dot(cache.loss.losses);  // Σ_t w_t (−log P[y_t, t]), as the forward returned it
  TraceFrame frame(tr, 10,
                   tr ? std::vector<Value>{ttokens("x", cache.tokens), tv("P", cache.loss.P, Axis::Vocab, Axis::TokenX),
                                           tscalar("loss", loss)}
                      : std::vector<Value>{});
  const Eigen::Index d_e = cache.X_f.rows(), l = cache.X_f.cols();
  const int L = static_cast<int>(cache.layers.size());
  // Algorithm 13 line 5's adjoint: ∇P from the loss
  const Mat<T> dP = adjoint_loss<T>(cache.loss.P, cache.targets, loss, tr, lines::d_training::loss.adjoint());
  // Adjoint of L11: return P = softmax(W_u X)   (tied: W_u = W_eᵀ; + b_u 1ᵀ, not in the paper)
  namespace d = lines::d_transformer;
  Stream<T> g;  // ∇X, the residual stream's gradient from here down
  unembed_line_adjoint<T>(cache.X_f, cache.loss.P, dP, W.W_u, cache.W_u, dW.W_u, dW.W_e, dW.extras.b_u, g.dX, tr,
                          d::P.alg, d::P.line);
  // Adjoint of L10: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)   (post-LN: no line 10)
  if (c.norm_pos() == NormPosition::Pre) {
    Mat<T> dX_in = Mat<T>::Zero(d_e, l);
    adjoint_norm_columns<T>(c.norm, static_cast<T>(c.eps), cache.X, cache.ln_f, W.gamma, g.dX, dX_in, dW.gamma,
                            dW.beta, tr);
    g.dX.swap(dX_in);
    if (tr)
      tr->line(d::final_norm.adjoint(), norm_values("∇X", g.dX, Axis::TokenX, "∇γ", dW.gamma, "∇β", dW.beta));
  }
  if (kept) kept->X.assign(L + 1, Mat<T>());
  if (kept) kept->X[L] = g.dX;  // after layer L
  // Adjoint of L4: for l = L, …, 1 (lines 8, 7, 6, 5 of each)
  for (int layer = L; layer >= 1; --layer) {
    const TraceIndex il(tr, &Indices::l, layer);
    if (tr) tr->line(d::loop.adjoint(), {tscalar("l", layer)});
    self_attention_layer_adjoint<T>(c, W.layers[layer - 1], cache.layers[layer - 1], dW.layers[layer - 1], cache.mask,
                                    g, tr, {d::norm1.alg, d::norm1.line, "X", "X̃", Axis::TokenX});
    if (kept) kept->X[layer - 1] = g.dX;  // as X enters layer `layer`
  }
  // Adjoint of L3 and L2: e_t ← W_e[:, x[t]] + W_p[:, t]   (and the ecosystem extras)
  embed_lines_adjoint<T>(c, cache.tokens, W.extras, cache.extras, g.dX, dW.W_e, dW.W_p, dW.extras, tr, d::embed.alg,
                         d::embed.line, Axis::TokenX, "");
}

template void adjoint_dtransformer<float>(const ModelConfig&, const GptW<const float>&, const GptCache<float>&,
                                          GptW<float>&, ResidualGradients<float>*, Tracer*);
template void adjoint_dtransformer<double>(const ModelConfig&, const GptW<const double>&, const GptCache<double>&,
                                           GptW<double>&, ResidualGradients<double>*, Tracer*);

}  // namespace sf
