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
// Post-LN: layer_norm follows each residual line. One vocabulary (and one W_e, W_p) serves z and x.
// The encoder (lines 1–9) and the decoder (lines 10–21) are two functions, so that Algorithm 15
// can reuse Z (not in the paper, which re-encodes z at every step).
#include "core/algorithms/algorithms.hpp"
#include "core/arch/ed.hpp"
#include "core/model/error.hpp"

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
Mat<T> embed_lines(const Tokens& s, const EdW<const T>& W, Tracer* tr, int line, const char* name, Axis tokens) {
  Mat<T> E(W.W_e.rows(), static_cast<Eigen::Index>(s.size()));  // (d_e, ℓ): column t is e_t
  for (int t = 1; t <= static_cast<int>(s.size()); ++t) {
    TraceIndex it(tr, &Indices::t, t);
    const Vec<T> e = token_embedding<T>(s[t - 1], W.W_e, tr);  // W_e[:, s[t]], Algorithm 1
    E.col(t - 1) = e + positional_embedding<T>(t, W.W_p, tr);  // + W_p[:, t], Algorithm 2
  }
  if (tr) tr->line(8, line, {tv("e_t", E, Axis::Feature, tokens)});
  if (tr) tr->line(8, line + 1, {tv(name, E, Axis::Feature, tokens)});
  return E;
}

// "X ← X + MHAttention(X, C | W, Mask)" (lines 5, 14, 16): self-attention when C is X itself
// (`attn` may compute it), cross-attention when C is Z. Binds Mask and the new X.
template <class T>
void attention_line(Mat<T>& X, const Mat<T>* C, const MHAttentionW<const T>& W, const Mask& mask, Tracer* tr, int line,
                    const char* name, Axis mask_rows, Axis tokens, const MHAttentionFn<T>& attn) {
  const Mat<T>& context = C ? *C : X;  // (d_e, ℓ_z) or X itself
  X += !C && attn ? attn(X, X, W, mask) : mh_attention<T>(X, context, W, mask, tr);  // (d_e, ℓ)
  if (tr) tr->line(8, line, {tmask("Mask", mask, mask_rows, tokens), tv(name, X, Axis::Feature, tokens)});
}

// "for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)" (lines 6, 8, 15, 17, 19).
template <class T>
void layer_norm_line(Mat<T>& X, const MapV<const T>& gamma, const MapV<const T>& beta, T eps, Tracer* tr, int line,
                     const char* name, Axis tokens) {
  X = layer_norm_columns<T>(X, gamma, beta, eps, tr);  // (d_e, ℓ)
  if (tr) tr->line(8, line, {tv(name, X, Axis::Feature, tokens)});
}

// "X ← X + W_mlpB ReLU(W_mlpA X + b_mlpA 1ᵀ) + b_mlpB 1ᵀ" (line 7: A, B = 1, 2 over Z; line 18:
// 3, 4 over X), with the sub-steps "W_mlpA X + b_mlpA 1ᵀ" and "ReLU(…)".
template <class T>
void mlp_line(Mat<T>& X, const MapM<const T>& W_a, const MapV<const T>& b_a, const MapM<const T>& W_b,
              const MapV<const T>& b_b, Tracer* tr, int line, const std::string& pre, const char* name, Axis tokens) {
  const Mat<T> H_pre = (W_a * X).colwise() + b_a;  // (d_mlp, ℓ)
  if (tr) tr->substep(8, line, pre, {tv(pre, H_pre, Axis::Feature, tokens)});
  const Mat<T> H_act = relu<T>(H_pre);  // (d_mlp, ℓ)
  if (tr) tr->substep(8, line, "ReLU(…)", {tv("ReLU(…)", H_act, Axis::Feature, tokens)});
  X.noalias() += W_b * H_act;
  X.colwise() += b_b;
  if (tr) tr->line(8, line, {tv(name, X, Axis::Feature, tokens)});
}

// Lines 1–9: the encoder. Returns Z (d_e, ℓ_z).
template <class T>
Mat<T> encode(const Tokens& z, const ModelConfig& c, const EdW<const T>& W, Tracer* tr, const MHAttentionFn<T>& attn) {
  TraceSequences labels(tr, z, z);  // every token axis of the encoder is z's
  const T eps = static_cast<T>(c.eps);
  // L1: ℓ_z ← length(z)
  const int l_z = static_cast<int>(z.size());
  if (tr) tr->line(8, 1, {tscalar("ℓ_z", l_z)});
  // L2: for t ∈ [ℓ_z]: e_t ← W_e[:, z[t]] + W_p[:, t]
  // L3: Z ← [e_1, e_2, … e_{ℓ_z}]
  Mat<T> Z = embed_lines<T>(z, W, tr, 2, "Z", Axis::TokenZ);  // (d_e, ℓ_z)
  const Mask ones = bidirectional_mask(l_z, l_z);             // (ℓ_z, ℓ_z) Mask ≡ 1
  // L4: for l = 1, 2, …, L_enc do
  for (int layer = 1; layer <= c.L_enc; ++layer) {
    TraceIndex il(tr, &Indices::l, layer);
    const LayerW<const T>& Wl = W.enc[layer - 1];
    if (tr) tr->line(8, 4, {tscalar("l", layer)});
    // L5: Z ← Z + MHAttention(Z | W^enc_l, Mask ≡ 1)
    attention_line<T>(Z, nullptr, Wl.attn, ones, tr, 5, "Z", Axis::TokenZ, Axis::TokenZ, attn);
    // L6: for t ∈ [ℓ_z]: Z[:, t] ← layer_norm(Z[:, t] | γ¹_l, β¹_l)
    layer_norm_line<T>(Z, Wl.gamma1, Wl.beta1, eps, tr, 6, "Z", Axis::TokenZ);
    // L7: Z ← Z + W^l_mlp2 ReLU(W^l_mlp1 Z + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
    mlp_line<T>(Z, Wl.W_mlp1, Wl.b_mlp1, Wl.W_mlp2, Wl.b_mlp2, tr, 7, "W_mlp1 Z + b_mlp1 1ᵀ", "Z", Axis::TokenZ);
    // L8: for t ∈ [ℓ_z]: Z[:, t] ← layer_norm(Z[:, t] | γ²_l, β²_l)
    layer_norm_line<T>(Z, Wl.gamma2, Wl.beta2, eps, tr, 8, "Z", Axis::TokenZ);
  }  // L9: end
  return Z;
}

// Lines 10–21: the decoder, conditioning on Z. Returns P (N_V, ℓ_x).
template <class T>
Mat<T> decode(const Tokens& x, const Mat<T>& Z, const ModelConfig& c, const EdW<const T>& W, Tracer* tr,
              const MHAttentionFn<T>& attn) {
  const T eps = static_cast<T>(c.eps);
  // L10: ℓ_x ← length(x)
  const int l_x = static_cast<int>(x.size()), l_z = static_cast<int>(Z.cols());
  if (tr) tr->line(8, 10, {tscalar("ℓ_x", l_x)});
  // L11: for t ∈ [ℓ_x]: e_t ← W_e[:, x[t]] + W_p[:, t]
  // L12: X ← [e_1, e_2, … e_{ℓ_x}]
  Mat<T> X = embed_lines<T>(x, W, tr, 11, "X", Axis::TokenX);  // (d_e, ℓ_x)
  const Mask causal = unidirectional_mask(l_x, l_x);            // (ℓ_x, ℓ_x) Mask[t, t′] = [[t ≤ t′]]
  const Mask ones = bidirectional_mask(l_z, l_x);               // (ℓ_z, ℓ_x) Mask ≡ 1
  // L13: for i = 1, 2, …, L_dec do   (the body says l: see kLoopSlip)
  for (int layer = 1; layer <= c.L_dec; ++layer) {
    TraceIndex il(tr, &Indices::l, layer);
    const DecoderLayerW<const T>& Wl = W.dec[layer - 1];
    if (tr) tr->line(8, 13, {with_note(tscalar("l", layer), kLoopSlip)});
    {  // L14: X ← X + MHAttention(X | W^dec_l, Mask[t, t′] ≡ [[t ≤ t′]])
      TraceSequences labels(tr, x, x);  // self-attention: keys and queries are both x's tokens
      attention_line<T>(X, nullptr, Wl.self_attn, causal, tr, 14, "X", Axis::TokenZ, Axis::TokenX, attn);
    }
    // L15: for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ³_l, β³_l)
    layer_norm_line<T>(X, Wl.gamma3, Wl.beta3, eps, tr, 15, "X", Axis::TokenX);
    // L16: X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1)   (queries from X, keys and values from Z)
    attention_line<T>(X, &Z, Wl.cross_attn, ones, tr, 16, "X", Axis::TokenZ, Axis::TokenX, attn);
    // L17: for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ⁴_l, β⁴_l)
    layer_norm_line<T>(X, Wl.gamma4, Wl.beta4, eps, tr, 17, "X", Axis::TokenX);
    // L18: X ← X + W^l_mlp4 ReLU(W^l_mlp3 X + b^l_mlp3 1ᵀ) + b^l_mlp4 1ᵀ
    mlp_line<T>(X, Wl.W_mlp3, Wl.b_mlp3, Wl.W_mlp4, Wl.b_mlp4, tr, 18, "W_mlp3 X + b_mlp3 1ᵀ", "X", Axis::TokenX);
    // L19: for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ⁵_l, β⁵_l)
    layer_norm_line<T>(X, Wl.gamma5, Wl.beta5, eps, tr, 19, "X", Axis::TokenX);
  }  // L20: end
  // L21: return P = softmax(W_u X)
  const Mat<T> logits = W.W_u * X;  // (N_V, ℓ_x)
  if (tr) tr->substep(8, 21, "W_u X", {tv("W_u X", logits, Axis::Vocab, Axis::TokenX)});
  Mat<T> P = softmax_columns<T>(logits);  // (N_V, ℓ_x)
  if (tr) tr->line(8, 21, {tv("P", P, Axis::Vocab, Axis::TokenX)});
  return P;
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
                           const Mat<T>* Z_given, Mat<T>* Z_out, const MHAttentionFn<T>& attn) {
  check_ed_tokens(z, x, c);
  if (Z_given && (Z_given->rows() != c.d_e || Z_given->cols() != static_cast<Eigen::Index>(z.size())))
    throw Error("EDTransformer: the reused Z must be d_e×ℓ_z = " + std::to_string(c.d_e) + "×" +
                std::to_string(z.size()));
  std::vector<Value> inputs;
  if (tr) {
    inputs = {ttokens("z", z), ttokens("x", x), tv("W_e", W.W_e, Axis::Feature, Axis::Vocab), tv("W_p", W.W_p),
              tv("W_u", W.W_u, Axis::Vocab, Axis::Feature)};
    if (Z_given) inputs.push_back(with_note(tv("Z", *Z_given, Axis::Feature, Axis::TokenZ), kReusedZ));
  }
  TraceFrame frame(tr, 8, std::move(inputs));
  if (tr) {
    tr->trace().tokens_z = z;
    tr->trace().tokens_x = x;
  }
  /* Encode the context sequence: */
  Mat<T> Z = Z_given ? *Z_given : encode<T>(z, c, W, tr, attn);  // (d_e, ℓ_z)
  /* Decode the primary sequence, conditioning on the context: */
  Mat<T> P = decode<T>(x, Z, c, W, tr, attn);  // (N_V, ℓ_x)
  if (Z_out) *Z_out = std::move(Z);
  return P;
}

template <class T>
Mat<T> edtransformer(const Tokens& z, const Tokens& x, const ModelConfig& c, const EdW<const T>& W, Tracer* tr) {
  return edtransformer_parts<T>(z, x, c, W, tr, nullptr, nullptr);
}

#define SF_INSTANTIATE_EDTRANSFORMER(T)                                                                           \
  template Mat<T> edtransformer_parts<T>(const Tokens&, const Tokens&, const ModelConfig&, const EdW<const T>&,   \
                                         Tracer*, const Mat<T>*, Mat<T>*, const MHAttentionFn<T>&);               \
  template Mat<T> edtransformer<T>(const Tokens&, const Tokens&, const ModelConfig&, const EdW<const T>&, Tracer*);
SF_INSTANTIATE_EDTRANSFORMER(float)
SF_INSTANTIATE_EDTRANSFORMER(double)
#undef SF_INSTANTIATE_EDTRANSFORMER

}  // namespace sf
