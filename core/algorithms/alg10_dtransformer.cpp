// Algorithm 10: P ← DTransformer(x | θ)
//   /* GPT, a decoder-only transformer, forward pass */
//   Input: x ∈ V*, a sequence of token IDs.
//   Output: P ∈ (0,1)^{N_V×length(x)}, where the t-th column of P represents P̂_θ(x[t+1] | x[1:t]).
//   Hyperparameters: ℓ_max, L, H, d_e, d_mlp ∈ ℕ
//   Parameters: W_e, W_p; for l ∈ [L]: W_l (eq. 4), γ¹_l, β¹_l, γ²_l, β²_l ∈ ℝ^{d_e},
//               W^l_mlp1, b^l_mlp1, W^l_mlp2, b^l_mlp2; γ, β ∈ ℝ^{d_e}; W_u ∈ ℝ^{N_V×d_e}.
// This is pre-LN (GPT-2): layer_norm is applied before attention and before the MLP. Every variant of
// docs/variants.md is computed from the configuration (variant_layers.hpp); `attn` (the GPU)
// receives each call's variant.
#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/variant_layers.hpp"
#include "core/model/error.hpp"
#include "core/trace/value_keys.hpp"

namespace sf {

namespace {

const char* const kPrefixNote =
    "Prefix-LM mask (variant, encyclopedia article 004): p is the position of the first prefix_separator in x "
    "(0: none); Mask[t, t′] = [[t ≤ max(t′, p)]], bidirectional among the first p tokens.";

}  // namespace

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
                    const MHAttentionFn<T>& attn, const Patches* patches) {
  using namespace variant_layers;
  check_tokens(x, c);
  const bool tied = W.W_u.size() == 0;
  TraceFrame frame(tr, 10,
                   tr ? std::vector<Value>{ttokens("x", x), tparam<T>(tr, "W_e", W.W_e, Axis::Feature, Axis::Vocab), tparam<T>(tr, "W_p", W.W_p),
                                           tparam<T>(tr, "γ", W.gamma), tparam<T>(tr, "β", W.beta),
                                           tied ? tparam<T>(tr, keys::tied_unembedding, W.W_e, true)
                                                : tparam<T>(tr, "W_u", W.W_u, Axis::Vocab, Axis::Feature)}
                      : std::vector<Value>{});
  if (tr) tr->trace().tokens_x = x;

  // L1: ℓ ← length(x)
  const int l = static_cast<int>(x.size());
  if (tr) tr->line(lines::d_transformer::l, {tscalar("ℓ", l)});
  // L2: for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t]
  //     (not in the paper, BERT checkpoints' extras when configured: + W_s[:, 1], then layer_norm(e_t | γ_emb, β_emb))
  Mat<T> X = embed_line<T>(x, c, W.W_e, W.W_p, W.extras, tr, lines::d_transformer::embed, Axis::TokenX);  // (d_e, ℓ): column t is e_t
  // L3: X ← [e_1, e_2, … e_ℓ]
  const PatchSite run{patches};
  patch(run, lines::d_transformer::X, "X", X);  // patch point: X of line 3, layer 1's input
  if (tr) tr->line(lines::d_transformer::X, {tv("X", X, Axis::Feature, Axis::TokenX)});
  // Mask[t, t′] = [[t ≤ t′]], or the prefix-LM variant [[t ≤ max(t′, p)]]
  const int p = c.mask == MaskKind::Prefix ? prefix_position(x, c) : 0;
  //   (sliding-window variant: ∧ [[|t − t′| ≤ w]])
  const Mask mask = windowed(c.mask == MaskKind::Prefix ? prefix_mask(l, p) : unidirectional_mask(l, l), c.window);  // (ℓ, ℓ)
  const AttentionOptions av = attention_options(c, true);
  // Post-LN (GPT-1, a variant, seed 004) runs lines 5–8 as X ← X + MHA(X), norm γ¹, X ← X + MLP(X),
  // norm γ²; pre-LN (the paper) as printed: residual_line_pair writes either order.
  // L4: for l = 1, 2, …, L do
  for (int layer = 1; layer <= c.L; ++layer) {
    TraceIndex il(tr, &Indices::l, layer);
    const LayerW<const T>& Wl = W.layers[layer - 1];
    const PatchSite site = run.at({}, layer, 0);  // patch points of the lines of layer l
    if (tr) tr->line(lines::d_transformer::loop, {tscalar("l", layer)});
    // L5: for t ∈ [ℓ]: X̃[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)
    // L6: X ← X + MHAttention(X̃ | W_l, Mask[t, t′] = [[t ≤ t′]])
    residual_line_pair<T>(X, c, Wl.gamma1, Wl.beta1, tr, lines::d_transformer::norm1, "X", "X̃", Axis::TokenX, site,
                          [&](Mat<T>& Xr, const Mat<T>& in, const std::string&, LineRef line) {
                            AttentionOptions a = av;  // Algorithm 4's patch points, called from this line (experiments
                            a.patch = run.at(line, layer, 0);  // run on core's MHAttention, never on `attn`)
                            Xr += attn && !patches ? attn(in, in, Wl.attn, mask, a) : mh_attention<T>(in, in, Wl.attn, mask, tr, nullptr, a);
                            patch(site, line, "X", Xr);  // patch point: X after the attention line
                            if (!tr) return;
                            std::vector<Value> v{tmask("Mask", mask, Axis::TokenZ, Axis::TokenX), tv("X", Xr, Axis::Feature, Axis::TokenX)};
                            if (c.mask == MaskKind::Prefix)
                              v.push_back(with_note(tscalar("p", p), kPrefixNote));
                            tr->line(line, std::move(v));
                          });
    // L7: for t ∈ [ℓ]: X̃[:, t] ← layer_norm(X[:, t] | γ²_l, β²_l)
    // L8: X ← X + W^l_mlp2 GELU(W^l_mlp1 X̃ + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
    residual_line_pair<T>(X, c, Wl.gamma2, Wl.beta2, tr, lines::d_transformer::norm2, "X", "X̃", Axis::TokenX, site,
                          [&](Mat<T>& Xr, const Mat<T>& in, const std::string& in_name, LineRef line) {
                            mlp_line<T>(Xr, in, in_name, {Wl.W_mlp1, Wl.b_mlp1, Wl.W_mlp2, Wl.b_mlp2, Wl.W_gate, Wl.b_gate, "mlp1", "gate"},
                                        c.act(), tr, line, "X", Axis::TokenX, site);
                          });
  }
  // L10: for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)   (post-LN: no final norm, the line is skipped)
  if (c.norm_pos() == NormPosition::Pre) {
    X = norm_columns<T>(X, W.gamma, W.beta, c, tr);
    patch(run, lines::d_transformer::final_norm, "X", X);  // patch point: the final layer norm's output
    if (tr) tr->line(lines::d_transformer::final_norm, {tv("X", X, Axis::Feature, Axis::TokenX)});
  }
  // L11: return P = softmax(W_u X)   (tied: W_u = W_eᵀ; not in the paper, with b_u: softmax(W_u X + b_u 1ᵀ))
  return unembed_line<T>(X, W.W_u, W.W_e, W.extras.b_u, tr, lines::d_transformer::P);  // (N_V, ℓ)
}

template Mat<float> dtransformer(const Tokens&, const ModelConfig&, const GptW<const float>&, Tracer*,
                                 const MHAttentionFn<float>&, const Patches*);
template Mat<double> dtransformer(const Tokens&, const ModelConfig&, const GptW<const double>&, Tracer*,
                                  const MHAttentionFn<double>&, const Patches*);

}  // namespace sf
