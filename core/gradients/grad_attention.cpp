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
// Over a batch, Algorithm 4 lines 1–3 of every head run as few products as possible: self-attention
// (Z = X = X̃) stacks the heads' W_q, W_k, W_v into ONE product over all B·ℓ tokens; cross-attention
// (Alg. 8 L16) has one product for Q over X̃ and one for [K; V] over Z. Lines 4–6 and Alg. 5 L1–L4
// (heads_forward / heads_backward) are shared: they run per sequence and head, on the first ℓ_b
// keys of sequence b only (key padding, as −∞ scores: the padded keys' weights are exactly 0).
//
// Variants (self-attention only): RoPE rotates Q and K after the bias of lines 1–2 (the backward
// rotates ∂Q, ∂K back); ALiBi adds m_h·B to line 6's scaled scores (a constant: the softmax's
// backward is unchanged); with H_kv < H the query heads of one key/value head share W_k, W_v, whose
// gradients they accumulate. Each sequence may have its own mask (prefix-LM).
#include <cmath>
#include <limits>

#include "core/algorithms/random_features.hpp"
#include "core/model/error.hpp"
#include "core/gradients/grad.hpp"

namespace sf {

template <class T>
void attention_forward(CRef<T> Q, CRef<T> K, CRef<T> V, CRef<T> mask, Ref<T> A, Ref<T> Vt, T alibi_slope,
                       const Mat<T>* bias) {
  const T scale = T(1) / std::sqrt(static_cast<T>(Q.rows()));  // 1/√d_attn
  const T lowest = std::numeric_limits<T>::lowest();
  // L4: S ← Kᵀ Q   (held in A until line 6 turns it into the weights)
  A.noalias() = K.transpose() * Q;  // (ℓ_z, ℓ_x)
  for (Eigen::Index tx = 0; tx < A.cols(); ++tx) {
    auto s = A.col(tx).array();              // (ℓ_z) S[:, t_x]
    const auto keep = mask.col(tx).array();  // (ℓ_z) Mask[:, t_x], 1 or 0
    s *= scale;                              // S / √d_attn
    // ALiBi (variant): + m_h·B[t_z, t_x], B[t_z, t_x] = −|t_z − t_x|
    if (alibi_slope != T(0))
      for (Eigen::Index tz = 0; tz < A.rows(); ++tz) s(tz) -= alibi_slope * static_cast<T>(std::abs(tz - tx));
    if (bias) s += bias->col(tx).array();  // relative bias (variant): + B[:, t_x]
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
    s *= T(1) / s.sum();  // one division a column, then multiplications (≤ 1 ulp from dividing each)
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

// Row offsets of head h's Q, K and V in a stack of the heads' projections. Self-attention stacks
// all three, [Q^1;…;Q^H; K^1;…;K^H; V^1;…;V^H] (one product over X̃); cross-attention stacks
// [Q^1;…;Q^H] (over X̃) and [K^1;…;K^H; V^1;…;V^H] (over Z). A part not in the stack has no rows.
struct QkvRows {
  Eigen::Index H, d_attn, d_mid;
  bool has_q, has_kv;
  Eigen::Index q(Eigen::Index h) const { return h * d_attn; }
  Eigen::Index k(Eigen::Index h) const { return (has_q ? H * d_attn : 0) + h * d_attn; }
  Eigen::Index v(Eigen::Index h) const { return (has_q ? H * d_attn : 0) + H * d_attn + h * d_mid; }
  Eigen::Index total() const { return (has_q ? H * d_attn : 0) + (has_kv ? H * (d_attn + d_mid) : 0); }
};

enum class Stack { QKV, Q, KV };

template <class T>
QkvRows qkv_rows(const MHAttentionW<const T>& W, Stack s) {
  if (W.heads.empty()) throw Error("MHAttention needs at least one head");
  return {static_cast<Eigen::Index>(W.heads.size()), W.heads[0].W_q.rows(), W.heads[0].W_v.rows(), s != Stack::KV,
          s != Stack::Q};
}

// W_s (r.total(), d_in), b_s (r.total(), 1): the heads' W and b of the parts in r, stacked.
template <class T>
void stack_weights(const MHAttentionW<const T>& W, const QkvRows& r, Mat<T>& W_s, Mat<T>& b_s) {
  W_s.resize(r.total(), r.has_q ? W.heads[0].W_q.cols() : W.heads[0].W_k.cols());  // d_x, or d_z for [K; V]
  b_s.resize(r.total(), 1);
  for (Eigen::Index h = 0; h < r.H; ++h) {
    const AttentionHeadW<const T>& w = W.heads[h];
    if (r.has_q) {
      W_s.middleRows(r.q(h), r.d_attn) = w.W_q;
      b_s.middleRows(r.q(h), r.d_attn) = w.b_q;
    }
    if (r.has_kv) {
      W_s.middleRows(r.k(h), r.d_attn) = w.W_k;
      W_s.middleRows(r.v(h), r.d_mid) = w.W_v;
      b_s.middleRows(r.k(h), r.d_attn) = w.b_k;
      b_s.middleRows(r.v(h), r.d_mid) = w.b_v;
    }
  }
}

// The inverse of stack_weights for the gradients: dW_s, db_s back into each head's dW, db. With
// H_kv < H (a variant) the query heads of one key/value head view the same dW_k, db_k, dW_v, db_v:
// those are zeroed, then every query head adds its share.
template <class T>
void unstack_gradients(const QkvRows& r, const Mat<T>& dW_s, const Mat<T>& db_s, MHAttentionW<T>& dW) {
  if (r.has_kv)
    for (AttentionHeadW<T>& g : dW.heads) {
      g.W_k.setZero();
      g.W_v.setZero();
      g.b_k.setZero();
      g.b_v.setZero();
    }
  for (Eigen::Index h = 0; h < r.H; ++h) {
    AttentionHeadW<T>& g = dW.heads[h];
    if (r.has_q) {
      g.W_q = dW_s.middleRows(r.q(h), r.d_attn);
      g.b_q = db_s.middleRows(r.q(h), r.d_attn);
    }
    if (r.has_kv) {
      g.W_k += dW_s.middleRows(r.k(h), r.d_attn);
      g.W_v += dW_s.middleRows(r.v(h), r.d_mid);
      g.b_k += db_s.middleRows(r.k(h), r.d_attn);
      g.b_v += db_s.middleRows(r.v(h), r.d_mid);
    }
  }
}

// RoPE (variant): cos(tθ_i), sin(tθ_i) (d_attn/2, ℓ) for t = 1 … ℓ, θ_i = base^{−2(i−1)/d_attn}.
template <class T>
void rope_tables(Eigen::Index d_attn, Eigen::Index l, double base, Mat<T>& cos_t, Mat<T>& sin_t) {
  cos_t.resize(d_attn / 2, l);
  sin_t.resize(d_attn / 2, l);
  for (Eigen::Index t = 1; t <= l; ++t)
    for (Eigen::Index i = 1; i <= d_attn / 2; ++i) {
      const double angle = static_cast<double>(t) * std::pow(base, -2.0 * static_cast<double>(i - 1) / d_attn);
      cos_t(i - 1, t - 1) = static_cast<T>(std::cos(angle));
      sin_t(i - 1, t - 1) = static_cast<T>(std::sin(angle));
    }
}

// RoPE on every head's Q and K rows of the stack (·, B·ℓ): coordinates (2i−1, 2i) of column t of
// each sequence turned by tθ_i (sign = +1), or back by −tθ_i (sign = −1: the backward, Rᵀ = R⁻¹).
// (Algorithm 4's rope_rotate turns one head of one sequence; this is its batched form.)
template <class T>
void rope_rotate_stack(const QkvRows& r, Eigen::Index l, const Mat<T>& cos_t, const Mat<T>& sin_t, T sign, Mat<T>& S) {
  for (Eigen::Index h = 0; h < r.H; ++h)
    for (Eigen::Index row0 : {r.q(h), r.k(h)})
      for (Eigen::Index n = 0; n < S.cols(); ++n) {
        const Eigen::Index t = n % l;  // 0-based position within the sequence
        for (Eigen::Index i = 0; i < r.d_attn / 2; ++i) {
          T& a = S(row0 + 2 * i, n);
          T& b = S(row0 + 2 * i + 1, n);
          const T c = cos_t(i, t), s = sign * sin_t(i, t);
          const T a2 = a * c - b * s;  // q′[2i−1] = q[2i−1] cos(tθ_i) − q[2i] sin(tθ_i)
          b = a * s + b * c;           // q′[2i]   = q[2i−1] sin(tθ_i) + q[2i] cos(tθ_i)
          a = a2;
        }
      }
}

// ALiBi's slope m_h = 2^{−8h/H} of head h (0-based here), or 0 without ALiBi.
template <class T>
T alibi_slope(bool alibi, Eigen::Index h, Eigen::Index H) {
  return alibi ? static_cast<T>(std::pow(2.0, -8.0 * static_cast<double>(h + 1) / static_cast<double>(H))) : T(0);
}

// keys (B) ← ℓ_b of each sequence: key_lengths, or ℓ_z for all when it is nullptr.
void set_key_lengths(int B, int l_z, const std::vector<int>* key_lengths, std::vector<int>& keys) {
  if (!key_lengths) {
    keys.assign(B, l_z);
    return;
  }
  if (key_lengths->size() != static_cast<size_t>(B)) throw Error("MHAttention: key_lengths must have B entries");
  for (int n : *key_lengths)
    if (n < 0 || n > l_z) throw Error("MHAttention: a key length is outside [0, ℓ_z]");
  keys = *key_lengths;
}

// Random-feature attention (Algorithm 4-R): head h's fixed directions ω (rf_omega, 1-based head as
// Algorithm 5 numbers it), drawn once per call; empty without the variant.
std::vector<Mat<double>> head_directions(const AttentionOptions& rf, const QkvRows& r) {
  std::vector<Mat<double>> omegas;
  if (rf.random_features())
    for (Eigen::Index h = 1; h <= r.H; ++h)
      omegas.push_back(rf_omega(rf.rf_D, static_cast<int>(r.d_attn), static_cast<std::uint64_t>(rf.rf_seed),
                                static_cast<int>(h), rf.rf_orthogonal));
  return omegas;
}

// Where sequence b, head h is: its queries at columns b·ℓ_x …, its keys at columns b·ℓ_z …, of which
// the first n = ℓ_b are real, its weights at columns (b·H + h)·ℓ_x … of A, its mask at columns m0 …
// (0 for a mask shared by all sequences, b·ℓ_x for one mask per sequence).
struct HeadBlock {
  Eigen::Index x0, z0, n, a0, m0;
};
// (b, h) for every sequence b and head h, the batched form of Alg. 5 L1 "for h ∈ [H]".
template <class F>
void for_each_head(const QkvRows& r, Eigen::Index l_x, Eigen::Index l_z, Eigen::Index mask_cols,
                   const std::vector<int>& keys, F&& f) {
  for (Eigen::Index b = 0; b < static_cast<Eigen::Index>(keys.size()); ++b)
    for (Eigen::Index h = 0; h < r.H; ++h)
      f(h, HeadBlock{b * l_x, b * l_z, keys[b], (b * r.H + h) * l_x, mask_cols == l_x ? 0 : b * l_x});
}

// Alg. 5 L1–L4 given every head's Q (rows rq.q(h) of Qs) and K, V (rows rkv.k(h), rkv.v(h) of KVs),
// Qs (·, B·ℓ_x), KVs (·, B·ℓ_z): A (ℓ_z, B·H·ℓ_x) and Y (H·d_mid, B·ℓ_x) into the cache, then
// X (d_out, B·ℓ_x) += W_o Y + b_o 1ᵀ. Self-attention passes its one stack [Q; K; V] as both.
// Key padding: the head sees only its n real keys, the first n rows of Alg. 4 L4's S, which is
// L5 with Mask_b[t_z, ·] = 0 for t_z > n: the other rows of A are exact zeros (exp(−∞) = 0).
template <class T>
void heads_forward(const MHAttentionW<const T>& W, const QkvRows& rq, const Mat<T>& Qs, const QkvRows& rkv,
                   const Mat<T>& KVs, const Mat<T>& mask, const std::vector<int>& keys, const AttentionOptions& variant,
                   Mat<T>& A, Mat<T>& Y, Ref<T> X) {
  const std::vector<Mat<double>> omegas = head_directions(variant, rq);
  const Eigen::Index B = static_cast<Eigen::Index>(keys.size()), l_z = mask.rows(), l_x = Qs.cols() / B;
  A.resize(l_z, B * rq.H * l_x);       // (ℓ_z, B·H·ℓ_x)
  Y.resize(rq.H * rq.d_mid, B * l_x);  // (H·d_mid, B·ℓ_x)
  // Alg. 5 L1: for h ∈ [H]:  L2: Y^h ← Attention(X̃, Z | W^h_qkv, Mask_b)   (each sequence b)
  for_each_head(rq, l_x, l_z, mask.cols(), keys, [&](Eigen::Index h, const HeadBlock& s) {
    auto A_h = A.middleCols(s.a0, l_x);                     // (ℓ_z, ℓ_x)
    auto Y_h = Y.block(h * rq.d_mid, s.x0, rq.d_mid, l_x);  // (d_mid, ℓ_x)
    // Alg. 4 L5 on the padded keys t_z > ℓ_b: S ← −∞, so their weight is exactly 0
    A_h.bottomRows(l_z - s.n).setZero();
    if (s.n == 0) {  // every key masked: all-zero weights, Y^h = 0
      Y_h.setZero();
      return;
    }
    // Algorithm 4-R's lines 4–13 instead (random-feature attention): no weights A are formed
    if (variant.random_features()) {
      A_h.topRows(s.n).setZero();
      rf_attention_forward<T>(Qs.block(rq.q(h), s.x0, rq.d_attn, l_x), KVs.block(rkv.k(h), s.z0, rkv.d_attn, s.n),
                              KVs.block(rkv.v(h), s.z0, rkv.d_mid, s.n), mask.block(0, s.m0, s.n, l_x), omegas[h], Y_h);
      return;
    }
    // relative bias (variant): B of the head over the real keys (positions from 1 in each sequence)
    const Mat<T> B_h = variant.relative() ? relative_bias<T>(relative_head<T>(variant, W, static_cast<int>(h) + 1), static_cast<int>(s.n),
                                                             static_cast<int>(l_x))
                                          : Mat<T>();
    // Alg. 4 L4–L6 on the real keys (L1–L3 ran for every head as the stacked products)
    attention_forward<T>(Qs.block(rq.q(h), s.x0, rq.d_attn, l_x), KVs.block(rkv.k(h), s.z0, rkv.d_attn, s.n),
                         KVs.block(rkv.v(h), s.z0, rkv.d_mid, s.n), mask.block(0, s.m0, s.n, l_x),
                         A_h.topRows(s.n), Y_h, alibi_slope<T>(variant.alibi, h, rq.H),
                         variant.relative() ? &B_h : nullptr);
  });
  // Alg. 5 L3: Y ← [Y^1; …; Y^H]   (Y^h was written into rows h·d_mid … of Y)
  // Alg. 5 L4: Ṽ = W_o Y + b_o 1ᵀ, and the caller's X ← X + Ṽ
  X.noalias() += W.W_o * Y;
  X.colwise() += W.b_o;
}

// The mirror of heads_forward: from dX (d_out, B·ℓ_x) = ∂loss/∂(X + Ṽ), assigns dW_o, db_o, and
// dQs, dKVs in the stacks' layouts (∂loss/∂K, ∂loss/∂V are 0 in the padded key columns).
// dY (H·d_mid, B·ℓ_x) and dS (ℓ_z, ℓ_x) are workspace. Self-attention passes dQKV as both dQs and dKVs.
template <class T>
void heads_backward(CRef<T> dX, const MHAttentionW<const T>& W, const QkvRows& rq, const Mat<T>& Qs,
                    const QkvRows& rkv, const Mat<T>& KVs, Eigen::Index l_x, const std::vector<int>& keys,
                    const Mat<T>& A, const Mat<T>& Y, MHAttentionW<T>& dW, Mat<T>& dY, Mat<T>& dS, Mat<T>& dQs,
                    Mat<T>& dKVs, const Mat<T>& mask, const AttentionOptions& variant) {
  const std::vector<Mat<double>> omegas = head_directions(variant, rq);
  const Eigen::Index l_z = A.rows();
  // Relative bias (variant): each cell's bucket; ∇W_rel is the sum over the heads' cells below.
  const Eigen::MatrixXi bucket = variant.relative() ? relative_buckets(variant, static_cast<int>(l_z), static_cast<int>(l_x))
                                                    : Eigen::MatrixXi();
  if (variant.relative()) dW.W_rel.setZero();
  const T sqrt_d = std::sqrt(static_cast<T>(rq.d_attn));
  dY.resize(Y.rows(), Y.cols());  // (H·d_mid, B·ℓ_x)
  dS.resize(l_z, l_x);            // (ℓ_z, ℓ_x)
  // ∂ of Alg. 5 L4: Ṽ = W_o Y + b_o 1ᵀ   (the caller's X ← X + Ṽ passes ∂X on unchanged)
  linear_backward<T>(dX, Y, W.W_o, dW.W_o, dW.b_o, dY);
  // ∂ of Alg. 5 L3 (Y's rows are the heads' Y^h) and L1–L2, each sequence b and head h
  for_each_head(rq, l_x, l_z, mask.cols(), keys, [&](Eigen::Index h, const HeadBlock& s) {
    auto dQ_h = dQs.block(rq.q(h), s.x0, rq.d_attn, l_x);     // (d_attn, ℓ_x)
    auto dK_h = dKVs.block(rkv.k(h), s.z0, rkv.d_attn, l_z);  // (d_attn, ℓ_z)
    auto dV_h = dKVs.block(rkv.v(h), s.z0, rkv.d_mid, l_z);   // (d_mid, ℓ_z)
    // ∂ of Alg. 4 L5 on the padded keys t_z > ℓ_b: weight exactly 0, so their K and V get no gradient
    dK_h.rightCols(l_z - s.n).setZero();
    dV_h.rightCols(l_z - s.n).setZero();
    if (s.n == 0) {  // every key masked: Y^h = 0 whatever Q is
      dQ_h.setZero();
      return;
    }
    // ∂ of Algorithm 4-R's lines 13–4 (random-feature attention)
    if (variant.random_features()) {
      rf_attention_backward<T>(dY.block(h * rq.d_mid, s.x0, rq.d_mid, l_x), Qs.block(rq.q(h), s.x0, rq.d_attn, l_x),
                               KVs.block(rkv.k(h), s.z0, rkv.d_attn, s.n), KVs.block(rkv.v(h), s.z0, rkv.d_mid, s.n),
                               mask.block(0, s.m0, s.n, l_x), omegas[h], dQ_h, dK_h.leftCols(s.n), dV_h.leftCols(s.n));
      return;
    }
    // ∂ of Alg. 4 L6–L4 on the real keys
    attention_backward<T>(dY.block(h * rq.d_mid, s.x0, rq.d_mid, l_x), Qs.block(rq.q(h), s.x0, rq.d_attn, l_x),
                          KVs.block(rkv.k(h), s.z0, rkv.d_attn, s.n), KVs.block(rkv.v(h), s.z0, rkv.d_mid, s.n),
                          A.block(0, s.a0, s.n, l_x), dS.topRows(s.n), dQ_h, dK_h.leftCols(s.n),
                          dV_h.leftCols(s.n));
    // ∂ of the relative bias: ∇B = ∇S·√d_attn (B is added to S/√d_attn), summed into its cells' buckets
    if (variant.relative())
      for (Eigen::Index tx = 0; tx < l_x; ++tx)
        for (Eigen::Index tz = 0; tz < s.n; ++tz) dW.W_rel(h, bucket(tz, tx)) += dS(tz, tx) * sqrt_d;
  });
}

}  // namespace

template <class T>
void mh_attention_forward(CRef<T> Xt, const MHAttentionW<const T>& W, int B, int l, const Mask& mask,
                          MHAttentionCache<T>& cache, Ref<T> X, const std::vector<int>* key_lengths,
                          const AttentionOptions& variant) {
  const QkvRows r = qkv_rows(W, Stack::QKV);
  if (Xt.cols() != static_cast<Eigen::Index>(B) * l || mask.rows() != l ||
      (mask.cols() != l && mask.cols() != static_cast<Eigen::Index>(B) * l))
    throw Error("MHAttention: the batch is not B·ℓ columns with an ℓ×ℓ mask (or one per sequence)");
  const bool rope = variant.rope_base > 0;
  if (rope && r.d_attn % 2 != 0) throw Error("RoPE needs an even d_attn");
  set_key_lengths(B, l, key_lengths, cache.keys);  // (B)
  cache.mask = mask.cast<T>();                     // (ℓ, ℓ) or (ℓ, B·ℓ)
  cache.variant = variant;
  stack_weights(W, r, cache.W_qkv, cache.b_qkv);   // (H·(2·d_attn + d_mid), d_e), (H·(2·d_attn + d_mid), 1)
  // Alg. 4 L1–L3 for every head at once: Q ← W_q X̃ + b_q 1ᵀ, K ← W_k X̃ + b_k 1ᵀ, V ← W_v X̃ + b_v 1ᵀ
  cache.QKV.resize(r.total(), Xt.cols());  // (H·(2·d_attn + d_mid), B·ℓ)
  linear_forward<T>(Xt, cache.W_qkv, cache.b_qkv, cache.QKV);
  // RoPE (variant): rotate Q[:, t] and K[:, t] by tθ_i, after the bias
  if (rope) {
    rope_tables<T>(r.d_attn, l, variant.rope_base, cache.rope_cos, cache.rope_sin);
    rope_rotate_stack<T>(r, l, cache.rope_cos, cache.rope_sin, T(1), cache.QKV);
  }
  // Alg. 4 L4–L6 for every sequence and head (ALiBi: + m_h·B), Alg. 5 L1–L4, and X ← X + Ṽ
  heads_forward(W, r, cache.QKV, r, cache.QKV, cache.mask, cache.keys, variant, cache.A, cache.Y, X);
}

template <class T>
void mh_attention_backward(CRef<T> dX, CRef<T> Xt, const MHAttentionW<const T>& W, int B, int l,
                           const MHAttentionCache<T>& cache, MHAttentionWorkspace<T>& ws, MHAttentionW<T>& dW,
                           Ref<T> dXt) {
  const QkvRows r = qkv_rows(W, Stack::QKV);
  if (cache.keys.size() != static_cast<size_t>(B) || cache.mask.rows() != l)
    throw Error("MHAttention: the backward's batch is not the forward's");
  ws.dQKV.resize(r.total(), Xt.cols());   // (H·(2·d_attn + d_mid), B·ℓ)
  ws.dW_qkv.resize(r.total(), Xt.rows());  // (H·(2·d_attn + d_mid), d_e)
  ws.db_qkv.resize(r.total(), 1);          // (H·(2·d_attn + d_mid), 1)
  // ∂ of Alg. 5 L4–L1 and Alg. 4 L6–L4, every sequence and head
  heads_backward<T>(dX, W, r, cache.QKV, r, cache.QKV, l, cache.keys, cache.A, cache.Y, dW, ws.dY, ws.dS,
                    ws.dQKV, ws.dQKV, cache.mask, cache.variant);
  // ∂ of RoPE (variant): ∂Q, ∂K rotated back by −tθ_i
  if (cache.variant.rope_base > 0) rope_rotate_stack<T>(r, l, cache.rope_cos, cache.rope_sin, T(-1), ws.dQKV);
  // ∂ of Alg. 4 L1–L3 for every head at once: Q ← W_q X̃ + b_q 1ᵀ, K ← W_k X̃ + b_k 1ᵀ, V ← W_v X̃ + b_v 1ᵀ
  linear_backward<T>(ws.dQKV, Xt, cache.W_qkv, ws.dW_qkv, ws.db_qkv, dXt);
  unstack_gradients(r, ws.dW_qkv, ws.db_qkv, dW);
}

template <class T>
void mh_cross_attention_forward(CRef<T> Xt, CRef<T> Z, const MHAttentionW<const T>& W, int B, int l_x, int l_z,
                                MHCrossAttentionCache<T>& cache, Ref<T> X, const std::vector<int>* z_lengths,
                                const AttentionOptions& variant) {
  const QkvRows rq = qkv_rows(W, Stack::Q), rkv = qkv_rows(W, Stack::KV);
  if (Xt.cols() != static_cast<Eigen::Index>(B) * l_x || Z.cols() != static_cast<Eigen::Index>(B) * l_z)
    throw Error("MHAttention: the batch is not B·ℓ_x query columns and B·ℓ_z context columns");
  set_key_lengths(B, l_z, z_lengths, cache.keys);  // (B)
  cache.mask.setOnes(l_z, l_x);                    // (ℓ_z, ℓ_x) Alg. 8 L16: Mask ≡ 1
  cache.variant = variant;
  stack_weights(W, rq, cache.W_q, cache.b_q);      // (H·d_attn, d_x), (H·d_attn, 1)
  stack_weights(W, rkv, cache.W_kv, cache.b_kv);   // (H·(d_attn + d_mid), d_z), (H·(d_attn + d_mid), 1)
  // Alg. 4 L1 for every head at once: Q ← W_q X̃ + b_q 1ᵀ
  cache.Q.resize(rq.total(), Xt.cols());  // (H·d_attn, B·ℓ_x)
  linear_forward<T>(Xt, cache.W_q, cache.b_q, cache.Q);
  // Alg. 4 L2–L3 for every head at once: K ← W_k Z + b_k 1ᵀ, V ← W_v Z + b_v 1ᵀ
  cache.KV.resize(rkv.total(), Z.cols());  // (H·(d_attn + d_mid), B·ℓ_z)
  linear_forward<T>(Z, cache.W_kv, cache.b_kv, cache.KV);
  // Alg. 4 L4–L6 for every pair and head, Alg. 5 L1–L4, and Alg. 8 L16: X ← X + Ṽ
  heads_forward(W, rq, cache.Q, rkv, cache.KV, cache.mask, cache.keys, cache.variant, cache.A, cache.Y, X);  // no position variant (attention_options(c, false))
}

template <class T>
void mh_cross_attention_backward(CRef<T> dX, CRef<T> Xt, CRef<T> Z, const MHAttentionW<const T>& W, int B, int l_x,
                                 int l_z, const MHCrossAttentionCache<T>& cache, MHCrossAttentionWorkspace<T>& ws,
                                 MHAttentionW<T>& dW, Ref<T> dXt, Ref<T> dZ) {
  const QkvRows rq = qkv_rows(W, Stack::Q), rkv = qkv_rows(W, Stack::KV);
  if (cache.keys.size() != static_cast<size_t>(B) || cache.mask.rows() != l_z || cache.mask.cols() != l_x)
    throw Error("MHAttention: the backward's batch is not the forward's");
  ws.dQ.resize(rq.total(), Xt.cols());     // (H·d_attn, B·ℓ_x)
  ws.dKV.resize(rkv.total(), Z.cols());    // (H·(d_attn + d_mid), B·ℓ_z)
  ws.dW_q.resize(rq.total(), Xt.rows());   // (H·d_attn, d_x)
  ws.db_q.resize(rq.total(), 1);           // (H·d_attn, 1)
  ws.dW_kv.resize(rkv.total(), Z.rows());  // (H·(d_attn + d_mid), d_z)
  ws.db_kv.resize(rkv.total(), 1);         // (H·(d_attn + d_mid), 1)
  // ∂ of Alg. 5 L4–L1 and Alg. 4 L6–L4, every pair and head
  heads_backward<T>(dX, W, rq, cache.Q, rkv, cache.KV, l_x, cache.keys, cache.A, cache.Y, dW, ws.dY, ws.dS,
                    ws.dQ, ws.dKV, cache.mask, cache.variant);
  // ∂ of Alg. 4 L2–L3 for every head at once: K ← W_k Z + b_k 1ᵀ, V ← W_v Z + b_v 1ᵀ
  linear_backward<T>(ws.dKV, Z, cache.W_kv, ws.dW_kv, ws.db_kv, dZ);
  // ∂ of Alg. 4 L1 for every head at once: Q ← W_q X̃ + b_q 1ᵀ
  linear_backward<T>(ws.dQ, Xt, cache.W_q, ws.dW_q, ws.db_q, dXt);
  unstack_gradients(rkv, ws.dW_kv, ws.db_kv, dW);
  unstack_gradients(rq, ws.dW_q, ws.db_q, dW);
}

template void attention_forward<float>(CRef<float>, CRef<float>, CRef<float>, CRef<float>, Ref<float>, Ref<float>,
                                       float, const Mat<float>*);
template void attention_forward<double>(CRef<double>, CRef<double>, CRef<double>, CRef<double>, Ref<double>,
                                        Ref<double>, double, const Mat<double>*);
template void attention_backward<float>(CRef<float>, CRef<float>, CRef<float>, CRef<float>, CRef<float>, Ref<float>,
                                        Ref<float>, Ref<float>, Ref<float>);
template void attention_backward<double>(CRef<double>, CRef<double>, CRef<double>, CRef<double>, CRef<double>,
                                         Ref<double>, Ref<double>, Ref<double>, Ref<double>);
#define SF_MH_ATTENTION(T)                                                                                     \
  template void mh_attention_forward<T>(CRef<T>, const MHAttentionW<const T>&, int, int, const Mask&,               \
                                        MHAttentionCache<T>&, Ref<T>, const std::vector<int>*,                      \
                                        const AttentionOptions&);                                                   \
  template void mh_attention_backward<T>(CRef<T>, CRef<T>, const MHAttentionW<const T>&, int, int,                  \
                                         const MHAttentionCache<T>&, MHAttentionWorkspace<T>&, MHAttentionW<T>&,    \
                                         Ref<T>);                                                                   \
  template void mh_cross_attention_forward<T>(CRef<T>, CRef<T>, const MHAttentionW<const T>&, int, int, int,        \
                                              MHCrossAttentionCache<T>&, Ref<T>, const std::vector<int>*,           \
                                              const AttentionOptions&);                                             \
  template void mh_cross_attention_backward<T>(CRef<T>, CRef<T>, CRef<T>, const MHAttentionW<const T>&, int, int,   \
                                               int, const MHCrossAttentionCache<T>&, MHCrossAttentionWorkspace<T>&, \
                                               MHAttentionW<T>&, Ref<T>, Ref<T>);
SF_MH_ATTENTION(float)
SF_MH_ATTENTION(double)
#undef SF_MH_ATTENTION

}  // namespace sf
