// Algorithm 4: Ṽ ← Attention(X, Z | W_qkv, Mask)
//   /* Computes a single (masked) self- or cross-attention head. */
//   Input: X ∈ ℝ^{d_x×ℓ_x}, Z ∈ ℝ^{d_z×ℓ_z}, primary and context sequence.
//   Output: Ṽ ∈ ℝ^{d_out×ℓ_x}, updated representations of tokens in X, folding in Z.
//   Parameters: W_q ∈ ℝ^{d_attn×d_x}, b_q ∈ ℝ^{d_attn}; W_k ∈ ℝ^{d_attn×d_z}, b_k ∈ ℝ^{d_attn};
//               W_v ∈ ℝ^{d_out×d_z}, b_v ∈ ℝ^{d_out}.
//   Hyperparameters: Mask ∈ {0,1}^{ℓ_z×ℓ_x}, eq. (3).
#include <cmath>

#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"
#include "core/parallel/parallel.hpp"
#include "core/trace/value_keys.hpp"

namespace sf {

namespace {

const char* const kRopeNote =
    "RoPE (variant, encyclopedia article 004): coordinates (2i−1, 2i) of column t are rotated by t·θ_i, "
    "θ_i = rope_base^{−2(i−1)/d_attn}.";
const char* const kAlibiNote =
    "ALiBi (variant, encyclopedia article 004): B[t_z, t_x] = −|t_z − t_x|, m_h = 2^{−8h/H}; masked entries stay −∞.";

const char* const kRelativeNote =
    "Relative position bias (variant, T5 — Raffel et al.; not in the paper): B[t_z, t_x] = W_rel[h, bucket(t_z − t_x)], "
    "the same along each diagonal (a Toeplitz matrix); added after the scaling by 1/√d_attn (T5 itself does not "
    "scale S). Masked entries stay −∞.";

}  // namespace

// Algorithm 4's events for a head whose record is complete (computed here or elsewhere, e.g. the
// GPU's teaching form): Enter with the inputs, lines 1–5, line 6's sub-steps and line 6.
template <class T>
void trace_attention_record(Tracer* tr, const Mat<T>& X, const Mat<T>& Z, const AttentionHeadW<const T>& W,
                            const Mask& mask, const AttentionRecord<T>& r) {
  if (!tr) return;
  TraceFrame frame(tr, 4,
                   {tv("X", X, Axis::Feature, Axis::TokenX), tv("Z", Z, Axis::Feature, Axis::TokenZ), tparam<T>(tr, "W_q", W.W_q),
                    tparam<T>(tr, "b_q", W.b_q), tparam<T>(tr, "W_k", W.W_k), tparam<T>(tr, "b_k", W.b_k), tparam<T>(tr, "W_v", W.W_v), tparam<T>(tr, "b_v", W.b_v),
                    tmask("Mask", mask, Axis::TokenZ, Axis::TokenX)});
  const T d_attn = static_cast<T>(W.W_q.rows());
  // L1: Q ← W_q X + b_q 1ᵀ   (RoPE: then column t rotated by t·θ_i)
  if (r.Q_pre.size() > 0) tr->substep(lines::attention::Q, "W_q X + b_q 1ᵀ, before RoPE", {tv("W_q X + b_q 1ᵀ", r.Q_pre, Axis::Feature, Axis::TokenX)});
  tr->line(lines::attention::Q, {r.Q_pre.size() > 0 ? with_note(tv("Q", r.Q, Axis::Feature, Axis::TokenX), kRopeNote)
                                      : tv("Q", r.Q, Axis::Feature, Axis::TokenX)});
  // L2: K ← W_k Z + b_k 1ᵀ   (RoPE: then column t rotated by t·θ_i)
  if (r.K_pre.size() > 0) tr->substep(lines::attention::K, "W_k Z + b_k 1ᵀ, before RoPE", {tv("W_k Z + b_k 1ᵀ", r.K_pre, Axis::Feature, Axis::TokenZ)});
  tr->line(lines::attention::K, {r.K_pre.size() > 0 ? with_note(tv("K", r.K, Axis::Feature, Axis::TokenZ), kRopeNote)
                                      : tv("K", r.K, Axis::Feature, Axis::TokenZ)});
  // L3: V ← W_v Z + b_v 1ᵀ
  tr->line(lines::attention::V, {tv("V", r.V, Axis::Feature, Axis::TokenZ)});
  // L4: S ← Kᵀ Q
  tr->line(lines::attention::S, {tv("S", r.S, Axis::TokenZ, Axis::TokenX)});
  // L5: ∀t_z, t_x, if ¬Mask[t_z, t_x] then S[t_z, t_x] ← −∞
  tr->line(lines::attention::mask, {tv("S", r.S_masked, Axis::TokenZ, Axis::TokenX)});
  // L6: return Ṽ = V · softmax(S / √d_attn)
  const Mat<T> S_scaled = r.S_masked / std::sqrt(d_attn);  // (ℓ_z, ℓ_x)
  tr->substep(lines::attention::V_tilde, "S / √d_attn", {tv("S/√d_attn", S_scaled, Axis::TokenZ, Axis::TokenX)});
  if (r.relative)
    tr->substep(lines::attention::V_tilde, "S / √d_attn + B (relative position bias, T5; not in the paper)",
                {with_note(tv("B", r.B, Axis::TokenZ, Axis::TokenX), kRelativeNote),
                 tv("S/√d_attn + B", Mat<T>(S_scaled + r.B), Axis::TokenZ, Axis::TokenX)});
  else if (r.B.size() > 0)
    tr->substep(lines::attention::V_tilde, "S / √d_attn + m_h·B (ALiBi variant, seed 004)",
                {tv("B", r.B, Axis::TokenZ, Axis::TokenX), tscalar("m_h", r.m),
                 with_note(tv("S/√d_attn + m_h·B", Mat<T>(S_scaled + r.m * r.B), Axis::TokenZ, Axis::TokenX), kAlibiNote)});
  tr->substep(lines::attention::V_tilde, "softmax(S / √d_attn), column by column",
              {tv(keys::attention_weights, r.A)});
  tr->substep(lines::attention::V_tilde, "Ṽ = V · softmax(S / √d_attn)", {tv("Ṽ", r.Vt, Axis::Feature, Axis::TokenX)});
  tr->line(lines::attention::V_tilde, {tv(keys::attention_weights, r.A), tv("Ṽ", r.Vt, Axis::Feature, Axis::TokenX)});
}

template <class T>
Mat<T> attention(const Mat<T>& X, const Mat<T>& Z, const AttentionHeadW<const T>& W, const Mask& mask, Tracer* tr,
                 AttentionRecord<T>* rec, const AttentionOptions& av) {
  if (mask.rows() != Z.cols() || mask.cols() != X.cols())
    throw Error("Attention: Mask must be ℓ_z×ℓ_x = " + std::to_string(Z.cols()) + "×" + std::to_string(X.cols()));
  AttentionRecord<T> local;
  AttentionRecord<T>& r = rec ? *rec : local;
  const T d_attn = static_cast<T>(W.W_q.rows());
  const PatchSite& at = av.patch;  // experiments: each patch point below follows the line it patches

  // L1: Q ← W_q X + b_q 1ᵀ
  r.Q = product_plus_bias<T>(W.W_q, X, W.b_q);  // (d_attn, ℓ_x)
  // L2: K ← W_k Z + b_k 1ᵀ
  r.K = product_plus_bias<T>(W.W_k, Z, W.b_k);  // (d_attn, ℓ_z)
  if (av.rope_base > 0) {  // RoPE (variant): rotate the columns of Q and K by their positions
    r.Q_pre = r.Q;
    r.K_pre = r.K;
    rope_rotate<T>(r.Q, av.x_pos0, av.rope_base);
    rope_rotate<T>(r.K, av.z_pos0, av.rope_base);
  }
  patch(at, lines::attention::Q, "Q", r.Q);  // patch point: Q of line 1
  patch(at, lines::attention::K, "K", r.K);  // patch point: K of line 2
  // L3: V ← W_v Z + b_v 1ᵀ
  r.V = product_plus_bias<T>(W.W_v, Z, W.b_v);  // (d_out, ℓ_z)
  patch(at, lines::attention::V, "V", r.V);  // patch point: V of line 3
  // L4: S ← Kᵀ Q
  r.S.noalias() = r.K.transpose() * r.Q;  // (ℓ_z, ℓ_x)
  patch(at, lines::attention::S, "S", r.S);  // patch point: S of line 4, before masking
  // The hyperparameter Mask, as line 5 reads it (patch point: a toggled cell, a custom mask).
  Mask patched_mask;
  if (at.patches) patch(at, lines::attention::mask, "Mask", patched_mask = mask);
  const Mask& M = at.patches ? patched_mask : mask;  // (ℓ_z, ℓ_x)
  // L5: ∀t_z, t_x, if ¬Mask[t_z, t_x] then S[t_z, t_x] ← −∞
  r.S_masked.resize(r.S.rows(), r.S.cols());  // (ℓ_z, ℓ_x)
  {  // a plain loop over raw pointers, which the compiler vectorises (Eigen 3.4's select() does not)
    const unsigned char* keep = M.data();
    const T* s = r.S.data();
    T* s_masked = r.S_masked.data();
    for (Eigen::Index i = 0; i < r.S.size(); ++i) s_masked[i] = keep[i] != 0 ? s[i] : neg_inf<T>();
  }
  patch(at, lines::attention::mask, "S", r.S_masked);  // patch point: S of line 5, masked
  // L6: return Ṽ = V · softmax(S / √d_attn)
  if (av.alibi) {  // ALiBi (variant): softmax(S/√d_attn + m_h·B), −∞ + m_h·B stays −∞
    r.B = alibi_bias<T>(static_cast<int>(Z.cols()), static_cast<int>(X.cols()), av.z_pos0, av.x_pos0);  // (ℓ_z, ℓ_x)
    r.m = static_cast<T>(av.m);
    r.A = softmax_columns<T>(Mat<T>(r.S_masked / std::sqrt(d_attn) + r.m * r.B));  // (ℓ_z, ℓ_x)
  } else if (av.relative()) {  // relative bias (variant, T5): softmax(S/√d_attn + B), after the scaling as the issue says
    r.B = relative_bias<T>(av, static_cast<int>(Z.cols()), static_cast<int>(X.cols()));  // (ℓ_z, ℓ_x), Toeplitz
    r.m = T(1);
    r.relative = true;
    r.A = softmax_columns<T>(Mat<T>(r.S_masked / std::sqrt(d_attn) + r.B));  // (ℓ_z, ℓ_x)
  } else {
    r.A = softmax_columns<T>(Mat<T>(r.S_masked / std::sqrt(d_attn)));  // (ℓ_z, ℓ_x), each column sums to 1
  }
  patch(at, lines::attention::V_tilde, keys::attention_weights.symbol, r.A);  // patch point: the attention weights of line 6
  r.Vt.noalias() = r.V * r.A;  // (d_out, ℓ_x)
  patch(at, lines::attention::V_tilde, "Ṽ", r.Vt);  // patch point: Ṽ of line 6 (ablating head h zeroes it: Algorithm 5's Y^h)
  trace_attention_record<T>(tr, X, Z, W, M, r);  // the events of lines 1–6, in order
  return r.Vt;
}

template Mat<float> attention(const Mat<float>&, const Mat<float>&, const AttentionHeadW<const float>&, const Mask&,
                              Tracer*, AttentionRecord<float>*, const AttentionOptions&);
template Mat<double> attention(const Mat<double>&, const Mat<double>&, const AttentionHeadW<const double>&,
                               const Mask&, Tracer*, AttentionRecord<double>*, const AttentionOptions&);
template void trace_attention_record(Tracer*, const Mat<float>&, const Mat<float>&, const AttentionHeadW<const float>&,
                                     const Mask&, const AttentionRecord<float>&);
template void trace_attention_record(Tracer*, const Mat<double>&, const Mat<double>&,
                                     const AttentionHeadW<const double>&, const Mask&, const AttentionRecord<double>&);

}  // namespace sf
