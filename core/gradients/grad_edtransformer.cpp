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
#include "core/gradients/grad_edtransformer.hpp"

#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

// Forward of a post-LN sub-layer: "X ← X + f(X)", then "X[:, t] ← layer_norm(X[:, t] | γ, β)".
// add_f(X, R) adds f(X) into R (which holds X).
template <class T, class F>
void post_ln_forward(Mat<T>& X, const MapV<const T>& gamma, const MapV<const T>& beta, T eps, PostLnCache<T>& c,
                     F&& add_f) {
  c.X = X;          // (d_e, N)
  c.R = X;          // (d_e, N)
  add_f(c.X, c.R);  // R ← X + f(X)
  layer_norm_forward<T>(c.R, gamma, beta, eps, c.ln, X);  // X[:, t] ← layer_norm(R[:, t] | γ, β)
}

// Its backward, mirrored: s.dX holds ∂loss/∂X after the layer_norm line and is left holding
// ∂loss/∂X before the residual line. f_backward(dR, dT) assigns dT = ∂loss/∂X through f alone.
template <class T, class F>
void post_ln_backward(StreamGrad<T>& s, const MapV<const T>& gamma, const PostLnCache<T>& c, Ref<T> dgamma,
                      Ref<T> dbeta, F&& f_backward) {
  // ∂ of "X[:, t] ← layer_norm(R[:, t] | γ, β)": dR = ∂loss/∂R (layer_norm_backward adds into it)
  s.dR.setZero(s.dX.rows(), s.dX.cols());  // (d_e, N)
  layer_norm_backward<T>(s.dX, gamma, c.ln, s.dR, dgamma, dbeta);
  // ∂ of "R ← X + f(X)": ∂loss/∂X = dR (the residual) + dT (through f)
  s.dT.resize(s.dX.rows(), s.dX.cols());  // (d_e, N)
  f_backward(s.dR, s.dT);
  s.dX = s.dR + s.dT;
}

// The MLP sub-layer, encoder (lines 7–8: W_mlp1, W_mlp2, γ², β²) or decoder (lines 18–19: W_mlp3,
// W_mlp4, γ⁵, β⁵): "X ← X + W_b ReLU(W_a X + b_a 1ᵀ) + b_b 1ᵀ", then layer_norm.
template <class T>
void mlp_sublayer_forward(Mat<T>& X, const MapM<const T>& W_a, const MapV<const T>& b_a, const MapM<const T>& W_b,
                          const MapV<const T>& b_b, const MapV<const T>& gamma, const MapV<const T>& beta, T eps,
                          PostLnCache<T>& c, MlpCache<T>& mlp) {
  post_ln_forward<T>(X, gamma, beta, eps, c, [&](const Mat<T>& Xin, Mat<T>& R) {
    mlp_forward<T>(Xin, W_a, b_a, W_b, b_b, Activation::ReLU, mlp, R);
  });
}
template <class T>
void mlp_sublayer_backward(StreamGrad<T>& s, const MapM<const T>& W_a, const MapM<const T>& W_b,
                           const MapV<const T>& gamma, const PostLnCache<T>& c, const MlpCache<T>& mlp, Mat<T>& dH,
                           Ref<T> dW_a, Ref<T> db_a, Ref<T> dW_b, Ref<T> db_b, Ref<T> dgamma, Ref<T> dbeta) {
  post_ln_backward<T>(s, gamma, c, dgamma, dbeta, [&](const Mat<T>& dR, Mat<T>& dT) {
    mlp_backward<T>(dR, c.X, W_a, W_b, Activation::ReLU, mlp, dH, dW_a, db_a, dW_b, db_b, dT);
  });
}

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
  const T eps = static_cast<T>(c.eps);
  cache.B = B;
  cache.l = l;
  cache.l_z = l_z;
  cache.tokens = batch.tokens;
  cache.z_tokens = batch.z_tokens;
  cache.z_lengths = batch.z_lengths;
  if (cache.enc_mask.rows() != l_z) cache.enc_mask = bidirectional_mask(l_z, l_z);  // (ℓ_z, ℓ_z) Mask ≡ 1
  if (cache.dec_mask.rows() != l) cache.dec_mask = unidirectional_mask(l, l);       // (ℓ, ℓ) [[t ≤ t′]]
  cache.enc.resize(c.L_enc);
  cache.dec.resize(c.L_dec);
  cache.targets = batch.targets;  // (N)
  cache.weights.resize(N);        // (N)
  for (Eigen::Index k = 0; k < N; ++k) cache.weights(k) = cache.targets[k] ? loss_weight : T(0);

  /* Encode the context sequence: */
  // L2: for t ∈ [ℓ_z]: e_t ← W_e[:, z[t]] + W_p[:, t];  L3: Z ← [e_1, e_2, … e_{ℓ_z}]
  embedding_forward<T>(batch.z_tokens, l_z, W.W_e, W.W_p, cache.Z);  // (d_e, B·ℓ_z)
  // L4: for l = 1, 2, …, L_enc do
  for (int layer = 0; layer < c.L_enc; ++layer) {
    const LayerW<const T>& Wl = W.enc[layer];
    EdEncoderLayerCache<T>& lc = cache.enc[layer];
    // L5: Z ← Z + MHAttention(Z | W^enc_l, Mask ≡ 1)   (keys past ℓ_z of each context masked)
    // L6: for t ∈ [ℓ_z]: Z[:, t] ← layer_norm(Z[:, t] | γ¹_l, β¹_l)
    post_ln_forward<T>(cache.Z, Wl.gamma1, Wl.beta1, eps, lc.attn_ln, [&](const Mat<T>& Z, Mat<T>& R) {
      mh_attention_forward<T>(Z, Wl.attn, B, l_z, cache.enc_mask, lc.attn, R, &cache.z_lengths);
    });
    // L7: Z ← Z + W^l_mlp2 ReLU(W^l_mlp1 Z + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
    // L8: for t ∈ [ℓ_z]: Z[:, t] ← layer_norm(Z[:, t] | γ²_l, β²_l)
    mlp_sublayer_forward<T>(cache.Z, Wl.W_mlp1, Wl.b_mlp1, Wl.W_mlp2, Wl.b_mlp2, Wl.gamma2, Wl.beta2, eps, lc.mlp_ln,
                            lc.mlp);
  }
  /* Decode the primary sequence, conditioning on the context: */
  // L11: for t ∈ [ℓ_x]: e_t ← W_e[:, x[t]] + W_p[:, t];  L12: X ← [e_1, e_2, … e_{ℓ_x}]
  embedding_forward<T>(batch.tokens, l, W.W_e, W.W_p, cache.X);  // (d_e, B·ℓ)
  // L13: for l = 1, 2, …, L_dec do
  for (int layer = 0; layer < c.L_dec; ++layer) {
    const DecoderLayerW<const T>& Wl = W.dec[layer];
    EdDecoderLayerCache<T>& lc = cache.dec[layer];
    // L14: X ← X + MHAttention(X | W^dec_l, Mask[t, t′] ≡ [[t ≤ t′]])
    // L15: for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ³_l, β³_l)
    post_ln_forward<T>(cache.X, Wl.gamma3, Wl.beta3, eps, lc.self_ln, [&](const Mat<T>& X, Mat<T>& R) {
      mh_attention_forward<T>(X, Wl.self_attn, B, l, cache.dec_mask, lc.self_attn, R);
    });
    // L16: X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1)   (keys and values from Z, past ℓ_z masked)
    // L17: for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ⁴_l, β⁴_l)
    post_ln_forward<T>(cache.X, Wl.gamma4, Wl.beta4, eps, lc.cross_ln, [&](const Mat<T>& X, Mat<T>& R) {
      mh_cross_attention_forward<T>(X, cache.Z, Wl.cross_attn, B, l, l_z, lc.cross, R, &cache.z_lengths);
    });
    // L18: X ← X + W^l_mlp4 ReLU(W^l_mlp3 X + b^l_mlp3 1ᵀ) + b^l_mlp4 1ᵀ
    // L19: for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ⁵_l, β⁵_l)
    mlp_sublayer_forward<T>(cache.X, Wl.W_mlp3, Wl.b_mlp3, Wl.W_mlp4, Wl.b_mlp4, Wl.gamma5, Wl.beta5, eps, lc.mlp_ln,
                            lc.mlp);
  }
  // L21: return P = softmax(W_u X), then Alg. 11 L5: loss = Σ_t w_t · (−log P[x[t+1], t])
  return loss_forward<T>(cache.X, W.W_u, cache.targets, cache.weights, cache.loss);
}

template <class T>
void edtransformer_backward(const EdW<const T>& W, const EdCache<T>& cache, EdWorkspace<T>& ws, EdW<T>& dW) {
  const int B = cache.B, l = cache.l, l_z = cache.l_z;
  const Eigen::Index d_e = cache.X.rows(), N = cache.X.cols(), N_z = cache.Z.cols();
  ws.dec.dX.resize(d_e, N);      // (d_e, B·ℓ)
  ws.enc.dX.setZero(d_e, N_z);   // (d_e, B·ℓ_z) ∂loss/∂Z, summed over the decoder layers' line 16
  ws.dZ_cross.resize(d_e, N_z);  // (d_e, B·ℓ_z)
  // ∂ of Alg. 11 L5 and of L21: P = softmax(W_u X)
  loss_backward<T>(cache.X, W.W_u, cache.targets, cache.weights, cache.loss, ws.dlogits, dW.W_u, ws.dec.dX);
  // ∂ of L13's loop body, for l = L_dec, …, 1
  for (int layer = static_cast<int>(cache.dec.size()) - 1; layer >= 0; --layer) {
    const DecoderLayerW<const T>& Wl = W.dec[layer];
    DecoderLayerW<T>& dWl = dW.dec[layer];
    const EdDecoderLayerCache<T>& lc = cache.dec[layer];
    // ∂ of L19: X[:, t] ← layer_norm(X[:, t] | γ⁵_l, β⁵_l)
    // ∂ of L18: X ← X + W^l_mlp4 ReLU(W^l_mlp3 X + b^l_mlp3 1ᵀ) + b^l_mlp4 1ᵀ
    mlp_sublayer_backward<T>(ws.dec, Wl.W_mlp3, Wl.W_mlp4, Wl.gamma5, lc.mlp_ln, lc.mlp, ws.dH, dWl.W_mlp3, dWl.b_mlp3,
                             dWl.W_mlp4, dWl.b_mlp4, dWl.gamma5, dWl.beta5);
    // ∂ of L17: X[:, t] ← layer_norm(X[:, t] | γ⁴_l, β⁴_l)
    // ∂ of L16: X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1): to X (queries) and to Z (keys, values)
    post_ln_backward<T>(ws.dec, Wl.gamma4, lc.cross_ln, dWl.gamma4, dWl.beta4, [&](const Mat<T>& dR, Mat<T>& dT) {
      mh_cross_attention_backward<T>(dR, lc.cross_ln.X, cache.Z, Wl.cross_attn, B, l, l_z, lc.cross, ws.cross,
                                     dWl.cross_attn, dT, ws.dZ_cross);
      ws.enc.dX += ws.dZ_cross;
    });
    // ∂ of L15: X[:, t] ← layer_norm(X[:, t] | γ³_l, β³_l)
    // ∂ of L14: X ← X + MHAttention(X | W^dec_l, Mask[t, t′] ≡ [[t ≤ t′]])
    post_ln_backward<T>(ws.dec, Wl.gamma3, lc.self_ln, dWl.gamma3, dWl.beta3, [&](const Mat<T>& dR, Mat<T>& dT) {
      mh_attention_backward<T>(dR, lc.self_ln.X, Wl.self_attn, B, l, lc.self_attn, ws.attn, dWl.self_attn, dT);
    });
  }
  // ∂ of L11: e_t ← W_e[:, x[t]] + W_p[:, t]
  embedding_backward<T>(cache.tokens, l, ws.dec.dX, dW.W_e, dW.W_p);
  // ∂ of L4's loop body, for l = L_enc, …, 1 (ws.enc.dX: ∂loss/∂Z from every cross-attention)
  for (int layer = static_cast<int>(cache.enc.size()) - 1; layer >= 0; --layer) {
    const LayerW<const T>& Wl = W.enc[layer];
    LayerW<T>& dWl = dW.enc[layer];
    const EdEncoderLayerCache<T>& lc = cache.enc[layer];
    // ∂ of L8: Z[:, t] ← layer_norm(Z[:, t] | γ²_l, β²_l)
    // ∂ of L7: Z ← Z + W^l_mlp2 ReLU(W^l_mlp1 Z + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ
    mlp_sublayer_backward<T>(ws.enc, Wl.W_mlp1, Wl.W_mlp2, Wl.gamma2, lc.mlp_ln, lc.mlp, ws.dH, dWl.W_mlp1, dWl.b_mlp1,
                             dWl.W_mlp2, dWl.b_mlp2, dWl.gamma2, dWl.beta2);
    // ∂ of L6: Z[:, t] ← layer_norm(Z[:, t] | γ¹_l, β¹_l)
    // ∂ of L5: Z ← Z + MHAttention(Z | W^enc_l, Mask ≡ 1)
    post_ln_backward<T>(ws.enc, Wl.gamma1, lc.attn_ln, dWl.gamma1, dWl.beta1, [&](const Mat<T>& dR, Mat<T>& dT) {
      mh_attention_backward<T>(dR, lc.attn_ln.X, Wl.attn, B, l_z, lc.attn, ws.attn, dWl.attn, dT);
    });
  }
  // ∂ of L2: e_t ← W_e[:, z[t]] + W_p[:, t]   (z and x share W_e and W_p: the sum of both)
  ws.dW_e_z.resize(dW.W_e.rows(), dW.W_e.cols());  // (d_e, N_V)
  ws.dW_p_z.resize(dW.W_p.rows(), dW.W_p.cols());  // (d_e, ℓ_max)
  embedding_backward<T>(cache.z_tokens, l_z, ws.enc.dX, ws.dW_e_z, ws.dW_p_z);
  dW.W_e += ws.dW_e_z;
  dW.W_p += ws.dW_p_z;
}

template <class T>
EdGradient<T>::EdGradient(const ParamTable& table) : grad(table.total(), T(0)), dW(bind_ed<T>(table, grad.data())) {}

template <class T>
T EdGradient<T>::loss_and_gradient(const ModelConfig& c, const EdW<const T>& W, const Batch& batch, T loss_weight) {
  const T loss = edtransformer_forward<T>(c, W, batch, loss_weight, cache);
  edtransformer_backward<T>(W, cache, ws, dW);
  return loss;
}

#define SF_INSTANTIATE_ED_GRADIENT(T)                                                                            \
  template struct EdGradient<T>;                                                                                 \
  template T edtransformer_forward<T>(const ModelConfig&, const EdW<const T>&, const Batch&, T, EdCache<T>&); \
  template void edtransformer_backward<T>(const EdW<const T>&, const EdCache<T>&, EdWorkspace<T>&, EdW<T>&);
SF_INSTANTIATE_ED_GRADIENT(float)
SF_INSTANTIATE_ED_GRADIENT(double)
#undef SF_INSTANTIATE_ED_GRADIENT

}  // namespace sf
