// Algorithm 4-R: Ṽ ← RFAttention(X, Z | W_qkv, Mask; D, ω)
//   NOT IN THE PAPER: Peng et al. 2021 ("Random Feature Attention") and Choromanski et al.
//   ("Performer"), as the encyclopedia article (seed 004) describes them: Algorithm 4's softmax
//   replaced by an unbiased random-feature estimate of its kernel, computed in linear time.
//   Input: X ∈ ℝ^{d_x×ℓ_x}, Z ∈ ℝ^{d_z×ℓ_z}, as in Algorithm 4.
//   Output: Ṽ ∈ ℝ^{d_out×ℓ_x}, an estimate of Algorithm 4's Ṽ (random_features.hpp says of what, exactly).
//   Parameters: W_qkv as in Algorithm 4.
//   Hyperparameters: Mask ∈ {0,1}^{ℓ_z×ℓ_x} (each query seeing a prefix of the keys, less padding);
//   D, the number of features; ω ∈ ℝ^{D×d_attn}, fixed random directions (not parameters).
//   Lines 4–13 are rf_attention_qkv (random_features.cpp), shared with training's forward.
//   Variants: RoPE rotates Q and K as Algorithm 4 does. ALiBi is a bias on S, which 4-R never forms.
#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/random_features.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

// The last line's comparison: Algorithm 4 run untraced on the same inputs, and the implied weights
// (the ℓ_z×ℓ_x matrix 4-R never builds, computed here for the view only) against softmax's.
template <class T>
std::vector<Value> comparison(const Mat<T>& X, const Mat<T>& Z, const AttentionHeadW<const T>& W, const Mask& mask,
                              const AttentionOptions& av, const Mat<T>& Q, const Mat<T>& K, const Mat<double>& omega,
                              const Mat<T>& Vt, const RfaStats<T>& st) {
  AttentionRecord<T> rec;
  const Mat<T> exact = attention<T>(X, Z, W, mask, nullptr, &rec, av);  // Algorithm 4, (d_out, ℓ_x)
  const Mat<T> A_rf = rf_implied_weights<T>(Q, K, mask, omega);        // (ℓ_z, ℓ_x), view only
  const auto max_abs = [](const Mat<T>& M) { return M.size() ? static_cast<double>(M.cwiseAbs().maxCoeff()) : 0.0; };
  return {tv("Ṽ", Vt, Axis::Feature, Axis::TokenX),
          with_note(tscalar("max |Ṽ_rfa − Ṽ|", max_abs(Vt - exact)),
                    "Against Algorithm 4 (Attention) on the same X, Z, W_qkv and Mask, computed untraced: a Monte-Carlo "
                    "error with D = " + std::to_string(omega.rows()) + " features, shrinking like 1/√D."),
          with_note(tv("Â", A_rf, Axis::TokenZ, Axis::TokenX),
                    "NOT PART OF THE ALGORITHM, computed only for this view: the implied weights κ_{t_z}φ(k)ᵀφ(q) "
                    "normalised per column (Ṽ = V·Â). Algorithm 4-R never builds this ℓ_z×ℓ_x matrix."),
          with_note(tv("softmax(S/√d_attn)", rec.A, Axis::TokenZ, Axis::TokenX), "Algorithm 4's weights, for comparison."),
          with_note(tscalar("max |Â − softmax|", max_abs(A_rf - rec.A)), "The implied weights' largest error."),
          with_note(tscalar("guarded columns", st.guarded),
                    "Queries whose estimated denominator b fell below ε·g (ε = 10⁻³; negative or near 0, which the "
                    "exact softmax never is): divided by ε·g instead. 0 means the guard never acted.")};
}

}  // namespace

template <class T>
Mat<T> random_feature_attention(const Mat<T>& X, const Mat<T>& Z, const AttentionHeadW<const T>& W, const Mask& mask,
                                const Mat<double>& omega, Tracer* tr, const AttentionOptions& av) {
  if (mask.rows() != Z.cols() || mask.cols() != X.cols())
    throw Error("RFAttention: Mask must be ℓ_z×ℓ_x = " + std::to_string(Z.cols()) + "×" + std::to_string(X.cols()));
  if (omega.cols() != W.W_q.rows())
    throw Error("RFAttention: ω must have d_attn = " + std::to_string(W.W_q.rows()) + " columns");
  if (av.alibi)
    throw Error("random-feature attention cannot add ALiBi's bias: it never forms the scores S (use position "
                "\"rope\" or \"learned\", or attention \"exact\")");
  if (av.patch.patches)
    throw Error("random-feature attention (Algorithm 4-R) has no patch points: experiments patch Algorithm 4's lines, "
                "so set attention to \"exact\" to run them");
  TraceFrame frame(tr, algs::random_feature_attention,
                   tr ? std::vector<Value>{tv("X", X, Axis::Feature, Axis::TokenX), tv("Z", Z, Axis::Feature, Axis::TokenZ),
                                           tparam<T>(tr, "W_q", W.W_q), tparam<T>(tr, "b_q", W.b_q),
                                           tparam<T>(tr, "W_k", W.W_k), tparam<T>(tr, "b_k", W.b_k),
                                           tparam<T>(tr, "W_v", W.W_v), tparam<T>(tr, "b_v", W.b_v),
                                           tmask("Mask", mask, Axis::TokenZ, Axis::TokenX),
                                           tscalar("D", static_cast<double>(omega.rows()))}
                      : std::vector<Value>{});
  namespace L = lines::random_feature_attention;
  // L1: Q ← W_q X + b_q 1ᵀ   (RoPE: then column t rotated by t·θ_i, as Algorithm 4)
  Mat<T> Q = (W.W_q * X).colwise() + W.b_q;  // (d_attn, ℓ_x)
  if (av.rope_base > 0) rope_rotate<T>(Q, av.x_pos0, av.rope_base);
  if (tr) tr->line(L::Q, {tv("Q", Q, Axis::Feature, Axis::TokenX)});
  // L2: K ← W_k Z + b_k 1ᵀ   (RoPE: then column t rotated by t·θ_i)
  Mat<T> K = (W.W_k * Z).colwise() + W.b_k;  // (d_attn, ℓ_z)
  if (av.rope_base > 0) rope_rotate<T>(K, av.z_pos0, av.rope_base);
  if (tr) tr->line(L::K, {tv("K", K, Axis::Feature, Axis::TokenZ)});
  // L3: V ← W_v Z + b_v 1ᵀ
  const Mat<T> V = (W.W_v * Z).colwise() + W.b_v;  // (d_out, ℓ_z)
  if (tr) tr->line(L::V, {tv("V", V, Axis::Feature, Axis::TokenZ)});
  // L4–L13: the features, the key weights, the running sums and each query's estimate
  RfaStats<T> st;
  const Mat<T> Vt = rf_attention_qkv<T>(Q, K, V, mask, omega, &st, tr);  // (d_out, ℓ_x)
  // L14: return Ṽ   (with max |Ṽ_rfa − Ṽ| against Algorithm 4 and the implied weights, for the view)
  if (tr) tr->line(L::V_tilde, comparison<T>(X, Z, W, mask, av, Q, K, omega, Vt, st));
  return Vt;
}

template Mat<float> random_feature_attention(const Mat<float>&, const Mat<float>&, const AttentionHeadW<const float>&,
                                             const Mask&, const Mat<double>&, Tracer*, const AttentionOptions&);
template Mat<double> random_feature_attention(const Mat<double>&, const Mat<double>&, const AttentionHeadW<const double>&,
                                              const Mask&, const Mat<double>&, Tracer*, const AttentionOptions&);

}  // namespace sf
