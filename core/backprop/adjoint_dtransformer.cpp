// Stepformer's backward listing of Algorithm 10 (not in the paper): the adjoint of DTransformer, its
// lines in reverse, each the adjoint of the forward line with the same number:
//   5̄ of Alg. 13: ∇P ← the loss's adjoint
//   11̄: for t ∈ [ℓ]: Algorithm 7's adjoint (∇X, ∇W_u)       10̄: for t ∈ [ℓ]: Algorithm 6's adjoint (γ, β)
//   for l = L, …, 1 (4̄):
//     8̄: ∇X̃ ← the MLP's adjoint (∇X passes the residual unchanged)
//     7̄: ∇X ← ∇X + Algorithm 6's adjoint of ∇X̃ per column (γ²_l, β²_l)
//     6̄: ∇X̃ ← Algorithm 5's adjoint of ∇X (self-attention: ∇X + ∇Z)
//     5̄: ∇X ← ∇X + Algorithm 6's adjoint of ∇X̃ per column (γ¹_l, β¹_l)
//   3̄: ∇e_t ← ∇X[:, t]        2̄: for t ∈ [ℓ]: Algorithms 1 and 2's adjoints (∇W_e, ∇W_p)
// Post-LN (GPT-1, a variant): each sub-layer's norm comes after its residual line, so 8̄ is the norm's
// adjoint and 7̄ the MLP's (6̄ and 5̄ likewise).
#include "core/backprop/adjoints.hpp"
#include "core/model/error.hpp"
#include "core/trace/vocabulary.hpp"

namespace sf {

namespace {

// The line event of a norm's adjoint: ∇ of the norm's input (the stream X) and the totals ∇γ^k_l, ∇β^k_l.
template <class T>
void norm_line(Tracer* tr, int alg, int line, const Mat<T>& dX, const MapV<T>& dgamma, const MapV<T>& dbeta,
               const std::string& k) {
  if (!tr) return;
  std::vector<Value> v{tv("∇X", dX, Axis::Feature, Axis::TokenX), tv("∇γ" + k, dgamma)};
  if (dbeta.size() != 0) v.push_back(tv("∇β" + k, dbeta));
  tr->line(LineRef{alg, line}, std::move(v));
}

// One residual sub-layer and its norm on lines `line` and `line + 1`, backward (dX: ∇X after the
// sub-layer in, before it out):
//   pre-LN:  adjoint of line + 1 (X ← X + f(X̃), f_adjoint emits it), then of line (X̃ ← norm(X));
//   post-LN: adjoint of line + 1 (X ← norm(X)), then of line (X ← X + f(X), f_adjoint emits it).
// f_adjoint(dY, in, din, in_name, line) ADDS ∇ of f's input into din given dY, ∇ of f's output.
template <class T, class F>
void adjoint_residual_pair(const ModelConfig& c, const SubLayerCache<T>& sc, const MapV<const T>& gamma,
                           MapV<T>& dgamma, MapV<T>& dbeta, const std::string& k, Mat<T>& dX, Tracer* tr, int alg,
                           int line, F&& f_adjoint) {
  const T eps = static_cast<T>(c.eps);
  if (sc.position == NormPosition::Pre) {
    Mat<T> dXt = Mat<T>::Zero(dX.rows(), dX.cols());  // ∇X̃
    f_adjoint(dX, sc.Xt, dXt, "X̃", line + 1);
    adjoint_norm_columns<T>(c.norm, eps, sc.X, sc.ln, gamma, dXt, dX, dgamma, dbeta, tr);
    norm_line<T>(tr, alg, line, dX, dgamma, dbeta, k);
    return;
  }
  Mat<T> dR = Mat<T>::Zero(dX.rows(), dX.cols());  // ∇ of X + f(X), the norm's input
  adjoint_norm_columns<T>(c.norm, eps, sc.R, sc.ln, gamma, dX, dR, dgamma, dbeta, tr);
  norm_line<T>(tr, alg, line + 1, dR, dgamma, dbeta, k);
  dX = dR;  // the residual passes ∇ on to X; f adds its path
  f_adjoint(dR, sc.X, dX, "X", line);
}

// Lines 5–8 of layer l, backward: the MLP sub-layer (7–8), then the self-attention (5–6).
template <class T>
void adjoint_layer(const ModelConfig& c, const LayerW<const T>& W, const LayerCache<T>& lc, const Mask& mask,
                   LayerW<T>& dW, Mat<T>& dX, Tracer* tr) {
  const MlpLineW<T> mlp_w{W.W_mlp1, W.W_mlp2, W.W_gate, W.b_mlp1, W.b_mlp2, W.b_gate};
  MlpLineGrad<T> mlp_g{dW.W_mlp1, dW.W_mlp2, dW.W_gate, dW.b_mlp1, dW.b_mlp2, dW.b_gate};
  adjoint_residual_pair<T>(c, lc.mlp_ln, W.gamma2, dW.gamma2, dW.beta2, "²_l", dX, tr, 10, 7,
                           [&](const Mat<T>& dY, const Mat<T>& in, Mat<T>& din, const char* in_name, int line) {
                             adjoint_mlp<T>({in, lc.mlp}, mlp_w, c.act(), dY, mlp_g, din, in_name, MlpNames{}, tr, 10,
                                            line);
                           });
  adjoint_residual_pair<T>(c, lc.attn_ln, W.gamma1, dW.gamma1, dW.beta1, "¹_l", dX, tr, 10, 5,
                           [&](const Mat<T>& dY, const Mat<T>& in, Mat<T>& din, const char* in_name, int line) {
                             const MHAttentionForward<T> f = self_attention_forward<T>(lc.attn, W.attn, in, mask);
                             adjoint_mh_attention<T>(f, W.attn, dY, dW.attn, din, din, tr);
                             if (tr) tr->line(LineRef{10, line}, {tv(std::string("∇") + in_name, din, Axis::Feature, Axis::TokenX)});
                           });
}

}  // namespace

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
  // Adjoint of L11: return P = softmax(W_u X)
  const bool tied = W.W_u.size() == 0, bias = W.extras.b_u.size() != 0;
  Mat<T> dX = Mat<T>::Zero(d_e, l);  // (d_e, ℓ) ∇X, the residual stream's gradient from here down
  adjoint_unembed_line<T>(cache.X_f, cache.loss.P, dP, unembedding_used<T>(W.W_u, cache.W_u), tied, bias, dW.W_u,
                          dW.W_e, dW.extras.b_u, dX, tr, 10, 11);
  // Adjoint of L10: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)   (post-LN: no line 10)
  if (c.norm_pos() == NormPosition::Pre) {
    Mat<T> dX_in = Mat<T>::Zero(d_e, l);
    adjoint_norm_columns<T>(c.norm, static_cast<T>(c.eps), cache.X, cache.ln_f, W.gamma, dX, dX_in, dW.gamma,
                            dW.beta, tr);
    dX.swap(dX_in);
    norm_line<T>(tr, 10, 10, dX, dW.gamma, dW.beta, "");
  }
  if (kept) kept->X.assign(L + 1, Mat<T>());
  if (kept) kept->X[L] = dX;  // after layer L
  // Adjoint of L4: for l = L, …, 1 (lines 8, 7, 6, 5 of each)
  for (int layer = L; layer >= 1; --layer) {
    const TraceIndex il(tr, &Indices::l, layer);
    if (tr) tr->line(lines::d_transformer::loop.adjoint(), {tscalar("l", layer)});
    adjoint_layer<T>(c, W.layers[layer - 1], cache.layers[layer - 1], cache.mask, dW.layers[layer - 1], dX, tr);
    if (kept) kept->X[layer - 1] = dX;  // as X enters layer `layer`
  }
  // Adjoint of L3: X ← [e_1, e_2, … e_ℓ]
  if (tr) tr->line(lines::d_transformer::X.adjoint(), {tv("∇e_t", dX, Axis::Feature, Axis::TokenX)});
  // Adjoint of L2: for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t]   (and the ecosystem extras)
  adjoint_embed_line<T>(c, cache.tokens, W.extras, cache.extras, dX, dW.W_e, dW.W_p, dW.extras, tr, 10, 2);
  if (!tr) return;
  // Notes: a tied W_e's gradient holds both uses; a W_p that is not trained has none (say why)
  const std::string no_wp = no_position_gradient_note(c);
  std::string note = tied ? "Tied (variant): ∇W_e also holds ∇W_uᵀ, the unembedding's use of W_e." : "";
  if (!no_wp.empty()) note += (note.empty() ? "" : " ") + no_wp;
  std::vector<Value> v{with_note(tv("∇W_e", dW.W_e, Axis::Feature, Axis::Vocab), note)};
  if (no_wp.empty()) v.push_back(tv("∇W_p", dW.W_p));
  if (c.embedding_norm) v.insert(v.end(), {tv("∇γ_emb", dW.extras.emb_gamma), tv("∇β_emb", dW.extras.emb_beta)});
  if (c.token_types > 0) v.push_back(tv("∇W_s", dW.extras.W_s));
  tr->line(lines::d_transformer::embed.adjoint(), std::move(v));
}

template void adjoint_dtransformer<float>(const ModelConfig&, const GptW<const float>&, const GptCache<float>&,
                                          GptW<float>&, ResidualGradients<float>*, Tracer*);
template void adjoint_dtransformer<double>(const ModelConfig&, const GptW<const double>&, const GptCache<double>&,
                                           GptW<double>&, ResidualGradients<double>*, Tracer*);

}  // namespace sf
