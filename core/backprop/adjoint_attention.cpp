// Stepformer's backward listing of Algorithm 4 (not in the paper): the adjoint of Attention,
// lines 6, 5, 4, 3, 2, 1 (the order they run).
//   6̄: ∇V ← ∇Ṽ Aᵀ;  ∇A ← Vᵀ ∇Ṽ;  ∇S ← (A ⊙ (∇A − 1 (1ᵀ (A ⊙ ∇A)))) / √d_attn    (A = softmax(S/√d_attn))
//   5̄: ∇S[t_z, t_x] ← 0 where ¬Mask[t_z, t_x]                   (a −∞ score gets no gradient)
//   4̄: ∇Q ← K ∇S;  ∇K ← Q ∇Sᵀ
//   3̄: ∇W_v ← ∇V Zᵀ;  ∇b_v ← ∇V 1;  ∇Z ← W_vᵀ ∇V
//   2̄: ∇W_k ← ∇K Zᵀ;  ∇b_k ← ∇K 1;  ∇Z ← ∇Z + W_kᵀ ∇K
//   1̄: ∇W_q ← ∇Q Xᵀ;  ∇b_q ← ∇Q 1;  ∇X ← W_qᵀ ∇Q
// Variants: RoPE rotated Q and K after the bias, so 2̄ and 1̄ first rotate ∇K, ∇Q back (Rᵀ = R⁻¹);
// ALiBi adds the constant m_h·B inside the softmax, so 6̄ is unchanged. The relative bias (T5,
// issue 25) adds a learned B = W_rel[h, bucket(t_z − t_x)]: 5̄ then gives ∇B = ∇S·√d_attn and
// ∇W_rel[h, k] = Σ of ∇B over the cells of bucket k (a sub-step of 5̄).
// Random-feature attention (Algorithm 4-R, issue 25) ran instead of lines 4–6: its own adjoint lines
// (adjoint_rf_attention.cpp), then the same 3̄, 2̄, 1̄ (adjoint_qkv_projections, below).
#include <cmath>

#include "core/backprop/adjoints.hpp"
#include "core/model/error.hpp"
#include "core/trace/value_keys.hpp"

namespace sf {

namespace {

const char* const kANote = "A is softmax(S/√d_attn), line 6's attention weights (a column per query t_x).";
const char* const kAlibiNote =
    "ALiBi (variant): line 6 adds the constant m_h·B to S/√d_attn before the softmax, so its adjoint is unchanged.";
const char* const kRelativeNote =
    "Relative position bias (variant, T5; not in the paper): B was added to S/√d_attn, so ∇B = ∇S·√d_attn, and "
    "W_rel[h, k] sits in every cell whose bucket(t_z − t_x) is k: its gradient sums ∇B over them (masked cells add 0).";
const char* const kMaskNote =
    "Adjoint of line 5: where ¬Mask[t_z, t_x] the score was set to −∞, so it has no gradient: ∇S is exactly 0 there.";
const char* const kHeadShareNote =
    "H_kv < H (variant): this query head's term only; the heads of its key/value group add theirs (Algorithm 5's "
    "adjoint binds the group's sum).";
const char* const kPartialZNote = "Partial: line 3's path only (∇Z ← W_vᵀ ∇V); the adjoint of line 2 adds W_kᵀ ∇K.";
const char* const kSelfNote =
    "Self-attention: X and Z are the same X̃, so Algorithm 5's adjoint adds this head's ∇X and ∇Z into one ∇X (line 2).";

// RoPE's rotation undone: coordinates (2i−1, 2i) of column j (position t = pos0 + j + 1) turned by
// −t·θ_i, θ_i = base^{−2(i−1)/d_attn}: the adjoint of a rotation is its inverse. The angle is
// computed in double and cast, as the forward's tables are.
template <class T>
Mat<T> rope_rotate_back(const Mat<T>& G, int pos0, double base) {
  Mat<T> out = G;  // (d_attn, ℓ)
  const Eigen::Index d = G.rows();
  for (Eigen::Index j = 0; j < G.cols(); ++j) {
    const double t = static_cast<double>(pos0 + j + 1);
    for (Eigen::Index i = 0; i < d / 2; ++i) {
      const double angle = t * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
      const T c = static_cast<T>(std::cos(angle)), s = -static_cast<T>(std::sin(angle));
      const T a = G(2 * i, j), b = G(2 * i + 1, j);
      out(2 * i, j) = a * c - b * s;
      out(2 * i + 1, j) = a * s + b * c;
    }
  }
  return out;
}

// Line 6's softmax adjoint, column by column: ∇S = (∇A − 1 (1ᵀ (A ⊙ ∇A))) ⊙ A / √d_attn. A masked
// entry has A = 0, so its ∇S is an exact 0 already.
template <class T>
Mat<T> softmax_adjoint(CView<T> A, const Mat<T>& dA, T scale) {
  Mat<T> dS(A.rows(), A.cols());  // (ℓ_z, ℓ_x)
  for (Eigen::Index tx = 0; tx < A.cols(); ++tx) {
    const T a_dot_da = A.col(tx).dot(dA.col(tx));  // 1ᵀ (A ⊙ ∇A) of column t_x
    dS.col(tx).array() = (dA.col(tx).array() - a_dot_da) * A.col(tx).array() * scale;
  }
  return dS;
}

// A head's term of a parameter gradient, with the H_kv < H note when the tensor is shared.
template <class T>
Value head_term(const std::string& name, const Mat<T>& g, bool shared) {
  Value v = tv(name, g);
  return shared ? with_note(std::move(v), kHeadShareNote) : v;
}

// Relative bias (variant): ∇B = ∇S·√d_attn (B was added to S/√d_attn), and dW_rel (1, buckets) ←
// ∇W_rel[h, k] = Σ_{bucket(t_z − t_x) = k} ∇B[t_z, t_x], traced as a sub-step of line 5's adjoint.
template <class T>
void relative_bias_adjoint(const AttentionOptions& v, const Mat<T>& dS, T scale, Tracer* tr, Mat<T>& dW_rel) {
  const Mat<T> dB = dS / scale;  // (ℓ_z, ℓ_x)
  const Eigen::MatrixXi bucket = relative_buckets(v, static_cast<int>(dS.rows()), static_cast<int>(dS.cols()));
  dW_rel.setZero(1, v.rel_buckets);  // (1, buckets)
  for (Eigen::Index tx = 0; tx < dB.cols(); ++tx)
    for (Eigen::Index tz = 0; tz < dB.rows(); ++tz) dW_rel(0, bucket(tz, tx)) += dB(tz, tx);
  if (!tr) return;
  tr->substep(lines::attention::mask.adjoint(), "variant: relative bias — ∇B ← ∇S·√d_attn",
              {tv("∇B", dB, Axis::TokenZ, Axis::TokenX)});
  tr->substep(lines::attention::mask.adjoint(), "variant: relative bias — ∇W_rel[h, k] ← Σ_{bucket(t_z − t_x) = k} ∇B",
              {with_note(tv("∇W_rel[h, :]", dW_rel), kRelativeNote)});
}

}  // namespace

template <class T>
void adjoint_attention(const AttentionForward<T>& f, const AttentionHeadW<const T>& W, CView<T> dVt,
                       AttentionHeadW<T>& dW, Ref<T> dX, Ref<T> dZ, Tracer* tr, Mat<T>* dW_rel) {
  // Algorithm 4-R (variant) ran instead of lines 4–6: its own adjoint lines, then the same 3̄, 2̄, 1̄
  if (f.variant.random_features()) return adjoint_rf_attention<T>(f, W, dVt, dW, dX, dZ, tr);
  const TraceBackward backward(tr);
  TraceFrame frame(tr, 4,
                   tr ? std::vector<Value>{tv("∇Ṽ", dVt, Axis::Feature, Axis::TokenX),
                                           tv("Q", f.Q, Axis::Feature, Axis::TokenX),
                                           tv("K", f.K, Axis::Feature, Axis::TokenZ),
                                           tv("V", f.V, Axis::Feature, Axis::TokenZ), tv(keys::attention_weights, f.A),
                                           tmask("Mask", f.mask, Axis::TokenZ, Axis::TokenX),
                                           tparam<T>(tr, "W_q", W.W_q), tparam<T>(tr, "W_k", W.W_k),
                                           tparam<T>(tr, "W_v", W.W_v)}
                      : std::vector<Value>{});
  const T scale = T(1) / std::sqrt(static_cast<T>(f.Q.rows()));  // 1/√d_attn

  // Adjoint of L6: Ṽ = V · A, A = softmax(S / √d_attn)
  const Mat<T> dV = dVt * f.A.transpose();  // (d_mid, ℓ_z)
  const Mat<T> dA = f.V.transpose() * dVt;  // (ℓ_z, ℓ_x)
  Mat<T> dS = softmax_adjoint<T>(f.A, dA, scale);  // (ℓ_z, ℓ_x)
  if (tr) {
    const Value v_dV = tv("∇V", dV, Axis::Feature, Axis::TokenZ);
    const Value v_dA = with_note(tv("∇A", dA, Axis::TokenZ, Axis::TokenX), kANote);
    Value v_dS = tv("∇S", dS, Axis::TokenZ, Axis::TokenX);
    if (f.variant.alibi) v_dS = with_note(std::move(v_dS), kAlibiNote);
    tr->substep(lines::attention::V_tilde.adjoint(), "∇V ← ∇Ṽ Aᵀ", {v_dV});
    tr->substep(lines::attention::V_tilde.adjoint(), "∇A ← Vᵀ ∇Ṽ", {v_dA});
    tr->substep(lines::attention::V_tilde.adjoint(), "∇S ← (A ⊙ (∇A − 1 (1ᵀ (A ⊙ ∇A)))) / √d_attn", {v_dS});
    tr->line(lines::attention::V_tilde.adjoint(), {v_dV, v_dA, v_dS});
  }
  // Adjoint of L5: ∀t_z, t_x, if ¬Mask[t_z, t_x] then S[t_z, t_x] ← −∞
  dS = (f.mask.array() != 0).select(dS, T(0));
  if (f.variant.relative()) {
    if (!dW_rel) throw Error("Attention's adjoint: a relative position bias needs somewhere to put ∇W_rel[h, :]");
    relative_bias_adjoint<T>(f.variant, dS, scale, tr, *dW_rel);
  }
  if (tr) tr->line(lines::attention::mask.adjoint(), {with_note(tv("∇S", dS, Axis::TokenZ, Axis::TokenX), kMaskNote)});
  // Adjoint of L4: S ← Kᵀ Q
  const Mat<T> dQ = f.K * dS;              // (d_attn, ℓ_x)
  const Mat<T> dK = f.Q * dS.transpose();  // (d_attn, ℓ_z)
  if (tr) tr->line(lines::attention::S.adjoint(), {tv("∇Q", dQ, Axis::Feature, Axis::TokenX), tv("∇K", dK, Axis::Feature, Axis::TokenZ)});
  adjoint_qkv_projections<T>(f, W, dQ, dK, dV, dW, dX, dZ, tr,
                             {lines::attention::Q.adjoint(), lines::attention::K.adjoint(), lines::attention::V.adjoint()});
}

template <class T>
void adjoint_qkv_projections(const AttentionForward<T>& f, const AttentionHeadW<const T>& W, const Mat<T>& dQ,
                             const Mat<T>& dK, const Mat<T>& dV, AttentionHeadW<T>& dW, Ref<T> dX, Ref<T> dZ,
                             Tracer* tr, const QkvLines& L) {
  const bool rope = f.variant.rope_base > 0;
  const bool shared_kv = f.variant.H_kv > 0;  // set by Algorithm 5 only when H_kv < H
  const bool self = dX.data() == dZ.data();
  // Adjoint of L3: V ← W_v Z + b_v 1ᵀ
  const Mat<T> dW_v = dV * f.Z.transpose();  // (d_mid, d_z)
  const Mat<T> db_v = dV.rowwise().sum();    // (d_mid, 1)
  Mat<T> dZ_h = W.W_v.transpose() * dV;      // (d_z, ℓ_z) line 3's path of ∇Z
  if (tr)
    tr->line(L.V, {head_term<T>("∇W_v", dW_v, shared_kv), head_term<T>("∇b_v", db_v, shared_kv),
                   with_note(tv("∇Z", dZ_h, Axis::Feature, Axis::TokenZ), kPartialZNote)});
  // Adjoint of L2: K ← W_k Z + b_k 1ᵀ   (RoPE: K was then rotated; rotate ∇K back first)
  const Mat<T> dK_pre = rope ? rope_rotate_back<T>(dK, f.variant.z_pos0, f.variant.rope_base) : dK;
  if (tr && rope)
    tr->substep(L.K, "variant: RoPE — rotate ∇K back", {tv("∇(W_k Z + b_k 1ᵀ)", dK_pre, Axis::Feature, Axis::TokenZ)});
  const Mat<T> dW_k = dK_pre * f.Z.transpose();  // (d_attn, d_z)
  const Mat<T> db_k = dK_pre.rowwise().sum();    // (d_attn, 1)
  dZ_h.noalias() += W.W_k.transpose() * dK_pre;
  if (tr)
    tr->line(L.K, {head_term<T>("∇W_k", dW_k, shared_kv), head_term<T>("∇b_k", db_k, shared_kv),
                   self ? with_note(tv("∇Z", dZ_h, Axis::Feature, Axis::TokenZ), kSelfNote)
                        : tv("∇Z", dZ_h, Axis::Feature, Axis::TokenZ)});
  // Adjoint of L1: Q ← W_q X + b_q 1ᵀ   (RoPE: rotate ∇Q back first)
  const Mat<T> dQ_pre = rope ? rope_rotate_back<T>(dQ, f.variant.x_pos0, f.variant.rope_base) : dQ;
  if (tr && rope)
    tr->substep(L.Q, "variant: RoPE — rotate ∇Q back", {tv("∇(W_q X + b_q 1ᵀ)", dQ_pre, Axis::Feature, Axis::TokenX)});
  const Mat<T> dW_q = dQ_pre * f.X.transpose();  // (d_attn, d_x)
  const Mat<T> db_q = dQ_pre.rowwise().sum();    // (d_attn, 1)
  const Mat<T> dX_h = W.W_q.transpose() * dQ_pre;  // (d_x, ℓ_x)
  if (tr)
    tr->line(L.Q, {tv("∇W_q", dW_q), tv("∇b_q", db_q),
                   self ? with_note(tv("∇X", dX_h, Axis::Feature, Axis::TokenX), kSelfNote)
                        : tv("∇X", dX_h, Axis::Feature, Axis::TokenX)});
  // Into the caller's gradients (a shared W_k, W_v, and X̃ = X = Z, accumulate)
  dW.W_q += dW_q;
  dW.b_q += db_q;
  dW.W_k += dW_k;
  dW.b_k += db_k;
  dW.W_v += dW_v;
  dW.b_v += db_v;
  dZ += dZ_h;
  dX += dX_h;
}

#define SF_ADJOINT_ATTENTION(T)                                                                                \
  template void adjoint_attention<T>(const AttentionForward<T>&, const AttentionHeadW<const T>&, CView<T>,    \
                                     AttentionHeadW<T>&, Ref<T>, Ref<T>, Tracer*, Mat<T>*);      \
  template void adjoint_qkv_projections<T>(const AttentionForward<T>&, const AttentionHeadW<const T>&, const Mat<T>&, \
                                           const Mat<T>&, const Mat<T>&, AttentionHeadW<T>&, Ref<T>, Ref<T>, Tracer*, \
                                           const QkvLines&);
SF_ADJOINT_ATTENTION(float)
SF_ADJOINT_ATTENTION(double)
#undef SF_ADJOINT_ATTENTION

}  // namespace sf
