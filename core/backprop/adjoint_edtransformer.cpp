// Stepformer's backward listing of Algorithm 8 (EDTransformer, the encoder-decoder), traced — not in
// the paper. The adjoint of each forward line, in reverse order of the forward: the decoder first (it
// ran last), then the encoder on the gradient the decoder sent into Z.
//   adjoint of Alg 11 L5:  ∇P[x[t+1], t] = −1/P[x[t+1], t], t = 1 … ℓ_x − 1
//   adjoint of L21: P = softmax(W_u X)   Algorithm 7's adjoint per column → ∇X, ∇W_u
//   (pre-LN variant: adjoint of L20, the decoder's final norm)
//   for l = L_dec, …, 1 (adjoint of L13):
//     adjoint of L19, L18   the MLP and γ⁵, β⁵
//     adjoint of L17, L16   the cross-attention MHAttention(X, Z | W^ed_l): Algorithm 5's adjoint with
//                           X ≠ Z sends ∇ into the decoder's X (the queries) AND into Z (the keys and
//                           values); ∇Z adds up over the decoder's layers
//     adjoint of L15, L14   the causal self-attention and γ³, β³
//   adjoint of L12, L11: x's embedding (Algorithms 1 and 2 per token)
//   adjoint of L9: ∇Z = Σ_l ∇Z of line 16 (pre-LN variant: through the encoder's final norm)
//   for l = L_enc, …, 1 (adjoint of L4): adjoint of L8, L7, L6, L5 on ∇Z
//   adjoint of L3, L2: z's embedding (W_e, W_p and the extras serve z and x: their gradients add)
#include "core/backprop/arch_lines.hpp"
#include "core/gradients/grad_edtransformer.hpp"

namespace sf {

namespace {

using namespace arch_adjoint;

const char* const kLayerZNote =
    "Partial: ∇Z through this layer's cross-attention (line 16) only; the encoder's backward starts from the sum "
    "over the decoder's layers (adjoint of line 9).";
const char* const kSumZNote =
    "∇Z = Σ over the decoder's layers l of line 16's ∇Z: Z gives the keys and values of every cross-attention.";

// adjoint of one decoder layer (lines 19 … 14); dZ (d_e, ℓ_z) collects line 16's ∇Z.
template <class T>
void decoder_layer_adjoint(const ModelConfig& c, const EdW<const T>& W, const EdCache<T>& cache, int layer,
                           EdW<T>& dW, Stream<T>& g, Mat<T>& dZ, Tracer* tr) {
  namespace ed = lines::ed_transformer;
  const DecoderLayerW<const T>& Wl = W.dec[layer - 1];
  DecoderLayerW<T>& dWl = dW.dec[layer - 1];
  const EdDecoderLayerCache<T>& lc = cache.dec[layer - 1];
  const NormPosition p = lc.mlp_ln.position;
  // adjoint of L19, L18: X ← X + W^l_mlp4 ReLU(W^l_mlp3 X + b^l_mlp3 1ᵀ) + b^l_mlp4 1ᵀ and γ⁵, β⁵
  const ResidualLines mlp{ed::dec_mlp.alg, ed::dec_mlp.line, "X", "X̃", Axis::TokenX, "∇γ⁵_l", "∇β⁵_l"};
  residual_line_pair_adjoint<T>(c, g, mlp, Wl.gamma5, lc.mlp_ln, dWl.gamma5, dWl.beta5, tr,
                                [&](const Mat<T>& dY, Mat<T>& din, int line) {
                                  MlpLineGrad<T> dmlp{dWl.W_mlp3, dWl.W_mlp4, dWl.W_gate, dWl.b_mlp3, dWl.b_mlp4, dWl.b_gate};
                                  adjoint_mlp<T>({lc.mlp_ln.input(), lc.mlp},
                                                 MlpLineW<T>{Wl.W_mlp3, Wl.W_mlp4, Wl.W_gate, Wl.b_mlp3, Wl.b_mlp4, Wl.b_gate}, c.act(),
                                                 dY, dmlp, din, f_input(mlp, p), MlpNames{"mlp3", "mlp4", "gate2"}, tr,
                                                 mlp.alg, line);
                                });
  // adjoint of L17, L16: X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1): ∇ to X and to Z
  const ResidualLines cross{ed::cross_attention.alg, ed::cross_attention.line, "X", "X̃", Axis::TokenX, "∇γ⁴_l", "∇β⁴_l"};
  const Mask ones = bidirectional_mask(static_cast<int>(cache.Z.cols()), static_cast<int>(cache.X.cols()));  // (ℓ_z, ℓ_x)
  residual_line_pair_adjoint<T>(c, g, cross, Wl.gamma4, lc.cross_ln, dWl.gamma4, dWl.beta4, tr,
                                [&](const Mat<T>& dY, Mat<T>& din, int line) {
                                  const MHAttentionForward<T> f = cross_attention_forward<T>(lc.cross, Wl.cross_attn, lc.cross_ln.input(), cache.Z, ones);
                                  Mat<T> dZ_l = Mat<T>::Zero(dZ.rows(), dZ.cols());  // (d_e, ℓ_z)
                                  adjoint_mh_attention<T>(f, Wl.cross_attn, dY, dWl.cross_attn, din, dZ_l, tr);
                                  dZ += dZ_l;
                                  attention_line_event<T>(tr, cross, p, line, dY, din,
                                                          {with_note(tv("∇Z", dZ_l, Axis::Feature, Axis::TokenZ), kLayerZNote)});
                                });
  // adjoint of L15, L14: X ← X + MHAttention(X | W^dec_l, Mask[t, t′] ≡ [[t ≤ t′]]) and γ³, β³
  const ResidualLines self{ed::self_attention.alg, ed::self_attention.line, "X", "X̃", Axis::TokenX, "∇γ³_l", "∇β³_l"};
  TraceSequences labels(tr, cache.tokens, cache.tokens);  // self-attention: keys and queries are both x's
  residual_line_pair_adjoint<T>(c, g, self, Wl.gamma3, lc.self_ln, dWl.gamma3, dWl.beta3, tr,
                                [&](const Mat<T>& dY, Mat<T>& din, int line) {
                                  const MHAttentionForward<T> f = self_attention_forward<T>(lc.self_attn, Wl.self_attn, lc.self_ln.input(), cache.dec_mask);
                                  adjoint_mh_attention<T>(f, Wl.self_attn, dY, dWl.self_attn, din, din, tr);
                                  attention_line_event<T>(tr, self, p, line, dY, din);
                                });
}

// adjoint of L9 ("end"; pre-LN variant: Z ← norm(Z | γ_enc, β_enc)): g.dX ← ∇Z entering the
// encoder's last layer, from dZ, line 16's ∇Z summed over the decoder's layers.
template <class T>
void encoder_output_adjoint(const ModelConfig& c, const EdW<const T>& W, const EdCache<T>& cache, EdW<T>& dW,
                            const Mat<T>& dZ, Stream<T>& g, Tracer* tr) {
  const LineRef L9 = lines::ed_transformer::enc_end;
  if (c.norm_pos() != NormPosition::Pre) {
    g.dX = dZ;
    if (tr) tr->line(L9.adjoint(), {with_note(tv("∇Z", g.dX, Axis::Feature, Axis::TokenZ), kSumZNote)});
    return;
  }
  g.dX.setZero(dZ.rows(), dZ.cols());  // (d_e, ℓ_z)
  adjoint_norm_columns<T>(c.norm, static_cast<T>(c.eps), cache.Z_stack, cache.ln_enc, W.enc_gamma, dZ, g.dX,
                          dW.enc_gamma, dW.enc_beta, tr);
  if (!tr) return;
  std::vector<Value> values = norm_values("∇Z", g.dX, Axis::TokenZ, "∇γ_enc", dW.enc_gamma, "∇β_enc", dW.enc_beta);
  values[0] = with_note(std::move(values[0]),
                        std::string(kSumZNote) + " Pre-LN (variant): then through the encoder's final norm γ_enc, β_enc.");
  tr->line(L9.adjoint(), std::move(values));
}

}  // namespace

template <class T>
void adjoint_edtransformer(const ModelConfig& c, const EdW<const T>& W, const EdCache<T>& cache, EdW<T>& dW,
                           ResidualGradients<T>* kept, Tracer* tr) {
  namespace ed = lines::ed_transformer;
  const int L_dec = static_cast<int>(cache.dec.size()), L_enc = static_cast<int>(cache.enc.size());
  const TraceBackward backward(tr);
  const T loss = cache.weights.dot(cache.loss.losses);  // −Σ_{t=1}^{ℓ−1} log P[x[t+1], t] (weights 1 and 0)
  TraceFrame frame(tr, 8,
                   tr ? std::vector<Value>{ttokens("z", cache.z_tokens), ttokens("x", cache.tokens),
                                           tv("P", cache.loss.P, Axis::Vocab, Axis::TokenX),
                                           tscalar("loss", static_cast<double>(loss))}
                      : std::vector<Value>{});
  Stream<T> g;
  /* The decoder's backward: */
  // adjoint of Alg 11 L5: loss(θ) = −Σ_{t=1}^{ℓ−1} log P(θ)[x_n[t+1], t]
  const Mat<T> dP = adjoint_seq2seq_loss<T>(cache.loss.P, cache.targets, loss, tr);
  // adjoint of L21: P = softmax(W_u X)   (tied: W_u = W_eᵀ; + b_u 1ᵀ, not in the paper)
  unembed_line_adjoint<T>(cache.X, cache.loss.P, dP, W.W_u, cache.W_u, dW.W_u, dW.W_e, dW.extras.b_u, g.dX, tr,
                          ed::P.alg, ed::P.line);
  if (c.norm_pos() == NormPosition::Pre) {
    // adjoint of L20 (pre-LN variant): X ← norm(X | γ_dec, β_dec)
    const Mat<T> dOut = g.dX;
    g.dX.setZero();
    adjoint_norm_columns<T>(c.norm, static_cast<T>(c.eps), cache.X_stack, cache.ln_dec, W.dec_gamma, dOut, g.dX,
                            dW.dec_gamma, dW.dec_beta, tr);
    if (tr)
      tr->line(ed::dec_end.adjoint(),
               norm_values("∇X", g.dX, Axis::TokenX, "∇γ_dec", dW.dec_gamma, "∇β_dec", dW.dec_beta));
  }
  if (kept) kept->X.assign(L_dec + 1, Mat<T>());
  if (kept) kept->Z.assign(L_enc + 1, Mat<T>());
  if (kept) kept->X[L_dec] = g.dX;  // after decoder layer L_dec
  Mat<T> dZ = Mat<T>::Zero(cache.Z.rows(), cache.Z.cols());  // (d_e, ℓ_z) ∂loss/∂Z, summed over line 16
  // adjoint of L13's body, for l = L_dec, …, 1
  for (int layer = L_dec; layer >= 1; --layer) {
    TraceIndex il(tr, &Indices::l, layer);
    if (tr) tr->line(ed::dec_loop.adjoint(), {tscalar("l", layer)});
    decoder_layer_adjoint<T>(c, W, cache, layer, dW, g, dZ, tr);
    if (kept) kept->X[layer - 1] = g.dX;  // as X enters decoder layer l
  }
  // adjoint of L12, L11: x's embedding (its share of ∇W_e, ∇W_p; z's is added at line 2)
  const char* x_share = "Partial: x's share; z's embedding (adjoint of line 2) adds its own.";
  embed_lines_adjoint<T>(c, cache.tokens, W.extras, cache.x_extras, g.dX, dW.W_e, dW.W_p, dW.extras, tr,
                         ed::dec_embed.alg, ed::dec_embed.line, Axis::TokenX, x_share);
  /* The encoder's backward, on the gradient the decoder sent into Z: */
  TraceSequences labels(tr, cache.z_tokens, cache.z_tokens);  // every token axis of the encoder is z's
  encoder_output_adjoint<T>(c, W, cache, dW, dZ, g, tr);
  if (kept) kept->Z[L_enc] = g.dX;  // after encoder layer L_enc
  // adjoint of L4's body, for l = L_enc, …, 1 (Mask ≡ 1)
  for (int layer = L_enc; layer >= 1; --layer) {
    TraceIndex il(tr, &Indices::l, layer);
    if (tr) tr->line(ed::enc_loop.adjoint(), {tscalar("l", layer)});
    self_attention_layer_adjoint<T>(c, W.enc[layer - 1], cache.enc[layer - 1], dW.enc[layer - 1], cache.enc_mask, g, tr,
                             {ed::enc_attention.alg, ed::enc_attention.line, "Z", "Z̃", Axis::TokenZ});
    if (kept) kept->Z[layer - 1] = g.dX;  // as Z enters encoder layer l
  }
  // adjoint of L3, L2: z's embedding (∇W_e, ∇W_p and the extras now hold z's and x's shares)
  embed_lines_adjoint<T>(c, cache.z_tokens, W.extras, cache.z_extras, g.dX, dW.W_e, dW.W_p, dW.extras, tr,
                         ed::enc_embed.alg, ed::enc_embed.line, Axis::TokenZ, "");
}

#define SF_ADJOINT_EDTRANSFORMER(T)                                                                         \
  template void adjoint_edtransformer<T>(const ModelConfig&, const EdW<const T>&, const EdCache<T>&, EdW<T>&, \
                                         ResidualGradients<T>*, Tracer*);
SF_ADJOINT_EDTRANSFORMER(float)
SF_ADJOINT_EDTRANSFORMER(double)
#undef SF_ADJOINT_EDTRANSFORMER

}  // namespace sf
