// Stepformer's backward listing of Algorithm 5 (not in the paper): the adjoint of MHAttention.
//   4̄: ∇W_o ← ∇Ṽ Yᵀ;  ∇b_o ← ∇Ṽ 1;  ∇Y ← W_oᵀ ∇Ṽ
//   3̄: [∇Y^1; …; ∇Y^H] ← ∇Y
//   for h = H, …, 1 (1̄):
//     2̄: ∇X, ∇Z ← ∇X, ∇Z + Attention's adjoint(∇Y^h)      (Algorithm 4's backward listing)
// Self-attention (X = Z = X̃) sums both into ∇X̃; cross-attention (Algorithm 8 line 16) sends ∇X to
// the decoder's stream and ∇Z to the encoder's output. With H_kv < H the query heads of a key/value
// group g accumulate ∇W_k^g, ∇W_v^g.
#include <cmath>
#include <set>

#include "core/algorithms/random_features.hpp"
#include "core/backprop/adjoints.hpp"

namespace sf {

namespace {

const char* const kPartialHeadsNote =
    "Partial: summed over heads H … h so far; the adjoints of the heads below h add theirs.";
const char* const kSelfNote = "Self-attention: Z is X, so ∇X holds both paths (∇X + ∇Z of each head).";
const char* const kGroupNote =
    "H_kv < H (variant): the key/value group g's gradient, summed over its query heads run so far.";

// The number of distinct key/value heads among W's heads: H_kv when it is below H (the heads of a
// group view the same W_k), else 0 (one per query head: nothing shared).
template <class T>
int shared_kv_heads(const MHAttentionW<const T>& W) {
  std::set<const T*> distinct;
  for (const AttentionHeadW<const T>& w : W.heads) distinct.insert(w.W_k.data());
  const int H_kv = static_cast<int>(distinct.size());
  return H_kv < static_cast<int>(W.heads.size()) ? H_kv : 0;
}

// Head h's variant (1-based h): ALiBi's slope m_h = 2^{−8h/H}, as the forward gives each head.
AttentionOptions head_variant(AttentionOptions v, int h, int H, int H_kv) {
  if (v.alibi) v.m = std::pow(2.0, -8.0 * h / H);
  v.H_kv = H_kv;
  return v;
}

// Algorithm 4-R (variant): head h's ω (1-based h), as the forward draws it; empty for Algorithm 4.
Mat<double> head_omega(const AttentionOptions& v, int h, Eigen::Index d_attn) {
  if (!v.random_features()) return {};
  return rf_omega(v.rf_D, static_cast<int>(d_attn), static_cast<std::uint64_t>(v.rf_seed), h, v.rf_orthogonal);
}

}  // namespace

template <class T>
MHAttentionForward<T> self_attention_forward(const MHAttentionCache<T>& cache, const MHAttentionW<const T>& W,
                                             CView<T> Xt, const Mask& mask) {
  const int H = static_cast<int>(W.heads.size());
  const Eigen::Index d_attn = W.heads[0].W_q.rows(), d_mid = W.heads[0].W_v.rows(), l = Xt.cols();
  const int H_kv = shared_kv_heads(W);
  MHAttentionForward<T> f{Xt, Xt, cache.Y, mask, {}};
  f.heads.reserve(H);
  // cache.QKV stacks [Q^1; …; Q^H; K^1; …; K^H; V^1; …; V^H]; cache.A has head h at columns (h − 1)·ℓ
  for (int h = 0; h < H; ++h)
    f.heads.push_back({Xt, Xt, cache.QKV.middleRows(h * d_attn, d_attn),
                       cache.QKV.middleRows((H + h) * d_attn, d_attn),
                       cache.QKV.middleRows(2 * H * d_attn + h * d_mid, d_mid), cache.A.middleCols(h * l, l), mask,
                       head_variant(cache.variant, h + 1, H, H_kv), head_omega(cache.variant, h + 1, d_attn)});
  return f;
}

template <class T>
MHAttentionForward<T> cross_attention_forward(const MHCrossAttentionCache<T>& cache, const MHAttentionW<const T>& W,
                                              CView<T> Xt, CView<T> Z, const Mask& mask) {
  const int H = static_cast<int>(W.heads.size());
  const Eigen::Index d_attn = W.heads[0].W_q.rows(), d_mid = W.heads[0].W_v.rows(), l_x = Xt.cols();
  const int H_kv = shared_kv_heads(W);
  MHAttentionForward<T> f{Xt, Z, cache.Y, mask, {}};
  f.heads.reserve(H);
  // cache.Q stacks [Q^1; …; Q^H], cache.KV [K^1; …; K^H; V^1; …; V^H]; no RoPE, no ALiBi (cache.variant is
  // attention_options(c, false): H_kv and Algorithm 4-R's D, seed only)
  for (int h = 0; h < H; ++h)
    f.heads.push_back({Xt, Z, cache.Q.middleRows(h * d_attn, d_attn), cache.KV.middleRows(h * d_attn, d_attn),
                       cache.KV.middleRows(H * d_attn + h * d_mid, d_mid), cache.A.middleCols(h * l_x, l_x), mask,
                       head_variant(cache.variant, h + 1, H, H_kv),
                       head_omega(cache.variant, h + 1, d_attn)});
  return f;
}

template <class T>
void adjoint_mh_attention(const MHAttentionForward<T>& f, const MHAttentionW<const T>& W, CView<T> dVt,
                          MHAttentionW<T>& dW, Ref<T> dX, Ref<T> dZ, Tracer* tr) {
  const TraceBackward backward(tr);
  TraceFrame frame(tr, 5,
                   tr ? std::vector<Value>{tv("∇Ṽ", dVt, Axis::Feature, Axis::TokenX),
                                           tv("Y", f.Y, Axis::Feature, Axis::TokenX),
                                           tmask("Mask", f.mask, Axis::TokenZ, Axis::TokenX),
                                           tparam<T>(tr, "W_o", W.W_o)}
                      : std::vector<Value>{});
  const int H = static_cast<int>(W.heads.size());
  const Eigen::Index d_mid = W.heads[0].W_v.rows();
  const bool self = dX.data() == dZ.data();
  // Adjoint of L4: Ṽ = W_o Y + b_o 1ᵀ
  const Mat<T> dW_o = dVt * f.Y.transpose();     // (d_out, H·d_mid)
  const Mat<T> db_o = dVt.rowwise().sum();       // (d_out, 1)
  const Mat<T> dY = W.W_o.transpose() * dVt;     // (H·d_mid, ℓ_x)
  if (tr) tr->line(lines::mh_attention::V_tilde.adjoint(), {tv("∇W_o", dW_o), tv("∇b_o", db_o), tv("∇Y", dY, Axis::Feature, Axis::TokenX)});
  // Adjoint of L3: Y ← [Y^1; Y^2; …; Y^H]
  if (tr) {
    std::vector<Value> parts;
    for (int h = 1; h <= H; ++h)
      parts.push_back(tv("∇Y^" + std::to_string(h), dY.middleRows((h - 1) * d_mid, d_mid), Axis::Feature, Axis::TokenX));
    tr->line(lines::mh_attention::Y.adjoint(), std::move(parts));
  }
  // For h = H, …, 1: adjoint of L1 (the loop) and L2: Y^h ← Attention(X, Z | W^h_qkv, Mask)
  Mat<T> gX = Mat<T>::Zero(f.X.rows(), f.X.cols());  // ∇X summed over the heads run so far
  Mat<T> gZ_own;                                      // cross-attention: ∇Z, likewise (self: gX holds both)
  if (!self) gZ_own.setZero(f.Z.rows(), f.Z.cols());
  Mat<T>& gZ = self ? gX : gZ_own;
  for (int h = H; h >= 1; --h) {
    const TraceIndex ih(tr, &Indices::h, h);
    if (tr) tr->line(lines::mh_attention::for_h.adjoint(), {tscalar("h", h)});
    Mat<T> dW_rel_h;  // (1, buckets) the relative bias's ∇W_rel[h, :] (variant; else unused)
    adjoint_attention<T>(f.heads[h - 1], W.heads[h - 1], dY.middleRows((h - 1) * d_mid, d_mid), dW.heads[h - 1], gX,
                         gZ, tr, &dW_rel_h);
    if (f.heads[h - 1].variant.relative()) dW.W_rel.row(h - 1) += dW_rel_h;
    if (!tr) continue;
    std::vector<Value> v;
    if (self) {
      v.push_back(with_note(tv("∇X", gX, Axis::Feature, Axis::TokenX), std::string(kPartialHeadsNote) + " " + kSelfNote));
    } else {
      v.push_back(with_note(tv("∇X", gX, Axis::Feature, Axis::TokenX), kPartialHeadsNote));
      v.push_back(with_note(tv("∇Z", gZ, Axis::Feature, Axis::TokenZ), kPartialHeadsNote));
    }
    if (f.heads[h - 1].variant.H_kv > 0) {
      v.push_back(with_note(tv("∇W_k^g", dW.heads[h - 1].W_k), kGroupNote));
      v.push_back(with_note(tv("∇W_v^g", dW.heads[h - 1].W_v), kGroupNote));
    }
    tr->line(lines::mh_attention::Y_h.adjoint(), std::move(v));
  }
  dW.W_o += dW_o;
  dW.b_o += db_o;
  dX += gX;
  if (!self) dZ += gZ;
}

#define SF_ADJOINT_MH_ATTENTION(T)                                                                                   \
  template MHAttentionForward<T> self_attention_forward<T>(const MHAttentionCache<T>&, const MHAttentionW<const T>&, \
                                                           CView<T>, const Mask&);                                   \
  template MHAttentionForward<T> cross_attention_forward<T>(const MHCrossAttentionCache<T>&,                         \
                                                            const MHAttentionW<const T>&, CView<T>, CView<T>,        \
                                                            const Mask&);                                            \
  template void adjoint_mh_attention<T>(const MHAttentionForward<T>&, const MHAttentionW<const T>&, CView<T>,        \
                                        MHAttentionW<T>&, Ref<T>, Ref<T>, Tracer*);
SF_ADJOINT_MH_ATTENTION(float)
SF_ADJOINT_MH_ATTENTION(double)
#undef SF_ADJOINT_MH_ATTENTION

}  // namespace sf
