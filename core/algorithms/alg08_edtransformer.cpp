// Algorithm 8: P ← EDTransformer(z, x | θ)
//   /* Encoder-decoder transformer forward pass */
//   Input: z, x ∈ V*, two sequences of token IDs.
//   Output: P ∈ (0,1)^{N_V×length(x)}, where the t-th column of P represents P̂_θ(x[t+1] | x[1:t], z).
//   Hyperparameters: ℓ_max, L_enc, L_dec, H, d_e, d_mlp ∈ ℕ
//   Parameters: W_e ∈ ℝ^{d_e×N_V}, W_p ∈ ℝ^{d_e×ℓ_max}; for l ∈ [L_enc]: W^enc_l (eq. 4),
//               γ¹_l, β¹_l, γ²_l, β²_l ∈ ℝ^{d_e}, W^l_mlp1 ∈ ℝ^{d_mlp×d_e}, b^l_mlp1 ∈ ℝ^{d_mlp},
//               W^l_mlp2 ∈ ℝ^{d_e×d_mlp}, b^l_mlp2 ∈ ℝ^{d_e};
//               for l ∈ [L_dec]: W^dec_l, W^ed_l (eq. 4), γ³_l, β³_l, γ⁴_l, β⁴_l, γ⁵_l, β⁵_l ∈ ℝ^{d_e},
//               W^l_mlp3 ∈ ℝ^{d_mlp×d_e}, b^l_mlp3 ∈ ℝ^{d_mlp}, W^l_mlp4 ∈ ℝ^{d_e×d_mlp},
//               b^l_mlp4 ∈ ℝ^{d_e}; W_u ∈ ℝ^{N_V×d_e}.
// Post-LN: layer_norm follows each residual line. Every variant of docs/variants.md is computed from
// the configuration (variant_layers.hpp); pre-LN's final norms are traced on lines 9 and 20. One vocabulary (and one W_e, W_p) serves z and x.
// The encoder (lines 1–9) and the decoder (lines 10–21) are two functions, so that Algorithm 15
// can reuse Z (not in the paper, which re-encodes z at every step).
#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/variant_layers.hpp"
#include "core/arch/ed.hpp"
#include "core/model/error.hpp"
#include "core/trace/value_keys.hpp"

namespace sf {

namespace {

const char* kReusedZ =
    "Not in the paper: Z is the encoder's output from Algorithm 15's first pass, reused; lines 1–9 are skipped "
    "(the paper re-encodes z at every step).";
const char* kLoopSlip =
    "The paper's line 13 says \"for i = 1, 2, …, L_dec\" but the body uses l (a slip in the paper): the loop "
    "variable is l here.";

// "for t ∈ [ℓ]: e_t ← W_e[:, s[t]] + W_p[:, t]" (line 2 over z, line 11 over x), then the line
// that stacks the columns (line 3: Z, line 12: X). Returns (d_e, ℓ).
template <class T>
Mat<T> embed_lines(const Tokens& s, const ModelConfig& c, const EdW<const T>& W, Tracer* tr, LineRef line, const char* name,
                   Axis tokens, const PatchSite& run) {
  // (not in the paper, BERT checkpoints' extras when configured: + W_s[:, 1], then layer_norm(e_t | γ_emb, β_emb))
  Mat<T> E = variant_layers::embed_line<T>(s, c, W.W_e, W.W_p, W.extras, tr, line, tokens);  // (d_e, ℓ)
  patch(run, variant_layers::next_line(line), name, E);  // patch point: Z of line 3, X of line 12 (layer 1's input)
  if (tr) tr->line(variant_layers::next_line(line), {tv(name, E, Axis::Feature, tokens)});
  return E;
}

// "X ← X + MHAttention(in, C | W, Mask)" (lines 5, 14, 16; pre-LN: in = X̃): self-attention when C
// is null, cross-attention over C = Z (no RoPE, no ALiBi); `attn`, when set, computes either.
// Binds Mask and the new X. `site`: the patch points of this layer (experiments run on core's
// MHAttention, never on `attn`). Under the relative bias (variant) the encoder's line 5 uses T5's
// bidirectional buckets, the decoder's line 14 its causal ones (`tokens` names the stack).
template <class T>
void attention_line(Mat<T>& X, const Mat<T>& in, const Mat<T>* C, const MHAttentionW<const T>& W, const Mask& mask,
                    const ModelConfig& c, Tracer* tr, LineRef line, const char* name, Axis mask_rows, Axis tokens,
                    const MHAttentionFn<T>& attn, const PatchSite& site) {
  AttentionOptions av = attention_options(c, C == nullptr);
  if (tokens == Axis::TokenZ) av.rel_bidirectional = true;  // the encoder's line 5 (used only under the relative bias)
  av.patch = site.at(line, site.l, 0);  // Algorithm 4's patch points, called from this line
  const Mat<T>& context = C ? *C : in;  // (d_e, ℓ_z) or the input itself
  X += attn && !site.patches ? attn(in, context, W, mask, av) : mh_attention<T>(in, context, W, mask, tr, nullptr, av);
  patch(site, line, name, X);  // patch point: the residual stream after the attention line
  if (tr) tr->line(line, {tmask("Mask", mask, mask_rows, tokens), tv(name, X, Axis::Feature, tokens)});
}

// The stack's final norm under pre-LN (variant, seed 004), traced on `line` (9: "end; Z ← norm(Z |
// γ_enc, β_enc)", 20: "end; X ← norm(X | γ_dec, β_dec)"). Post-LN: nothing.
template <class T>
void final_norm_line(Mat<T>& X, const MapV<const T>& gamma, const MapV<const T>& beta, const ModelConfig& c, Tracer* tr,
                     LineRef line, const char* name, Axis tokens, const PatchSite& run) {
  if (c.norm_pos() != NormPosition::Pre) return;
  X = norm_columns<T>(X, gamma, beta, c, tr);  // (d_e, ℓ)
  patch(run, line, name, X);  // patch point: the stack's final norm
  if (tr) tr->line(line, {tv(name, X, Axis::Feature, tokens)});
}

// Lines 1–9: the encoder. Returns Z (d_e, ℓ_z).
template <class T>
Mat<T> encode(const Tokens& z, const ModelConfig& c, const EdW<const T>& W, Tracer* tr, const MHAttentionFn<T>& attn,
              const PatchSite& run) {
  using variant_layers::residual_line_pair;
  TraceSequences labels(tr, z, z);  // every token axis of the encoder is z's
  // L1: ℓ_z ← length(z)
  const int l_z = static_cast<int>(z.size());
  if (tr) tr->line(lines::ed_transformer::l_z, {tscalar("ℓ_z", l_z)});
  // L2: for t ∈ [ℓ_z]: e_t ← W_e[:, z[t]] + W_p[:, t]
  // L3: Z ← [e_1, e_2, … e_{ℓ_z}]
  Mat<T> Z = embed_lines<T>(z, c, W, tr, lines::ed_transformer::enc_embed, "Z", Axis::TokenZ, run);  // (d_e, ℓ_z)
  const Mask ones = windowed(bidirectional_mask(l_z, l_z), c.window);  // (ℓ_z, ℓ_z) Mask ≡ 1 (window: [[|t − t′| ≤ w]])
  // L4: for l = 1, 2, …, L_enc do
  for (int layer = 1; layer <= c.L_enc; ++layer) {
    TraceIndex il(tr, &Indices::l, layer);
    const LayerW<const T>& Wl = W.enc[layer - 1];
    const PatchSite site = run.at({}, layer, 0);  // patch points of the lines of layer l
    if (tr) tr->line(lines::ed_transformer::enc_loop, {tscalar("l", layer)});
    // L5: Z ← Z + MHAttention(Z | W^enc_l, Mask ≡ 1)
    // L6: for t ∈ [ℓ_z]: Z[:, t] ← layer_norm(Z[:, t] | γ¹_l, β¹_l)   (pre-LN: lines 5, 6 swap, Z̃)
    residual_line_pair<T>(Z, c, Wl.gamma1, Wl.beta1, tr, lines::ed_transformer::enc_attention, "Z", "Z̃", Axis::TokenZ, site,
                          [&](Mat<T>& Zr, const Mat<T>& in, const std::string&, LineRef line) {
                            attention_line<T>(Zr, in, nullptr, Wl.attn, ones, c, tr, line, "Z", Axis::TokenZ, Axis::TokenZ, attn, site);
                          });
    // L7: Z ← Z + W^l_mlp2 ReLU(W^l_mlp1 Z + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
    // L8: for t ∈ [ℓ_z]: Z[:, t] ← layer_norm(Z[:, t] | γ²_l, β²_l)
    residual_line_pair<T>(Z, c, Wl.gamma2, Wl.beta2, tr, lines::ed_transformer::enc_mlp, "Z", "Z̃", Axis::TokenZ, site,
                          [&](Mat<T>& Zr, const Mat<T>& in, const std::string& in_name, LineRef line) {
                            variant_layers::mlp_line<T>(Zr, in, in_name,
                                                        {Wl.W_mlp1, Wl.b_mlp1, Wl.W_mlp2, Wl.b_mlp2, Wl.W_gate, Wl.b_gate, "mlp1", "gate"},
                                                        c.act(), tr, line, "Z", Axis::TokenZ, site);
                          });
  }
  // L9: end   (pre-LN variant: Z ← norm(Z | γ_enc, β_enc), traced on this line)
  final_norm_line<T>(Z, W.enc_gamma, W.enc_beta, c, tr, lines::ed_transformer::enc_end, "Z", Axis::TokenZ, run);
  return Z;
}

// Lines 10–21: the decoder, conditioning on Z. Returns P (N_V, ℓ_x).
template <class T>
Mat<T> decode(const Tokens& x, const Mat<T>& Z, const ModelConfig& c, const EdW<const T>& W, Tracer* tr,
              const MHAttentionFn<T>& attn, const PatchSite& run) {
  using variant_layers::residual_line_pair;
  // L10: ℓ_x ← length(x)
  const int l_x = static_cast<int>(x.size()), l_z = static_cast<int>(Z.cols());
  if (tr) tr->line(lines::ed_transformer::l_x, {tscalar("ℓ_x", l_x)});
  // L11: for t ∈ [ℓ_x]: e_t ← W_e[:, x[t]] + W_p[:, t]
  // L12: X ← [e_1, e_2, … e_{ℓ_x}]
  Mat<T> X = embed_lines<T>(x, c, W, tr, lines::ed_transformer::dec_embed, "X", Axis::TokenX, run);  // (d_e, ℓ_x)
  const Mask causal = windowed(unidirectional_mask(l_x, l_x), c.window);  // (ℓ_x, ℓ_x) [[t ≤ t′]] (window: ∧ t′ − w ≤ t)
  const Mask ones = bidirectional_mask(l_z, l_x);                  // (ℓ_z, ℓ_x) Mask ≡ 1
  // L13: for i = 1, 2, …, L_dec do   (the body says l: see kLoopSlip)
  for (int layer = 1; layer <= c.L_dec; ++layer) {
    TraceIndex il(tr, &Indices::l, layer);
    const DecoderLayerW<const T>& Wl = W.dec[layer - 1];
    const PatchSite site = run.at({}, layer, 0);  // patch points of the lines of layer l
    if (tr) tr->line(lines::ed_transformer::dec_loop, {with_note(tscalar("l", layer), kLoopSlip)});
    {  // L14: X ← X + MHAttention(X | W^dec_l, Mask[t, t′] ≡ [[t ≤ t′]])
      // L15: for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ³_l, β³_l)   (pre-LN: lines 14, 15 swap, X̃)
      TraceSequences labels(tr, x, x);  // self-attention: keys and queries are both x's tokens
      residual_line_pair<T>(X, c, Wl.gamma3, Wl.beta3, tr, lines::ed_transformer::self_attention, "X", "X̃", Axis::TokenX, site,
                            [&](Mat<T>& Xr, const Mat<T>& in, const std::string&, LineRef line) {
                              attention_line<T>(Xr, in, nullptr, Wl.self_attn, causal, c, tr, line, "X", Axis::TokenZ,
                                                Axis::TokenX, attn, site);
                            });
    }
    // L16: X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1)   (queries from X, keys and values from Z)
    // L17: for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ⁴_l, β⁴_l)
    residual_line_pair<T>(X, c, Wl.gamma4, Wl.beta4, tr, lines::ed_transformer::cross_attention, "X", "X̃", Axis::TokenX, site,
                          [&](Mat<T>& Xr, const Mat<T>& in, const std::string&, LineRef line) {
                            attention_line<T>(Xr, in, &Z, Wl.cross_attn, ones, c, tr, line, "X", Axis::TokenZ, Axis::TokenX, attn, site);
                          });
    // L18: X ← X + W^l_mlp4 ReLU(W^l_mlp3 X + b^l_mlp3 1ᵀ) + b^l_mlp4 1ᵀ
    // L19: for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ⁵_l, β⁵_l)
    residual_line_pair<T>(X, c, Wl.gamma5, Wl.beta5, tr, lines::ed_transformer::dec_mlp, "X", "X̃", Axis::TokenX, site,
                          [&](Mat<T>& Xr, const Mat<T>& in, const std::string& in_name, LineRef line) {
                            variant_layers::mlp_line<T>(Xr, in, in_name,
                                                        {Wl.W_mlp3, Wl.b_mlp3, Wl.W_mlp4, Wl.b_mlp4, Wl.W_gate, Wl.b_gate, "mlp3", "gate2"},
                                                        c.act(), tr, line, "X", Axis::TokenX, site);
                          });
  }
  // L20: end   (pre-LN variant: X ← norm(X | γ_dec, β_dec), traced on this line)
  final_norm_line<T>(X, W.dec_gamma, W.dec_beta, c, tr, lines::ed_transformer::dec_end, "X", Axis::TokenX, run);
  // L21: return P = softmax(W_u X)   (tied: W_u = W_eᵀ; not in the paper, with b_u: softmax(W_u X + b_u 1ᵀ))
  return variant_layers::unembed_line<T>(X, W.W_u, W.W_e, W.extras.b_u, tr, lines::ed_transformer::P);  // (N_V, ℓ_x)
}

}  // namespace

void check_ed_tokens(const Tokens& z, const Tokens& x, const ModelConfig& c) {
  if (z.empty()) throw Error("an encoder-decoder model needs a context z: Algorithm 8 encodes z, then decodes x");
  if (x.empty()) throw Error("x is empty: EDTransformer needs at least one token of x (e.g. bos_token)");
  for (const auto& [name, s] : {std::pair<const char*, const Tokens*>{"the context z", &z}, {"x", &x}}) {
    try {
      check_tokens(*s, c);
    } catch (const Error& e) {
      throw Error(std::string(name) + ": " + e.what());
    }
  }
}

template <class T>
Mat<T> edtransformer_parts(const Tokens& z, const Tokens& x, const ModelConfig& c, const EdW<const T>& W, Tracer* tr,
                           const Mat<T>* Z_given, Mat<T>* Z_out, const MHAttentionFn<T>& attn,
                           const Patches* patches) {
  check_ed_tokens(z, x, c);
  if (Z_given && (Z_given->rows() != c.d_e || Z_given->cols() != static_cast<Eigen::Index>(z.size())))
    throw Error("EDTransformer: the reused Z must be d_e×ℓ_z = " + std::to_string(c.d_e) + "×" +
                std::to_string(z.size()));
  std::vector<Value> inputs;
  if (tr) {
    inputs = {ttokens("z", z), ttokens("x", x), tparam<T>(tr, "W_e", W.W_e, Axis::Feature, Axis::Vocab), tparam<T>(tr, "W_p", W.W_p),
              W.W_u.size() == 0 ? tparam<T>(tr, keys::tied_unembedding, W.W_e, true)
                                : tparam<T>(tr, "W_u", W.W_u, Axis::Vocab, Axis::Feature)};
    if (Z_given) inputs.push_back(with_note(tv("Z", *Z_given, Axis::Feature, Axis::TokenZ), kReusedZ));
  }
  TraceFrame frame(tr, 8, std::move(inputs));
  if (tr) {
    tr->trace().tokens_z = z;
    tr->trace().tokens_x = x;
  }
  /* Encode the context sequence: */
  const PatchSite run{patches};
  Mat<T> Z = Z_given ? *Z_given : encode<T>(z, c, W, tr, attn, run);  // (d_e, ℓ_z)
  /* Decode the primary sequence, conditioning on the context: */
  Mat<T> P = decode<T>(x, Z, c, W, tr, attn, run);  // (N_V, ℓ_x)
  if (Z_out) *Z_out = std::move(Z);
  return P;
}

template <class T>
Mat<T> edtransformer(const Tokens& z, const Tokens& x, const ModelConfig& c, const EdW<const T>& W, Tracer* tr,
                    const Patches* patches) {
  return edtransformer_parts<T>(z, x, c, W, tr, nullptr, nullptr, {}, patches);
}

#define SF_INSTANTIATE_EDTRANSFORMER(T)                                                                           \
  template Mat<T> edtransformer_parts<T>(const Tokens&, const Tokens&, const ModelConfig&, const EdW<const T>&,   \
                                         Tracer*, const Mat<T>*, Mat<T>*, const MHAttentionFn<T>&, const Patches*); \
  template Mat<T> edtransformer<T>(const Tokens&, const Tokens&, const ModelConfig&, const EdW<const T>&, Tracer*,  \
                                   const Patches*);
SF_INSTANTIATE_EDTRANSFORMER(float)
SF_INSTANTIATE_EDTRANSFORMER(double)
#undef SF_INSTANTIATE_EDTRANSFORMER

}  // namespace sf
