// Algorithm 5: Ṽ ← MHAttention(X, Z | W, Mask)
//   /* Computes multi-head (masked) self- or cross-attention layer. */
//   Input: X ∈ ℝ^{d_x×ℓ_x}, Z ∈ ℝ^{d_z×ℓ_z}, primary and context sequence.
//   Output: Ṽ ∈ ℝ^{d_out×ℓ_x}.
//   Hyperparameters: H, number of attention heads; Mask ∈ {0,1}^{ℓ_z×ℓ_x}, eq. (3).
//   Parameters: W of eq. (4): W^h_qkv for h ∈ [H]; W_o ∈ ℝ^{d_out×H·d_mid}, b_o ∈ ℝ^{d_out}.
#include <cmath>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/random_features.hpp"
#include "core/model/error.hpp"
#include "core/parallel/parallel.hpp"

namespace sf {

namespace {

// Line 2's bindings: Y^h, and with H_kv < H (multi-/grouped-query variant, seed 004) the key/value
// head g = ⌊(h−1)·H_kv/H⌋ + 1 that query head h reads.
template <class T>
std::vector<Value> head_values(int h, int H, const Mat<T>& Y_h, const AttentionOptions& av) {
  std::vector<Value> v{tv("Y^" + std::to_string(h), Y_h, Axis::Feature, Axis::TokenX)};
  if (av.H_kv > 0 && av.H_kv < H)
    v.push_back(with_note(tscalar("g", (h - 1) * av.H_kv / H + 1),
                          "H_kv < H (variant, encyclopedia article 004): query head h reads key/value head "
                          "g = ⌊(h−1)·H_kv/H⌋ + 1 of " + std::to_string(av.H_kv) + "."));
  return v;
}

// The head's variant (ALiBi's slope m_h = 2^{−8h/H}, the relative bias's row W_rel[h, :]) and its patch points.
template <class T>
AttentionOptions head_options(const AttentionOptions& av, int h, const MHAttentionW<const T>& W) {
  const int H = static_cast<int>(W.heads.size());
  AttentionOptions head = relative_head<T>(av, W, h);
  if (av.alibi) head.m = std::pow(2.0, -8.0 * h / H);
  head.patch.h = h;  // experiments: Algorithm 4's patch points of head h
  return head;
}

// Line 2's Attention: Algorithm 4, or FlashAttention (Algorithm 4-F, not in the paper) when the
// config says "attention": "flash" and neither a record (Algorithm 4's S and softmax(S), for the
// views and backward) nor an experiment (Algorithm 4's patch points) is asked for.
// Random-feature attention (Algorithm 4-R, "attention": "random_features") is a different function,
// not a faster Algorithm 4: it runs whatever is asked, with head h's own fixed directions ω.
template <class T>
Mat<T> head_attention(const Mat<T>& X, const Mat<T>& Z, const AttentionHeadW<const T>& W, const Mask& mask, Tracer* tr,
                      AttentionRecord<T>* rec, const AttentionOptions& av) {
  if (av.random_features()) {
    if (rec) throw Error("random-feature attention (Algorithm 4-R) has no Algorithm 4 record (S, softmax(S)) to keep");
    return random_feature_attention<T>(
        X, Z, W, mask, rf_omega(av.rf_D, static_cast<int>(W.W_q.rows()), static_cast<std::uint64_t>(av.rf_seed), av.patch.h, av.rf_orthogonal),
        tr, av);
  }
  if (av.flash() && !rec && !av.patch.patches) return flash_attention<T>(X, Z, W, mask, av.flash_B_r, av.flash_B_c, tr, av);
  return attention<T>(X, Z, W, mask, tr, rec, av);
}

}  // namespace

template <class T>
Mat<T> mh_attention(const Mat<T>& X, const Mat<T>& Z, const MHAttentionW<const T>& W, const Mask& mask, Tracer* tr,
                    std::vector<AttentionRecord<T>>* recs, const AttentionOptions& av) {
  TraceFrame frame(tr, 5,
                   tr ? std::vector<Value>{tv("X", X, Axis::Feature, Axis::TokenX),
                                           tv("Z", Z, Axis::Feature, Axis::TokenZ),
                                           tmask("Mask", mask, Axis::TokenZ, Axis::TokenX), tparam<T>(tr, "W_o", W.W_o),
                                           tparam<T>(tr, "b_o", W.b_o)}
                      : std::vector<Value>{});
  const int H = static_cast<int>(W.heads.size());
  const Eigen::Index d_mid = W.heads.empty() ? 0 : W.heads[0].W_v.rows();
  if (recs) recs->assign(H, AttentionRecord<T>{});
  Mat<T> Y(H * d_mid, X.cols());  // (H·d_mid, ℓ_x)
  // L1: for h ∈ [H]:   (untraced, the heads run on the compute threads: each writes its own rows)
  auto head = [&](int h) {
    TraceIndex ih(tr, &Indices::h, h);
    if (tr) tr->line(lines::mh_attention::for_h, {tscalar("h", h)});
    // L2: Y^h ← Attention(X, Z | W^h_qkv, Mask)
    Mat<T> Y_h = head_attention<T>(X, Z, W.heads[h - 1], mask, tr, recs ? &(*recs)[h - 1] : nullptr,
                                   head_options<T>(av, h, W));  // (d_mid, ℓ_x)
    if (tr) tr->line(lines::mh_attention::Y_h, head_values<T>(h, H, Y_h, av));
    Y.middleRows((h - 1) * d_mid, d_mid) = Y_h;
  };
  if (tr)
    for (int h = 1; h <= H; ++h) head(h);
  else
    parallel_for(H, [&](int k) { head(k + 1); },
                 static_cast<double>(H) * (W.heads[0].W_q.size() + W.heads[0].W_k.size() + W.heads[0].W_v.size()) *
                     static_cast<double>(X.cols()));  // the heads' lines 1–3
  // L3: Y ← [Y^1; Y^2; …; Y^H]
  if (tr) tr->line(lines::mh_attention::Y, {tv("Y", Y, Axis::Feature, Axis::TokenX)});
  // L4: return Ṽ = W_o Y + b_o 1ᵀ
  Mat<T> Vt = product_plus_bias<T>(W.W_o, Y, W.b_o);  // (d_out, ℓ_x)
  if (tr) tr->line(lines::mh_attention::V_tilde, {tv("Ṽ", Vt, Axis::Feature, Axis::TokenX)});
  return Vt;
}

// Algorithm 5's events, and its heads' Algorithm 4 events, for results computed elsewhere (the
// GPU's teaching form): the same events mh_attention emits with a tracer, in the same order.
template <class T>
void trace_mh_attention_replay(Tracer* tr, const Mat<T>& X, const Mat<T>& Z, const MHAttentionW<const T>& W,
                               const Mask& mask, const std::vector<AttentionRecord<T>>& recs, const Mat<T>& Vt,
                               const AttentionOptions& av) {
  if (!tr) return;
  TraceFrame frame(tr, 5,
                   {tv("X", X, Axis::Feature, Axis::TokenX), tv("Z", Z, Axis::Feature, Axis::TokenZ),
                    tmask("Mask", mask, Axis::TokenZ, Axis::TokenX), tparam<T>(tr, "W_o", W.W_o), tparam<T>(tr, "b_o", W.b_o)});
  const int H = static_cast<int>(W.heads.size());
  const Eigen::Index d_mid = W.heads.empty() ? 0 : W.heads[0].W_v.rows();
  Mat<T> Y(H * d_mid, X.cols());  // (H·d_mid, ℓ_x)
  // L1: for h ∈ [H]:
  for (int h = 1; h <= H; ++h) {
    TraceIndex ih(tr, &Indices::h, h);
    tr->line(lines::mh_attention::for_h, {tscalar("h", h)});
    // L2: Y^h ← Attention(X, Z | W^h_qkv, Mask)
    const AttentionRecord<T>& r = recs.at(h - 1);
    trace_attention_record<T>(tr, X, Z, W.heads[h - 1], mask, r);
    tr->line(lines::mh_attention::Y_h, head_values<T>(h, H, r.Vt, av));
    Y.middleRows((h - 1) * d_mid, d_mid) = r.Vt;
  }
  // L3: Y ← [Y^1; Y^2; …; Y^H]
  tr->line(lines::mh_attention::Y, {tv("Y", Y, Axis::Feature, Axis::TokenX)});
  // L4: return Ṽ = W_o Y + b_o 1ᵀ (as computed elsewhere)
  tr->line(lines::mh_attention::V_tilde, {tv("Ṽ", Vt, Axis::Feature, Axis::TokenX)});
}

template void trace_mh_attention_replay(Tracer*, const Mat<float>&, const Mat<float>&, const MHAttentionW<const float>&,
                                        const Mask&, const std::vector<AttentionRecord<float>>&, const Mat<float>&,
                                        const AttentionOptions&);

template Mat<float> mh_attention(const Mat<float>&, const Mat<float>&, const MHAttentionW<const float>&, const Mask&,
                                 Tracer*, std::vector<AttentionRecord<float>>*, const AttentionOptions&);
template Mat<double> mh_attention(const Mat<double>&, const Mat<double>&, const MHAttentionW<const double>&,
                                  const Mask&, Tracer*, std::vector<AttentionRecord<double>>*,
                                  const AttentionOptions&);

}  // namespace sf
