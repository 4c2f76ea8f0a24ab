// Forward and backward of Algorithm 8, P ← EDTransformer(z, x | θ), over a batch of pairs, with
// the loss of Algorithm 11 line 5. The backward runs the forward's lines in mirrored order: 21,
// then 19–14 for l = L_dec … 1, 11 (x's embedding), then 8–5 for l = L_enc … 1, 2 (z's embedding).
//   L2:  for t ∈ [ℓ_z]: e_t ← W_e[:, z[t]] + W_p[:, t]        L3: Z ← [e_1, e_2, … e_{ℓ_z}]
//   L4:  for l = 1, 2, …, L_enc do
//   L5:    Z ← Z + MHAttention(Z | W^enc_l, Mask ≡ 1)
//   L6:    for t ∈ [ℓ_z]: Z[:, t] ← layer_norm(Z[:, t] | γ¹_l, β¹_l)
//   L7:    Z ← Z + W^l_mlp2 ReLU(W^l_mlp1 Z + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
//   L8:    for t ∈ [ℓ_z]: Z[:, t] ← layer_norm(Z[:, t] | γ²_l, β²_l)
//   L11: for t ∈ [ℓ_x]: e_t ← W_e[:, x[t]] + W_p[:, t]        L12: X ← [e_1, e_2, … e_{ℓ_x}]
//   L13: for l = 1, 2, …, L_dec do   (the paper's loop variable is i; the body says l)
//   L14:   X ← X + MHAttention(X | W^dec_l, Mask[t, t′] ≡ [[t ≤ t′]])
//   L15:   for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ³_l, β³_l)
//   L16:   X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1)
//   L17:   for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ⁴_l, β⁴_l)
//   L18:   X ← X + W^l_mlp4 ReLU(W^l_mlp3 X + b^l_mlp3 1ᵀ) + b^l_mlp4 1ᵀ
//   L19:   for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ⁵_l, β⁵_l)
//   L21: return P = softmax(W_u X)
// Variants through the sub-layers (grad_sublayer.hpp) and the blocks: pre-LN (with the final norms
// enc.gamma on Z and dec.gamma before W_u), RMSNorm, positions (RoPE and ALiBi in the self-attention
// of lines 5 and 14 only; the relative bias's T5 buckets bidirectional on line 5, causal on line 14),
// activations, tied W_u = W_eᵀ, H_kv < H (cross-attention included); and the
// ecosystem extras (not in the paper): W_s[:, 1] and the embedding layer norm on lines 2 and 11 (one
// set of γ_emb, β_emb, W_s for z and x), line 21's b_u.
#include "core/gradients/grad_edtransformer.hpp"

#include "core/algorithms/algorithms.hpp"
#include "core/gradients/grad_sublayer.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

void check_batch(const ModelConfig& c, const Batch& b) {
  if (b.B < 1 || b.l < 1 || b.l > c.l_max || b.l_z < 1 || b.l_z > c.l_max ||
      b.tokens.size() != static_cast<size_t>(b.B) * b.l || b.z_tokens.size() != static_cast<size_t>(b.B) * b.l_z ||
      b.z_lengths.size() != static_cast<size_t>(b.B))
    throw Error("an encoder-decoder batch must hold B ≥ 1 pairs, x and z of 1 to ℓ_max = " + std::to_string(c.l_max) +
                " tokens each");
  if (b.targets.size() != b.tokens.size()) throw Error("a batch needs one target per position");
  for (const Tokens* s : {&b.tokens, &b.z_tokens})
    for (int id : *s)
      if (id < 1 || id > c.N_V())
        throw Error("token id " + std::to_string(id) + " is outside [1, N_V] = [1, " + std::to_string(c.N_V()) + "]");
}

}  // namespace

template <class T>
T edtransformer_forward(const ModelConfig& c, const EdW<const T>& W, const Batch& batch, T loss_weight,
                        EdCache<T>& cache) {
  check_batch(c, batch);
  const int B = batch.B, l = batch.l, l_z = batch.l_z;
  const Eigen::Index N = static_cast<Eigen::Index>(B) * l;
  const LayerSpec spec = layer_spec(c);
  LayerSpec enc_spec = spec;  // the relative bias (variant): T5's bidirectional buckets in the encoder
  enc_spec.attn.rel_bidirectional = true;  // (used only under it: it is the bucket function's direction)
  cache.B = B;
  cache.l = l;
  cache.l_z = l_z;
  cache.tokens = batch.tokens;
  cache.z_tokens = batch.z_tokens;
  cache.z_lengths = batch.z_lengths;
  if (cache.enc_mask.rows() != l_z) cache.enc_mask = windowed(bidirectional_mask(l_z, l_z), c.window);  // (ℓ_z, ℓ_z) Mask ≡ 1
  if (cache.dec_mask.rows() != l) cache.dec_mask = windowed(unidirectional_mask(l, l), c.window);       // (ℓ, ℓ) [[t ≤ t′]]
  cache.enc.resize(c.L_enc);
  cache.dec.resize(c.L_dec);
  cache.targets = batch.targets;  // (N)
  cache.weights.resize(N);        // (N)
  for (Eigen::Index k = 0; k < N; ++k) cache.weights(k) = cache.targets[k] ? loss_weight : T(0);
  const Eigen::Ref<const Mat<T>> W_p = positions_for<T>(c, W.W_p, cache.W_p);  // learned, sinusoid or none

  /* Encode the context sequence: */
  // L2: for t ∈ [ℓ_z]: e_t ← W_e[:, z[t]] + W_p[:, t];  L3: Z ← [e_1, e_2, … e_{ℓ_z}]
  embedding_forward<T>(batch.z_tokens, l_z, W.W_e, W_p, cache.Z);  // (d_e, B·ℓ_z)
  embedding_extras_forward<T>(c, W.extras, cache.z_extras, cache.Z);  // not in the paper: + W_s[:, 1], layer_norm
  // L4: for l = 1, 2, …, L_enc do   L5–L8 (keys past ℓ_z of each context masked)
  for (int layer = 0; layer < c.L_enc; ++layer)
    layer_forward<T>(enc_spec, W.enc[layer], B, l_z, cache.enc_mask, &cache.z_lengths, cache.enc[layer], cache.Z);
  // pre-LN (variant): the encoder's final norm, Z[:, t] ← norm(Z[:, t] | enc.γ, enc.β)
  if (spec.position == NormPosition::Pre)
    stack_norm_forward<T>(spec, cache.Z, W.enc_gamma, W.enc_beta, cache.Z_stack, cache.ln_enc);
  /* Decode the primary sequence, conditioning on the context: */
  // L11: for t ∈ [ℓ_x]: e_t ← W_e[:, x[t]] + W_p[:, t];  L12: X ← [e_1, e_2, … e_{ℓ_x}]
  embedding_forward<T>(batch.tokens, l, W.W_e, W_p, cache.X);  // (d_e, B·ℓ)
  embedding_extras_forward<T>(c, W.extras, cache.x_extras, cache.X);  // not in the paper: + W_s[:, 1], layer_norm
  // L13: for l = 1, 2, …, L_dec do
  for (int layer = 0; layer < c.L_dec; ++layer) {
    const DecoderLayerW<const T>& Wl = W.dec[layer];
    EdDecoderLayerCache<T>& lc = cache.dec[layer];
    // L14: X ← X + MHAttention(X | W^dec_l, Mask[t, t′] ≡ [[t ≤ t′]])
    // L15: for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ³_l, β³_l)
    sublayer_forward<T>(spec, cache.X, Wl.gamma3, Wl.beta3, lc.self_ln, [&](const Mat<T>& X, Mat<T>& R) {
      mh_attention_forward<T>(X, Wl.self_attn, B, l, cache.dec_mask, lc.self_attn, R, nullptr, spec.attn);
    });
    // L16: X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1)   (keys and values from Z, past ℓ_z masked;
    //      no RoPE or ALiBi: queries and keys belong to different sequences)
    // L17: for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ⁴_l, β⁴_l)
    sublayer_forward<T>(spec, cache.X, Wl.gamma4, Wl.beta4, lc.cross_ln, [&](const Mat<T>& X, Mat<T>& R) {
      mh_cross_attention_forward<T>(X, cache.Z, Wl.cross_attn, B, l, l_z, lc.cross, R, &cache.z_lengths,
                                    attention_options(c, false));  // random-feature attention's D, if any
    });
    // L18: X ← X + W^l_mlp4 ReLU(W^l_mlp3 X + b^l_mlp3 1ᵀ) + b^l_mlp4 1ᵀ
    // L19: for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ⁵_l, β⁵_l)
    mlp_sublayer_forward<T>(spec, cache.X, {Wl.W_mlp3, Wl.b_mlp3, Wl.W_mlp4, Wl.b_mlp4, Wl.W_gate, Wl.b_gate},
                            Wl.gamma5, Wl.beta5, lc.mlp_ln, lc.mlp);
  }
  // pre-LN (variant): the decoder's final norm, X[:, t] ← norm(X[:, t] | dec.γ, dec.β)
  if (spec.position == NormPosition::Pre)
    stack_norm_forward<T>(spec, cache.X, W.dec_gamma, W.dec_beta, cache.X_stack, cache.ln_dec);
  // L21: return P = softmax(W_u X) (tied: W_u = W_eᵀ; + b_u 1ᵀ, not in the paper), then Alg. 11 L5:
  //      loss = Σ_t w_t · (−log P[x[t+1], t])
  return loss_forward<T>(cache.X, unembedding_for<T>(W.W_u, W.W_e, cache.W_u), W.extras.b_u, cache.targets,
                         cache.weights, cache.loss);
}

template <class T>
void edtransformer_backward(const ModelConfig& c, const EdW<const T>& W, const EdCache<T>& cache, EdWorkspace<T>& ws,
                            EdW<T>& dW, ResidualGradients<T>* kept) {
  const LayerSpec spec = layer_spec(c);
  const int B = cache.B, l = cache.l, l_z = cache.l_z;
  const Eigen::Index d_e = cache.X.rows(), N = cache.X.cols(), N_z = cache.Z.cols();
  ws.dec.dX.resize(d_e, N);      // (d_e, B·ℓ)
  ws.enc.dX.setZero(d_e, N_z);   // (d_e, B·ℓ_z) ∂loss/∂Z, summed over the decoder layers' line 16
  ws.dZ_cross.resize(d_e, N_z);  // (d_e, B·ℓ_z)
  // ∂ of Alg. 11 L5 and of L21: P = softmax(W_u X)
  loss_backward<T>(cache.X, unembedding_used<T>(W.W_u, cache.W_u), cache.targets, cache.weights, cache.loss,
                   ws.dlogits, unembedding_gradient<T>(dW.W_u, dW.W_e, ws.dW_u), dW.extras.b_u, ws.dec.dX);
  // ∂ of the pre-LN decoder's final norm (variant)
  if (spec.position == NormPosition::Pre)
    stack_norm_backward<T>(ws.dec.dX, W.dec_gamma, cache.ln_dec, ws.dX_out, dW.dec_gamma, dW.dec_beta);
  const int L_dec = static_cast<int>(cache.dec.size()), L_enc = static_cast<int>(cache.enc.size());
  if (kept) kept->X.assign(L_dec + 1, Mat<T>());
  if (kept) kept->Z.assign(L_enc + 1, Mat<T>());
  if (kept) kept->X[L_dec] = ws.dec.dX;  // after decoder layer L_dec
  // ∂ of L13's loop body, for l = L_dec, …, 1
  for (int layer = L_dec - 1; layer >= 0; --layer) {
    const DecoderLayerW<const T>& Wl = W.dec[layer];
    DecoderLayerW<T>& dWl = dW.dec[layer];
    const EdDecoderLayerCache<T>& lc = cache.dec[layer];
    // ∂ of L19: X[:, t] ← layer_norm(X[:, t] | γ⁵_l, β⁵_l)
    // ∂ of L18: X ← X + W^l_mlp4 ReLU(W^l_mlp3 X + b^l_mlp3 1ᵀ) + b^l_mlp4 1ᵀ
    mlp_sublayer_backward<T>(spec, ws.dec, {Wl.W_mlp3, Wl.b_mlp3, Wl.W_mlp4, Wl.b_mlp4, Wl.W_gate, Wl.b_gate},
                             Wl.gamma5, lc.mlp_ln, lc.mlp, ws.mlp,
                             {dWl.W_mlp3, dWl.b_mlp3, dWl.W_mlp4, dWl.b_mlp4, dWl.W_gate, dWl.b_gate}, dWl.gamma5,
                             dWl.beta5);
    // ∂ of L17: X[:, t] ← layer_norm(X[:, t] | γ⁴_l, β⁴_l)
    // ∂ of L16: X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1): to X (queries) and to Z (keys, values)
    sublayer_backward<T>(ws.dec, Wl.gamma4, lc.cross_ln, dWl.gamma4, dWl.beta4, [&](const Mat<T>& dY, Mat<T>& dF) {
      mh_cross_attention_backward<T>(dY, lc.cross_ln.input(), cache.Z, Wl.cross_attn, B, l, l_z, lc.cross, ws.cross,
                                     dWl.cross_attn, dF, ws.dZ_cross);
      ws.enc.dX += ws.dZ_cross;
    });
    // ∂ of L15: X[:, t] ← layer_norm(X[:, t] | γ³_l, β³_l)
    // ∂ of L14: X ← X + MHAttention(X | W^dec_l, Mask[t, t′] ≡ [[t ≤ t′]])
    sublayer_backward<T>(ws.dec, Wl.gamma3, lc.self_ln, dWl.gamma3, dWl.beta3, [&](const Mat<T>& dY, Mat<T>& dF) {
      mh_attention_backward<T>(dY, lc.self_ln.input(), Wl.self_attn, B, l, lc.self_attn, ws.attn, dWl.self_attn, dF);
    });
    if (kept) kept->X[layer] = ws.dec.dX;  // as X enters decoder layer `layer` + 1
  }
  // ∂ of line 11's extras (not in the paper): layer_norm(e_t | γ_emb, β_emb), e_t + W_s[:, 1]
  embedding_extras_backward<T>(c, W.extras, cache.x_extras, ws.dec.dX, ws.dE, dW.extras.emb_gamma, dW.extras.emb_beta,
                               dW.extras.W_s);
  // ∂ of L11: e_t ← W_e[:, x[t]] + W_p[:, t]
  embedding_backward<T>(cache.tokens, l, ws.dec.dX, dW.W_e, dW.W_p);
  // ∂ of the pre-LN encoder's final norm (variant); ws.enc.dX: ∂loss/∂Z from every cross-attention
  if (spec.position == NormPosition::Pre)
    stack_norm_backward<T>(ws.enc.dX, W.enc_gamma, cache.ln_enc, ws.enc.dR, dW.enc_gamma, dW.enc_beta);
  if (kept) kept->Z[L_enc] = ws.enc.dX;  // after encoder layer L_enc
  // ∂ of L4's loop body, for l = L_enc, …, 1
  for (int layer = L_enc - 1; layer >= 0; --layer) {
    layer_backward<T>(spec, W.enc[layer], B, l_z, cache.enc[layer], ws.enc, ws.mlp, ws.attn, dW.enc[layer]);
    if (kept) kept->Z[layer] = ws.enc.dX;  // as Z enters encoder layer `layer` + 1
  }
  // ∂ of line 2's extras (not in the paper), z's share added to x's (one γ_emb, β_emb, W_s for both)
  ws.dgamma_emb_z.resize(dW.extras.emb_gamma.size(), 1);  // (d_e) or empty
  ws.dbeta_emb_z.resize(dW.extras.emb_beta.size(), 1);    // (d_e) or empty
  ws.dW_s_z.resize(dW.extras.W_s.rows(), dW.extras.W_s.cols());  // (d_e, token_types) or empty
  embedding_extras_backward<T>(c, W.extras, cache.z_extras, ws.enc.dX, ws.dE, ws.dgamma_emb_z, ws.dbeta_emb_z,
                               ws.dW_s_z);
  dW.extras.emb_gamma += ws.dgamma_emb_z;
  dW.extras.emb_beta += ws.dbeta_emb_z;
  dW.extras.W_s += ws.dW_s_z;
  // ∂ of L2: e_t ← W_e[:, z[t]] + W_p[:, t]   (z and x share W_e and W_p: the sum of both)
  ws.dW_e_z.resize(dW.W_e.rows(), dW.W_e.cols());  // (d_e, N_V)
  ws.dW_p_z.resize(dW.W_p.rows(), dW.W_p.cols());  // (d_e, ℓ_max), empty without a trained W_p
  embedding_backward<T>(cache.z_tokens, l_z, ws.enc.dX, ws.dW_e_z, ws.dW_p_z);
  dW.W_e += ws.dW_e_z;
  dW.W_p += ws.dW_p_z;
  add_tied_gradient<T>(dW.W_u, ws.dW_u, dW.W_e);
}

template <class T>
EdGradient<T>::EdGradient(const ParamTable& table) : grad(table.total(), T(0)), dW(bind_ed<T>(table, grad.data())) {}

template <class T>
T EdGradient<T>::loss_and_gradient(const ModelConfig& c, const EdW<const T>& W, const Batch& batch, T loss_weight) {
  const T loss = edtransformer_forward<T>(c, W, batch, loss_weight, cache);
  edtransformer_backward<T>(c, W, cache, ws, dW);
  return loss;
}

#define SF_INSTANTIATE_ED_GRADIENT(T)                                                                            \
  template struct EdGradient<T>;                                                                                 \
  template T edtransformer_forward<T>(const ModelConfig&, const EdW<const T>&, const Batch&, T, EdCache<T>&); \
  template void edtransformer_backward<T>(const ModelConfig&, const EdW<const T>&, const EdCache<T>&, EdWorkspace<T>&, \
                                          EdW<T>&, ResidualGradients<T>*);
SF_INSTANTIATE_ED_GRADIENT(float)
SF_INSTANTIATE_ED_GRADIENT(double)
#undef SF_INSTANTIATE_ED_GRADIENT

}  // namespace sf
