// Gradients of Algorithm 4 (one attention head) and Algorithm 5 (multi-head attention).
//
// Algorithm 4: Ṽ ← Attention(X, Z | W_qkv, Mask)
//   L1: Q ← W_q X + b_q 1ᵀ     L2: K ← W_k Z + b_k 1ᵀ     L3: V ← W_v Z + b_v 1ᵀ
//   L4: S ← Kᵀ Q
//   L5: ∀t_z, t_x, if ¬Mask[t_z, t_x] then S[t_z, t_x] ← −∞
//   L6: return Ṽ = V · softmax(S / √d_attn)
// Algorithm 5: Ṽ ← MHAttention(X, Z | W, Mask)
//   L1: for h ∈ [H]:  L2: Y^h ← Attention(X, Z | W^h_qkv, Mask)
//   L3: Y ← [Y^1; Y^2; …; Y^H]
//   L4: return Ṽ = W_o Y + b_o 1ᵀ
//
// In the batched self-attention (Z = X = X̃), lines 1–3 of every head run as ONE product with
// the heads' W_q, W_k, W_v stacked, over all B·ℓ tokens; lines 4–6 run per sequence and head.
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/grad.hpp"

namespace sf {

template <class T>
void attention_forward(CRef<T> Q, CRef<T> K, CRef<T> V, CRef<T> mask, Ref<T> A, Ref<T> Vt) {
  const T scale = T(1) / std::sqrt(static_cast<T>(Q.rows()));  // 1/√d_attn
  const T lowest = std::numeric_limits<T>::lowest();
  // L4: S ← Kᵀ Q   (held in A until line 6 turns it into the weights)
  A.noalias() = K.transpose() * Q;  // (ℓ_z, ℓ_x)
  for (Eigen::Index tx = 0; tx < A.cols(); ++tx) {
    auto s = A.col(tx).array();              // (ℓ_z) S[:, t_x]
    const auto keep = mask.col(tx).array();  // (ℓ_z) Mask[:, t_x], 1 or 0
    s *= scale;                              // S / √d_attn
    // L5: S[t_z, t_x] ← −∞ where ¬Mask: the column's maximum is over the unmasked entries only,
    // and L6's exp(−∞) = 0 is an exact 0 below (multiplied by Mask).
    const T mx = (s * keep + (T(1) - keep) * lowest).maxCoeff();
    if (mx == lowest) {  // masked everywhere: no distribution (softmax_columns gives 0)
      s.setZero();
      continue;
    }
    // L6: softmax(S / √d_attn), column t_x. (min(·, 0) only touches masked entries, so that
    // their exp cannot overflow before they are zeroed.)
    s = (s - mx).min(T(0)).exp() * keep;
    s /= s.sum();
  }
  // L6: Ṽ = V · softmax(S / √d_attn)
  Vt.noalias() = V * A;  // (d_mid, ℓ_x)
}

template <class T>
void attention_backward(CRef<T> dVt, CRef<T> Q, CRef<T> K, CRef<T> V, CRef<T> A, Ref<T> dS, Ref<T> dQ, Ref<T> dK,
                        Ref<T> dV) {
  const T scale = T(1) / std::sqrt(static_cast<T>(Q.rows()));  // 1/√d_attn
  // ∂ of L6: Ṽ = V · A with A = softmax(S / √d_attn)
  dV.noalias() = dVt * A.transpose();  // (d_mid, ℓ_z)
  dS.noalias() = V.transpose() * dVt;  // (ℓ_z, ℓ_x) ∂loss/∂A for now
  // ∂ of L6's column softmax, then of S / √d_attn: ∂S = A ⊙ (∂A − 1 (Σ_tz A ⊙ ∂A)) / √d_attn.
  // ∂ of L5: where ¬Mask, A = 0, so ∂S = 0: a masked (−∞) score gets zero gradient.
  for (Eigen::Index tx = 0; tx < A.cols(); ++tx) {
    const T a_dot_da = A.col(tx).dot(dS.col(tx));
    dS.col(tx).array() = (dS.col(tx).array() - a_dot_da) * A.col(tx).array() * scale;
  }
  // ∂ of L4: S ← Kᵀ Q
  dQ.noalias() = K * dS;              // (d_attn, ℓ_x)
  dK.noalias() = Q * dS.transpose();  // (d_attn, ℓ_z)
}

namespace {

// Row offsets of head h's Q, K and V in the stacked [Q^1;…;Q^H; K^1;…;K^H; V^1;…;V^H].
struct QkvRows {
  Eigen::Index H, d_attn, d_mid;
  Eigen::Index q(Eigen::Index h) const { return h * d_attn; }
  Eigen::Index k(Eigen::Index h) const { return H * d_attn + h * d_attn; }
  Eigen::Index v(Eigen::Index h) const { return 2 * H * d_attn + h * d_mid; }
  Eigen::Index total() const { return H * (2 * d_attn + d_mid); }
};

template <class T>
QkvRows qkv_rows(const MHAttentionW<const T>& W) {
  if (W.heads.empty()) throw Error("MHAttention needs at least one head");
  return {static_cast<Eigen::Index>(W.heads.size()), W.heads[0].W_q.rows(), W.heads[0].W_v.rows()};
}

}  // namespace

template <class T>
void mh_attention_forward(CRef<T> Xt, const MHAttentionW<const T>& W, int B, int l, const Mask& mask,
                          MHAttentionCache<T>& cache, Ref<T> X) {
  const QkvRows r = qkv_rows(W);
  const Eigen::Index d_e = Xt.rows(), N = Xt.cols();
  if (N != static_cast<Eigen::Index>(B) * l || mask.rows() != l || mask.cols() != l)
    throw Error("MHAttention: the batch is not B·ℓ columns with an ℓ×ℓ mask");
  cache.mask = mask.cast<T>();         // (ℓ, ℓ)
  cache.W_qkv.resize(r.total(), d_e);  // (H·(2·d_attn + d_mid), d_e)
  cache.b_qkv.resize(r.total(), 1);    // (H·(2·d_attn + d_mid), 1)
  for (Eigen::Index h = 0; h < r.H; ++h) {
    const AttentionHeadW<const T>& w = W.heads[h];
    cache.W_qkv.middleRows(r.q(h), r.d_attn) = w.W_q;
    cache.W_qkv.middleRows(r.k(h), r.d_attn) = w.W_k;
    cache.W_qkv.middleRows(r.v(h), r.d_mid) = w.W_v;
    cache.b_qkv.middleRows(r.q(h), r.d_attn) = w.b_q;
    cache.b_qkv.middleRows(r.k(h), r.d_attn) = w.b_k;
    cache.b_qkv.middleRows(r.v(h), r.d_mid) = w.b_v;
  }
  // Alg. 4 L1–L3 for every head at once: Q ← W_q X̃ + b_q 1ᵀ, K ← W_k X̃ + b_k 1ᵀ, V ← W_v X̃ + b_v 1ᵀ
  cache.QKV.resize(r.total(), N);  // (H·(2·d_attn + d_mid), B·ℓ)
  linear_forward<T>(Xt, cache.W_qkv, cache.b_qkv, cache.QKV);
  cache.A.resize(l, static_cast<Eigen::Index>(B) * r.H * l);  // (ℓ, B·H·ℓ)
  cache.Y.resize(r.H * r.d_mid, N);                           // (H·d_mid, B·ℓ)
  // Alg. 5 L1: for h ∈ [H]:  L2: Y^h ← Attention(X̃, X̃ | W^h_qkv, Mask)   (each sequence b)
  for (Eigen::Index b = 0; b < B; ++b)
    for (Eigen::Index h = 0; h < r.H; ++h) {
      const Eigen::Index c0 = b * l;
      attention_forward<T>(cache.QKV.block(r.q(h), c0, r.d_attn, l), cache.QKV.block(r.k(h), c0, r.d_attn, l),
                           cache.QKV.block(r.v(h), c0, r.d_mid, l), cache.mask,
                           cache.A.middleCols((b * r.H + h) * l, l), cache.Y.block(h * r.d_mid, c0, r.d_mid, l));
    }
  // Alg. 5 L3: Y ← [Y^1; …; Y^H]   (Y^h was written into rows h·d_mid … of Y)
  // Alg. 5 L4: Ṽ = W_o Y + b_o 1ᵀ, and Alg. 10 L6: X ← X + Ṽ
  X.noalias() += W.W_o * cache.Y;
  X.colwise() += W.b_o;
}

template <class T>
void mh_attention_backward(CRef<T> dX, CRef<T> Xt, const MHAttentionW<const T>& W, int B, int l,
                           const MHAttentionCache<T>& cache, MHAttentionWorkspace<T>& ws, MHAttentionW<T>& dW,
                           Ref<T> dXt) {
  const QkvRows r = qkv_rows(W);
  const Eigen::Index d_e = Xt.rows(), N = Xt.cols();
  ws.dY.resize(r.H * r.d_mid, N);    // (H·d_mid, B·ℓ)
  ws.dQKV.resize(r.total(), N);      // (H·(2·d_attn + d_mid), B·ℓ)
  ws.dS.resize(l, l);                // (ℓ, ℓ)
  ws.dW_qkv.resize(r.total(), d_e);  // (H·(2·d_attn + d_mid), d_e)
  ws.db_qkv.resize(r.total(), 1);    // (H·(2·d_attn + d_mid), 1)
  // ∂ of Alg. 5 L4: Ṽ = W_o Y + b_o 1ᵀ   (Alg. 10 L6's X ← X + Ṽ passes ∂X on unchanged)
  linear_backward<T>(dX, cache.Y, W.W_o, dW.W_o, dW.b_o, ws.dY);
  // ∂ of Alg. 5 L3 (Y's rows are the heads' Y^h) and L1–L2, each sequence b and head h
  for (Eigen::Index b = 0; b < B; ++b)
    for (Eigen::Index h = 0; h < r.H; ++h) {
      const Eigen::Index c0 = b * l;
      attention_backward<T>(ws.dY.block(h * r.d_mid, c0, r.d_mid, l), cache.QKV.block(r.q(h), c0, r.d_attn, l),
                            cache.QKV.block(r.k(h), c0, r.d_attn, l), cache.QKV.block(r.v(h), c0, r.d_mid, l),
                            cache.A.middleCols((b * r.H + h) * l, l), ws.dS, ws.dQKV.block(r.q(h), c0, r.d_attn, l),
                            ws.dQKV.block(r.k(h), c0, r.d_attn, l), ws.dQKV.block(r.v(h), c0, r.d_mid, l));
    }
  // ∂ of Alg. 4 L1–L3 for every head at once: Q ← W_q X̃ + b_q 1ᵀ, K ← …, V ← …
  linear_backward<T>(ws.dQKV, Xt, cache.W_qkv, ws.dW_qkv, ws.db_qkv, dXt);
  for (Eigen::Index h = 0; h < r.H; ++h) {
    AttentionHeadW<T>& g = dW.heads[h];
    g.W_q = ws.dW_qkv.middleRows(r.q(h), r.d_attn);
    g.W_k = ws.dW_qkv.middleRows(r.k(h), r.d_attn);
    g.W_v = ws.dW_qkv.middleRows(r.v(h), r.d_mid);
    g.b_q = ws.db_qkv.middleRows(r.q(h), r.d_attn);
    g.b_k = ws.db_qkv.middleRows(r.k(h), r.d_attn);
    g.b_v = ws.db_qkv.middleRows(r.v(h), r.d_mid);
  }
}

template void attention_forward<float>(CRef<float>, CRef<float>, CRef<float>, CRef<float>, Ref<float>, Ref<float>);
template void attention_forward<double>(CRef<double>, CRef<double>, CRef<double>, CRef<double>, Ref<double>,
                                        Ref<double>);
template void attention_backward<float>(CRef<float>, CRef<float>, CRef<float>, CRef<float>, CRef<float>, Ref<float>,
                                        Ref<float>, Ref<float>, Ref<float>);
template void attention_backward<double>(CRef<double>, CRef<double>, CRef<double>, CRef<double>, CRef<double>,
                                         Ref<double>, Ref<double>, Ref<double>, Ref<double>);
template void mh_attention_forward<float>(CRef<float>, const MHAttentionW<const float>&, int, int, const Mask&,
                                          MHAttentionCache<float>&, Ref<float>);
template void mh_attention_forward<double>(CRef<double>, const MHAttentionW<const double>&, int, int, const Mask&,
                                           MHAttentionCache<double>&, Ref<double>);
template void mh_attention_backward<float>(CRef<float>, CRef<float>, const MHAttentionW<const float>&, int, int,
                                           const MHAttentionCache<float>&, MHAttentionWorkspace<float>&,
                                           MHAttentionW<float>&, Ref<float>);
template void mh_attention_backward<double>(CRef<double>, CRef<double>, const MHAttentionW<const double>&, int, int,
                                            const MHAttentionCache<double>&, MHAttentionWorkspace<double>&,
                                            MHAttentionW<double>&, Ref<double>);

}  // namespace sf
