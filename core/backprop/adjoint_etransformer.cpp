// Stepformer's backward listing of Algorithm 9 (ETransformer, BERT), traced — not in the paper.
// The adjoint of each forward line, in reverse order of the forward:
//   adjoint of Alg 12 L9:  ∇P[x[t], t] = −1/P[x[t], t] for t ∈ T̃: only masked positions carry loss
//   adjoint of L12: P = softmax(W_u X) (+ b_u 1ᵀ)   Algorithm 7's adjoint per column → ∇X, ∇W_u (∇b_u)
//   adjoint of L11: X[:, t] ← layer_norm(X[:, t] | γ, β)   Algorithm 6's adjoint per column → ∇X, ∇γ, ∇β
//   adjoint of L10: X ← GELU(W_f X + b_f 1ᵀ)   ∇(W_f X + b_f 1ᵀ) = ∇X ⊙ GELU′(W_f X + b_f 1ᵀ);
//                   ∇W_f = ∇(…) Xᵀ, ∇b_f = ∇(…) 1, ∇X = W_fᵀ ∇(…)   (pre-LN: then the stack's final norm)
//   for l = L, …, 1 (adjoint of L4):
//     adjoint of L8, L7 (post-LN: the norm's adjoint BEFORE the MLP's; pre-LN: the MLP's, then the norm's)
//     adjoint of L6, L5 (the same with Algorithm 5's adjoint, Mask ≡ 1: the gradient of the masked
//                       positions' columns spreads to every position through the bidirectional mask)
//   adjoint of L3, L2: the extras (embedding norm, W_s[:, 1]: not in the paper), Algorithms 1 and 2 per token.
#include <unsupported/Eigen/SpecialFunctions>

#include "core/backprop/arch_lines.hpp"
#include "core/gradients/grad_etransformer.hpp"

namespace sf {

namespace {

using namespace arch_adjoint;

// GELU′(x) = Φ(x) + x·φ(x), the exact erf form of line 10's GELU (the paper's, whatever the MLPs use).
template <class T>
Mat<T> gelu_derivative(const Mat<T>& X) {
  const auto x = X.array();
  return (T(0.5) * (T(1) + (x * T(0.70710678118654752440)).erf()) +
          x * (x.square() * T(-0.5)).exp() * T(0.39894228040143267794))
      .matrix();
}

// Pre-LN (variant): line 10's forward normalises X (γ_enc, β_enc) before W_f, and binds X on a sub-step
// and on the line; its adjoint's ∇ of the norm's output is named apart from the line's ∇X.
const char* const kNormOutputGrad = "∇X (final norm's output)";
const char* const kNormOutputNote =
    "Pre-LN (variant): ∇ of X after the stack's final norm γ_enc, β_enc (W_f's input), W_fᵀ ∇(W_f X + b_f 1ᵀ); "
    "the line's ∇X is of the norm's input, the last layer's output.";

// adjoint of L10 (and, pre-LN, of the stack's final norm, which the forward traces on it): dF holds
// ∂loss/∂GELU(W_f X + b_f 1ᵀ) in; g.dX is ∂loss/∂X of line 10's input (the last layer's output) out.
template <class T>
void final_gelu_adjoint(const ModelConfig& c, const BertW<const T>& W, const BertCache<T>& cache, BertW<T>& dW,
                        Mat<T>& dF, Stream<T>& g, Tracer* tr) {
  const LineRef L10 = lines::e_transformer::final_gelu;
  dF.array() *= gelu_derivative<T>(cache.F_pre).array();
  if (tr)
    tr->substep(L10.adjoint(), "∇(W_f X + b_f 1ᵀ) ← ∇X ⊙ GELU′(W_f X + b_f 1ᵀ)",
                {tv("∇(W_f X + b_f 1ᵀ)", dF, Axis::Feature, Axis::TokenX)});
  dW.W_f.noalias() += dF * cache.X.transpose();  // (d_f, d_e)
  dW.b_f += dF.rowwise().sum();                  // (d_f)
  Mat<T> dX = W.W_f.transpose() * dF;            // (d_e, ℓ) ∇X of the final norm's output (pre-LN) or of layer L's
  std::vector<Value> values{tv("∇X", dX, Axis::Feature, Axis::TokenX), tv("∇W_f", dW.W_f), tv("∇b_f", dW.b_f)};
  g.dX = dX;
  if (c.norm_pos() == NormPosition::Pre) {
    // the stack's final norm (pre-LN variant): X ← norm(X | γ_enc, β_enc) before W_f. The sub-step's ∇X
    // is of the norm's output, the line's of its input: the partial gets its own name (one name, one value)
    if (tr) {
      values[0] = with_note(tv(kNormOutputGrad, dX, Axis::Feature, Axis::TokenX), kNormOutputNote);
      tr->substep(L10.adjoint(), std::string("∇W_f ← ∇(…) Xᵀ, ∇b_f ← ∇(…) 1, ") + kNormOutputGrad + " ← W_fᵀ ∇(…)",
                  values);
    }
    g.dX.setZero();
    adjoint_norm_columns<T>(c.norm, static_cast<T>(c.eps), cache.X_stack, cache.ln_enc, W.enc_gamma, dX, g.dX,
                            dW.enc_gamma, dW.enc_beta, tr);
    values = norm_values("∇X", g.dX, Axis::TokenX, "∇γ_enc", dW.enc_gamma, "∇β_enc", dW.enc_beta);
    values[0] = with_note(std::move(values[0]),
                          "Pre-LN (variant): ∇X of the last layer's output, through the stack's final norm γ_enc, β_enc.");
    values.insert(values.begin() + 1, {tv("∇W_f", dW.W_f), tv("∇b_f", dW.b_f)});
  }
  if (tr) tr->line(L10.adjoint(), std::move(values));
}

}  // namespace

template <class T>
void adjoint_etransformer(const ModelConfig& c, const BertW<const T>& W, const BertCache<T>& cache, BertW<T>& dW,
                          ResidualGradients<T>* kept, Tracer* tr) {
  namespace e = lines::e_transformer;
  const int L = static_cast<int>(cache.layers.size());
  const TraceBackward backward(tr);
  const T loss = cache.weights.dot(cache.loss.losses);  // −Σ_{t ∈ T̃} log P[x[t], t] (weights 1 and 0)
  TraceFrame frame(tr, 9,
                   tr ? std::vector<Value>{ttokens("x", cache.tokens), tv("P", cache.loss.P, Axis::Vocab, Axis::TokenX),
                                           tscalar("loss", static_cast<double>(loss))}
                      : std::vector<Value>{});
  // adjoint of Alg 12 L9: loss(θ) = −Σ_{t ∈ T̃} log P(θ)[x_n[t], t]
  const Mat<T> dP = adjoint_masked_lm_loss<T>(cache.loss.P, cache.targets, loss, tr);
  // adjoint of L12: P = softmax(W_u X)   (tied: W_u = W_eᵀ; + b_u 1ᵀ, not in the paper)
  Mat<T> dXf;  // (d_f, ℓ)
  unembed_line_adjoint<T>(cache.X_f, cache.loss.P, dP, W.W_u, cache.W_u, dW.W_u, dW.W_e, dW.extras.b_u, dXf, tr,
                          e::P.alg, e::P.line);
  // adjoint of L11: X[:, t] ← layer_norm(X[:, t] | γ, β)
  Mat<T> dF = Mat<T>::Zero(dXf.rows(), dXf.cols());  // (d_f, ℓ) ∂loss/∂GELU(W_f X + b_f 1ᵀ)
  adjoint_norm_columns<T>(c.norm, static_cast<T>(c.eps), cache.F_act, cache.ln_f, W.gamma, dXf, dF, dW.gamma, dW.beta, tr);
  if (tr)
    tr->line(e::final_norm.adjoint(), norm_values("∇X", dF, Axis::TokenX, "∇γ", dW.gamma, "∇β", dW.beta));
  // adjoint of L10: X ← GELU(W_f X + b_f 1ᵀ)
  Stream<T> g;
  final_gelu_adjoint<T>(c, W, cache, dW, dF, g, tr);
  if (kept) kept->X.assign(L + 1, Mat<T>());
  if (kept) kept->X[L] = g.dX;  // after layer L
  // adjoint of L4's body, for l = L, …, 1 (Mask ≡ 1)
  for (int layer = L; layer >= 1; --layer) {
    TraceIndex il(tr, &Indices::l, layer);
    if (tr) tr->line(e::loop.adjoint(), {tscalar("l", layer)});
    self_attention_layer_adjoint<T>(c, W.layers[layer - 1], cache.layers[layer - 1], dW.layers[layer - 1], cache.mask, g, tr,
                             {e::attention.alg, e::attention.line, "X", "X̃", Axis::TokenX});
    if (kept) kept->X[layer - 1] = g.dX;  // as X enters layer l
  }
  // adjoint of L3 and L2: e_t ← W_e[:, x[t]] + W_p[:, t] (with the extras, not in the paper)
  embed_lines_adjoint<T>(c, cache.tokens, W.extras, cache.extras, g.dX, dW.W_e, dW.W_p, dW.extras, tr, e::embed.alg,
                         e::embed.line, Axis::TokenX, "");
}

#define SF_ADJOINT_ETRANSFORMER(T)                                                                            \
  template void adjoint_etransformer<T>(const ModelConfig&, const BertW<const T>&, const BertCache<T>&, BertW<T>&, \
                                        ResidualGradients<T>*, Tracer*);
SF_ADJOINT_ETRANSFORMER(float)
SF_ADJOINT_ETRANSFORMER(double)
#undef SF_ADJOINT_ETRANSFORMER

}  // namespace sf
