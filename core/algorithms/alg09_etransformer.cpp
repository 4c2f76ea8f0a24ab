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
// Every variant of docs/variants.md is computed from the configuration (variant_layers.hpp).
#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/variant_layers.hpp"
#include "core/trace/value_keys.hpp"

namespace sf {

namespace {

// The paper prints W_u ∈ ℝ^{N_V×d_e}, but after line 10 X ∈ ℝ^{d_f×ℓ}, so W_u X needs d_f columns.
const char* const kWuNote =
    "The paper prints W_u ∈ ℝ^{N_V×d_e}, a slip: after line 10, X ∈ ℝ^{d_f×ℓ}, so W_u must be N_V×d_f "
    "(as here). The two agree only when d_f = d_e.";

}  // namespace

template <class T>
Mat<T> etransformer(const Tokens& x, const ModelConfig& c, const BertW<const T>& W, Tracer* tr,
                    const MHAttentionFn<T>& attn, const Patches* patches) {
  using namespace variant_layers;
  check_tokens(x, c);
  const bool tied = W.W_u.size() == 0;
  TraceFrame frame(
      tr, 9,
      tr ? std::vector<Value>{ttokens("x", x), tparam<T>(tr, "W_e", W.W_e, Axis::Feature, Axis::Vocab), tparam<T>(tr, "W_p", W.W_p),
                              tparam<T>(tr, "W_f", W.W_f), tparam<T>(tr, "b_f", W.b_f), tparam<T>(tr, "γ", W.gamma), tparam<T>(tr, "β", W.beta),
                              tied ? tparam<T>(tr, keys::tied_unembedding, W.W_e, true)
                                   : with_note(tparam<T>(tr, "W_u", W.W_u, Axis::Vocab, Axis::Feature), kWuNote)}
         : std::vector<Value>{});
  if (tr) tr->trace().tokens_x = x;

  // L1: ℓ ← length(x)
  const int l = static_cast<int>(x.size());
  if (tr) tr->line(lines::e_transformer::l, {tscalar("ℓ", l)});
  // L2: for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t]
  //     (not in the paper, BERT checkpoints' extras when configured: + W_s[:, 1], then layer_norm(e_t | γ_emb, β_emb))
  Mat<T> X = embed_line<T>(x, c, W.W_e, W.W_p, W.extras, tr, lines::e_transformer::embed, Axis::TokenX);  // (d_e, ℓ): column t is e_t
  return etransformer_layers<T>(std::move(X), c, W, tr, attn, patches);
}

template <class T>
Mat<T> etransformer_layers(Mat<T> X, const ModelConfig& c, const BertW<const T>& W, Tracer* tr,
                           const MHAttentionFn<T>& attn, const Patches* patches) {
  using namespace variant_layers;
  const int l = static_cast<int>(X.cols());
  const bool tied = W.W_u.size() == 0;
  // L3: X ← [e_1, e_2, … e_ℓ]
  const PatchSite run{patches};
  patch(run, lines::e_transformer::X, "X", X);  // patch point: X of line 3, layer 1's input
  if (tr) tr->line(lines::e_transformer::X, {tv("X", X, Axis::Feature, Axis::TokenX)});
  const Mask mask = windowed(bidirectional_mask(l, l), c.window);  // (ℓ, ℓ) Mask ≡ 1 (sliding window: [[|t − t′| ≤ w]])
  const AttentionOptions av = attention_options(c, true);
  // Pre-LN (a variant, seed 004) runs lines 5–8 as X̃ ← norm(X | γ¹), X ← X + MHA(X̃), X̃ ← norm(X | γ²),
  // X ← X + MLP(X̃); post-LN (the paper) as printed: residual_line_pair writes either order.
  // L4: for l = 1, 2, …, L do
  for (int layer = 1; layer <= c.L; ++layer) {
    TraceIndex il(tr, &Indices::l, layer);
    const LayerW<const T>& Wl = W.layers[layer - 1];
    const PatchSite site = run.at({}, layer, 0);  // patch points of the lines of layer l
    if (tr) tr->line(lines::e_transformer::loop, {tscalar("l", layer)});
    // L5: X ← X + MHAttention(X | W_l, Mask ≡ 1)
    // L6: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)
    residual_line_pair<T>(X, c, Wl.gamma1, Wl.beta1, tr, lines::e_transformer::attention, "X", "X̃", Axis::TokenX, site,
                          [&](Mat<T>& Xr, const Mat<T>& in, const std::string&, LineRef line) {
                            AttentionOptions a = av;  // Algorithm 4's patch points, called from this line (experiments
                            a.patch = run.at(line, layer, 0);  // run on core's MHAttention, never on `attn`)
                            Xr += attn && !patches ? attn(in, in, Wl.attn, mask, a) : mh_attention<T>(in, in, Wl.attn, mask, tr, nullptr, a);
                            patch(site, line, "X", Xr);  // patch point: X after the attention line
                            if (tr) tr->line(line, {tmask("Mask", mask, Axis::TokenZ, Axis::TokenX), tv("X", Xr, Axis::Feature, Axis::TokenX)});
                          });
    // L7: X ← X + W^l_mlp2 GELU(W^l_mlp1 X + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
    // L8: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ²_l, β²_l)
    residual_line_pair<T>(X, c, Wl.gamma2, Wl.beta2, tr, lines::e_transformer::mlp, "X", "X̃", Axis::TokenX, site,
                          [&](Mat<T>& Xr, const Mat<T>& in, const std::string& in_name, LineRef line) {
                            mlp_line<T>(Xr, in, in_name, {Wl.W_mlp1, Wl.b_mlp1, Wl.W_mlp2, Wl.b_mlp2, Wl.W_gate, Wl.b_gate, "mlp1", "gate"},
                                        c.act(), tr, line, "X", Axis::TokenX, site);
                          });
  }
  // Pre-LN (variant, seed 004): the stack's final norm X ← norm(X | γ_enc, β_enc), traced as a
  // sub-step of line 10, before W_f.
  if (c.norm_pos() == NormPosition::Pre) {
    X = norm_columns<T>(X, W.enc_gamma, W.enc_beta, c, tr);
    if (tr) tr->substep(lines::e_transformer::final_gelu, "final norm (pre-LN variant)", {tv("X", X, Axis::Feature, Axis::TokenX)});
  }
  // L10: X ← GELU(W_f X + b_f 1ᵀ)   (the paper's GELU under every activation variant)
  const Mat<T> Fpre = (W.W_f * X).colwise() + W.b_f;  // (d_f, ℓ)
  if (tr) tr->substep(lines::e_transformer::final_gelu, "W_f X + b_f 1ᵀ", {tv("W_f X + b_f 1ᵀ", Fpre, Axis::Feature, Axis::TokenX)});
  X = gelu<T>(Fpre);  // (d_f, ℓ) from here on
  patch(run, lines::e_transformer::final_gelu, "X", X);  // patch point: X of line 10
  if (tr) tr->line(lines::e_transformer::final_gelu, {tv("X", X, Axis::Feature, Axis::TokenX)});
  // L11: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)   (γ, β ∈ ℝ^{d_f})
  X = norm_columns<T>(X, W.gamma, W.beta, c, tr);
  patch(run, lines::e_transformer::final_norm, "X", X);  // patch point: the layer norm's output, line 11
  if (tr) tr->line(lines::e_transformer::final_norm, {tv("X", X, Axis::Feature, Axis::TokenX)});
  // L12: return P = softmax(W_u X)   (W_u ∈ ℝ^{N_V×d_f}: kWuNote; tied: W_u = W_eᵀ, d_f = d_e;
  //      not in the paper, BERT checkpoints' masked-LM head with b_u: softmax(W_u X + b_u 1ᵀ))
  std::vector<Value> wu;
  if (tr && !tied) wu.push_back(with_note(tparam<T>(tr, "W_u", W.W_u, Axis::Vocab, Axis::Feature), kWuNote));
  return unembed_line<T>(X, W.W_u, W.W_e, W.extras.b_u, tr, lines::e_transformer::P, std::move(wu));  // (N_V, ℓ)
}

template Mat<float> etransformer(const Tokens&, const ModelConfig&, const BertW<const float>&, Tracer*,
                                 const MHAttentionFn<float>&, const Patches*);
template Mat<double> etransformer(const Tokens&, const ModelConfig&, const BertW<const double>&, Tracer*,
                                  const MHAttentionFn<double>&, const Patches*);
template Mat<float> etransformer_layers(Mat<float>, const ModelConfig&, const BertW<const float>&, Tracer*,
                                        const MHAttentionFn<float>&, const Patches*);
template Mat<double> etransformer_layers(Mat<double>, const ModelConfig&, const BertW<const double>&, Tracer*,
                                         const MHAttentionFn<double>&, const Patches*);

}  // namespace sf
