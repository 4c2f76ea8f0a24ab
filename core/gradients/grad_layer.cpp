// One layer of Algorithm 10 (lines 5–8), Algorithm 9 (lines 5–8) and the encoder of Algorithm 8
// (lines 5–8), forward and backward over a batch: the self-attention sub-layer (γ¹_l, β¹_l), then
// the MLP sub-layer (γ²_l, β²_l), pre-LN or post-LN (core/gradients/grad_sublayer.hpp).
//   Alg. 10, pre-LN:   L5: X̃ ← layer_norm(X | γ¹_l, β¹_l)   L6: X ← X + MHAttention(X̃ | W_l, Mask)
//                      L7: X̃ ← layer_norm(X | γ²_l, β²_l)   L8: X ← X + MLP(X̃)
//   Alg. 9, post-LN:   L5: X ← X + MHAttention(X | W_l, Mask ≡ 1)   L6: X ← layer_norm(X | γ¹_l, β¹_l)
//                      L7: X ← X + MLP(X)                          L8: X ← layer_norm(X | γ²_l, β²_l)
#include "core/gradients/grad_sublayer.hpp"

namespace sf {

LayerSpec layer_spec(const ModelConfig& c) {
  return {.position = c.norm_pos(), .norm = c.norm, .eps = c.eps, .act = c.act(), .attn = attention_options(c, true)};
}

template <class T>
void layer_forward(const LayerSpec& s, const LayerW<const T>& W, int B, int l, const Mask& mask,
                   const std::vector<int>* key_lengths, LayerCache<T>& lc, Mat<T>& X) {
  // L5–6: the self-attention and γ¹_l, β¹_l
  sublayer_forward<T>(s, X, W.gamma1, W.beta1, lc.attn_ln, [&](const Mat<T>& Xin, Mat<T>& R) {
    mh_attention_forward<T>(Xin, W.attn, B, l, mask, lc.attn, R, key_lengths, s.attn);
  });
  // L7–8: the MLP and γ²_l, β²_l
  mlp_sublayer_forward<T>(s, X, {W.W_mlp1, W.b_mlp1, W.W_mlp2, W.b_mlp2, W.W_gate, W.b_gate}, W.gamma2, W.beta2,
                          lc.mlp_ln, lc.mlp);
}

template <class T>
void layer_backward(const LayerSpec& s, const LayerW<const T>& W, int B, int l, const LayerCache<T>& lc,
                    StreamGrad<T>& g, MlpWorkspace<T>& mlp, MHAttentionWorkspace<T>& attn, LayerW<T>& dW) {
  // ∂ of L7–8: the MLP and γ²_l, β²_l
  mlp_sublayer_backward<T>(s, g, {W.W_mlp1, W.b_mlp1, W.W_mlp2, W.b_mlp2, W.W_gate, W.b_gate}, W.gamma2, lc.mlp_ln,
                           lc.mlp, mlp, {dW.W_mlp1, dW.b_mlp1, dW.W_mlp2, dW.b_mlp2, dW.W_gate, dW.b_gate},
                           dW.gamma2, dW.beta2);
  // ∂ of L5–6: the self-attention and γ¹_l, β¹_l
  sublayer_backward<T>(g, W.gamma1, lc.attn_ln, dW.gamma1, dW.beta1, [&](const Mat<T>& dY, Mat<T>& dF) {
    mh_attention_backward<T>(dY, lc.attn_ln.input(), W.attn, B, l, lc.attn, attn, dW.attn, dF);
  });
}

#define SF_LAYER(T)                                                                                          \
  template void layer_forward<T>(const LayerSpec&, const LayerW<const T>&, int, int, const Mask&,            \
                                 const std::vector<int>*, LayerCache<T>&, Mat<T>&);                          \
  template void layer_backward<T>(const LayerSpec&, const LayerW<const T>&, int, int, const LayerCache<T>&,  \
                                  StreamGrad<T>&, MlpWorkspace<T>&, MHAttentionWorkspace<T>&, LayerW<T>&);
SF_LAYER(float)
SF_LAYER(double)
#undef SF_LAYER

}  // namespace sf
