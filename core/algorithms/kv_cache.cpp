// KV cache for Algorithm 14 (not in the paper; the encyclopedia article, seed 004). Algorithm 10's
// lines for the columns not yet cached, t = ℓ_c + 1 … ℓ, against the cached K, V of columns 1 … ℓ_c
// (RoPE and ALiBi at the absolute positions t, the prefix-LM mask with the cache's p).
#include "core/algorithms/kv_cache.hpp"

#include <cmath>

#include "core/algorithms/variant_layers.hpp"

namespace sf {

namespace {

// Lines 1–6 of Algorithm 4 for head h's new columns: K, V appended to the cache, the new queries
// attending over all ℓ cached keys with the mask's last n columns. Returns Ṽ (d_mid, n).
MatF cached_attention(const MatF& in, const AttentionHeadW<const float>& W, MatF& K, MatF& V, const Mask& mask,
                      const AttentionOptions& av) {
  const int n = static_cast<int>(in.cols()), pos0 = static_cast<int>(K.cols());
  MatF Q = (W.W_q * in).colwise() + W.b_q;      // (d_attn, n)   L1
  MatF K_new = (W.W_k * in).colwise() + W.b_k;  // (d_attn, n)   L2
  if (av.rope_base > 0) {
    rope_rotate<float>(Q, pos0, av.rope_base);
    rope_rotate<float>(K_new, pos0, av.rope_base);
  }
  K.conservativeResize(K_new.rows(), pos0 + n);
  K.rightCols(n) = K_new;                                       // (d_attn, ℓ) K (cached)
  const MatF V_new = (W.W_v * in).colwise() + W.b_v;            // (d_mid, n)    L3
  V.conservativeResize(V_new.rows(), pos0 + n);
  V.rightCols(n) = V_new;                                       // (d_mid, ℓ) V (cached)
  const MatF S = K.transpose() * Q;                             // (ℓ, n)        L4
  const int l = pos0 + n;
  MatF S_masked = (mask.rightCols(n).array() != 0).select(S, neg_inf<float>());  // (ℓ, n)  L5
  S_masked /= std::sqrt(static_cast<float>(W.W_q.rows()));
  if (av.alibi) S_masked += static_cast<float>(av.m) * alibi_bias<float>(l, n, 0, pos0);
  return V * softmax_columns<float>(S_masked);  // (d_mid, n)   L6
}

}  // namespace

VecF dtransformer_cached(const Tokens& x, const ModelConfig& c, const GptW<const float>& W, GptKvCache& cache,
                         bool* rebuilt) {
  using namespace variant_layers;
  check_tokens(x, c);
  const int l = static_cast<int>(x.size());
  const int p = c.mask == MaskKind::Prefix ? prefix_position(x, c) : 0;
  const bool extends = static_cast<int>(cache.x.size()) == l - 1 && cache.p == p &&
                       std::equal(cache.x.begin(), cache.x.end(), x.begin());
  if (!extends) {  // rebuild from all of x
    cache.K.assign(c.L, std::vector<MatF>(c.H, MatF(c.d_attn, 0)));
    cache.V.assign(c.L, std::vector<MatF>(c.H, MatF(c.d_mid, 0)));
    cache.x.clear();
  }
  if (rebuilt) *rebuilt = !extends;
  const int pos0 = static_cast<int>(cache.x.size()), n = l - pos0;
  // L2–3: the new columns' e_t = W_e[:, x[t]] + W_p[:, t] at their absolute positions t
  const MatF P_pos = position_matrix<float>(c, W.W_p);  // (d_e, ℓ_max) or empty
  MatF X(c.d_e, n);                                      // (d_e, n)
  for (int j = 0; j < n; ++j) {
    X.col(j) = W.W_e.col(x[pos0 + j] - 1);
    if (P_pos.size() > 0) X.col(j) += P_pos.col(pos0 + j);
  }
  const Mask mask = c.mask == MaskKind::Prefix ? prefix_mask(l, p) : unidirectional_mask(l, l);  // (ℓ, ℓ)
  const AttentionOptions av = attention_options(c, true);
  for (int layer = 0; layer < c.L; ++layer) {  // L4
    const LayerW<const float>& Wl = W.layers[layer];
    residual_line_pair<float>(X, c, Wl.gamma1, Wl.beta1, nullptr, 10, 5, "X", "X̃", Axis::TokenX,
                              [&](MatF& Xr, const MatF& in, const std::string&, int) {
                                MatF Y(c.H * c.d_mid, n);  // (H·d_mid, n)
                                for (int h = 1; h <= c.H; ++h) {
                                  AttentionOptions head = av;
                                  head.m = av.alibi ? std::pow(2.0, -8.0 * h / c.H) : 0.0;
                                  Y.middleRows((h - 1) * c.d_mid, c.d_mid) =
                                      cached_attention(in, Wl.attn.heads[h - 1], cache.K[layer][h - 1],
                                                       cache.V[layer][h - 1], mask, head);
                                }
                                Xr += (Wl.attn.W_o * Y).colwise() + Wl.attn.b_o;
                              });
    residual_line_pair<float>(X, c, Wl.gamma2, Wl.beta2, nullptr, 10, 7, "X", "X̃", Axis::TokenX,
                              [&](MatF& Xr, const MatF& in, const std::string& in_name, int line) {
                                mlp_line<float>(Xr, in, in_name,
                                                {Wl.W_mlp1, Wl.b_mlp1, Wl.W_mlp2, Wl.b_mlp2, Wl.W_gate, Wl.b_gate, "mlp1", "gate"},
                                                c.act(), nullptr, 10, line, "X", Axis::TokenX);
                              });
  }
  if (c.norm_pos() == NormPosition::Pre) X = norm_columns<float>(X, W.gamma, W.beta, c);  // L10
  cache.x = x;
  cache.p = p;
  const MatF P = unembed_line<float>(X, W.W_u, W.W_e, nullptr, 10, 11);  // (N_V, n)   L11
  return P.col(n - 1);
}

}  // namespace sf
