// Algorithm 3: Basic single-query attention.
//   Input: e ∈ ℝ^{d_in}, vector representation of the current token.
//   Input: e_t ∈ ℝ^{d_in}, vector representations of context tokens t ∈ [T] (columns of E).
//   Output: ṽ ∈ ℝ^{d_out}, vector representation of the token and context combined.
//   Parameters: W_q, W_k ∈ ℝ^{d_attn×d_in}, b_q, b_k ∈ ℝ^{d_attn}; W_v ∈ ℝ^{d_out×d_in}, b_v ∈ ℝ^{d_out}.
#include <cmath>

#include "core/algorithms/algorithms.hpp"

namespace sf {

template <class T>
Vec<T> basic_attention(const Vec<T>& e, const Mat<T>& E, const AttentionHeadW<const T>& W, Tracer* tr) {
  TraceFrame frame(tr, 3,
                   tr ? std::vector<Value>{tv("e", e), tv("e_t", E, Axis::Feature, Axis::TokenZ), tparam<T>(tr, "W_q", W.W_q),
                                           tparam<T>(tr, "b_q", W.b_q), tparam<T>(tr, "W_k", W.W_k), tparam<T>(tr, "b_k", W.b_k), tparam<T>(tr, "W_v", W.W_v),
                                           tparam<T>(tr, "b_v", W.b_v)}
                      : std::vector<Value>{});
  const T d_attn = static_cast<T>(W.W_q.rows());
  // L1: q ← W_q e + b_q
  const Vec<T> q = W.W_q * e + W.b_q;  // (d_attn)
  if (tr) tr->line(lines::basic_attention::q, {tv("q", q)});
  // L2: ∀t: k_t ← W_k e_t + b_k
  const Mat<T> K = (W.W_k * E).colwise() + W.b_k;  // (d_attn, T): column t is k_t
  if (tr) tr->line(lines::basic_attention::k, {tv("k_t", K, Axis::Feature, Axis::TokenZ)});
  // L3: ∀t: v_t ← W_v e_t + b_v
  const Mat<T> V = (W.W_v * E).colwise() + W.b_v;  // (d_out, T): column t is v_t
  if (tr) tr->line(lines::basic_attention::v, {tv("v_t", V, Axis::Feature, Axis::TokenZ)});
  // L4: ∀t: α_t = exp(qᵀk_t/√d_attn) / Σ_u exp(qᵀk_u/√d_attn)
  const Mat<T> scores = (K.transpose() * q) / std::sqrt(d_attn);  // (T, 1)
  const Vec<T> alpha = softmax_columns<T>(scores);                // (T)
  if (tr) tr->line(lines::basic_attention::alpha, {tv("α_t", alpha, Axis::TokenZ)});
  // L5: return ṽ = Σ_t α_t v_t
  const Vec<T> v_tilde = V * alpha;  // (d_out)
  if (tr) tr->line(lines::basic_attention::v_tilde, {tv("ṽ", v_tilde)});
  return v_tilde;
}

template Vec<float> basic_attention(const Vec<float>&, const Mat<float>&, const AttentionHeadW<const float>&, Tracer*);
template Vec<double> basic_attention(const Vec<double>&, const Mat<double>&, const AttentionHeadW<const double>&,
                                     Tracer*);

}  // namespace sf
