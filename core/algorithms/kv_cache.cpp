// KV cache for Algorithm 14 (not in the paper; the encyclopedia article, seed 004). Algorithm 10's
// lines for the columns not yet cached, t = ℓ_c + 1 … ℓ, against the cached K, V of columns 1 … ℓ_c
// (RoPE and ALiBi at the absolute positions t, the prefix-LM mask with the cache's p).
#include "core/algorithms/kv_cache.hpp"

#include <algorithm>
#include <cmath>

#include "core/algorithms/random_features.hpp"
#include "core/algorithms/variant_layers.hpp"
#include "core/arch/ed.hpp"
#include "core/parallel/parallel.hpp"

namespace sf {

namespace {

// Lines 1–6 of Algorithm 4 for head h's new columns `in` (d_x, n) over its cached K, V. When
// `append` (self-attention), lines 2–3 for the new columns first extend K and V, RoPE rotating Q
// and the new keys at their absolute positions ℓ_c + 1 … ℓ_c + n. mask (ℓ, n): the new columns'
// part. Returns Ṽ (d_mid, n).
MatF cached_attention(const MatF& in, const AttentionHeadW<const float>& W, MatF& K, MatF& V, bool append,
                      const Mask& mask, const AttentionOptions& av) {
  const int n = static_cast<int>(in.cols());
  MatF Q = (W.W_q * in).colwise() + W.b_q;  // (d_attn, n)   L1
  if (append) {
    const int pos0 = static_cast<int>(K.cols());
    MatF K_new = (W.W_k * in).colwise() + W.b_k;  // (d_attn, n)   L2
    if (av.rope_base > 0) {
      rope_rotate<float>(Q, pos0, av.rope_base);
      rope_rotate<float>(K_new, pos0, av.rope_base);
    }
    K.conservativeResize(K_new.rows(), pos0 + n);
    K.rightCols(n) = K_new;                             // (d_attn, ℓ) K (cached)
    const MatF V_new = (W.W_v * in).colwise() + W.b_v;  // (d_mid, n)    L3
    V.conservativeResize(V_new.rows(), pos0 + n);
    V.rightCols(n) = V_new;  // (d_mid, ℓ) V (cached)
  }
  // Random-feature attention (Algorithm 4-R, not in the paper): its lines 4–13 on the cached K, V (the
  // mask's new columns see prefixes of the keys), with head h's own ω, as the uncached forward runs them.
  if (av.random_features())
    return rf_attention_qkv<float>(Q, K, V, mask, rf_omega(av.rf_D, static_cast<int>(Q.rows()),
                                                           static_cast<std::uint64_t>(av.rf_seed), av.patch.h,
                                                           av.rf_orthogonal));
  const int l = static_cast<int>(K.cols());
  const MatF S = K.transpose() * Q;                                                // (ℓ, n)   L4
  MatF S_masked = (mask.array() != 0).select(S, neg_inf<float>());                 // (ℓ, n)   L5
  S_masked /= std::sqrt(static_cast<float>(W.W_q.rows()));
  if (av.alibi) S_masked += static_cast<float>(av.m) * alibi_bias<float>(l, n, 0, l - n);
  if (av.relative()) {  // relative bias (variant): B over keys 1 … ℓ and the new queries ℓ − n + 1 … ℓ
    AttentionOptions at = av;
    at.x_pos0 = l - n;
    at.z_pos0 = 0;
    S_masked += relative_bias<float>(at, l, n);
  }
  return V * softmax_columns<float>(S_masked);  // (d_mid, n)   L6
}

// The cached MHAttention with `attn` when set, else core's.
MatF cached_mha(const CachedMHAttentionFn& attn, const MatF& in, const MHAttentionW<const float>& W,
                std::vector<MatF>& K, std::vector<MatF>& V, bool append, const Mask& mask, const AttentionOptions& av) {
  return attn ? attn(in, W, K, V, append, mask, av) : kv_cached_mh_attention(in, W, K, V, append, mask, av);
}

// av labelled with the forward algorithm's calling line and the layer (1-based), as Algorithms 8
// and 10 label their MHAttention calls (no experiments: the cached step has no patch points).
AttentionOptions at_line(AttentionOptions av, LineRef call, int layer) {
  av.patch = PatchSite{}.at(call, layer, 0);
  return av;
}

// e_t = W_e[:, x[t]] + W_p[:, t] (W_p as the position variant gives it, or none) for the columns
// t = pos0 + 1 … ℓ not yet cached. Returns (d_e, ℓ − pos0).
MatF embed_new_columns(const Tokens& x, int pos0, const ModelConfig& c, const MapM<const float>& W_e,
                       const MapM<const float>& W_p) {
  const bool learned = c.position == Position::Learned;  // then W_p itself, not a copy of it
  const MatF P_pos = learned ? MatF() : variant_layers::position_matrix<float>(c, W_p);  // (d_e, ℓ_max) or empty
  const MapM<const float> W_pos = learned ? W_p : MapM<const float>(P_pos.data(), P_pos.rows(), P_pos.cols());
  const int n = static_cast<int>(x.size()) - pos0;
  MatF X(c.d_e, n);  // (d_e, n)
  for (int j = 0; j < n; ++j) {
    X.col(j) = W_e.col(x[pos0 + j] - 1);
    if (W_pos.size() > 0) X.col(j) += W_pos.col(pos0 + j);
  }
  return X;
}

// The forward pass's last two lines, X ← layer_norm(X | γ, β) (pre-LN) and P ← softmax(W_u X), for the last
// column of X alone: generation reads only P[:, ℓ], and each column's layer norm and unembedding depend on
// that column alone. Not the paper's whole P: an optimisation of the KV cache's step, which skips
// N_V·d_e·(n − 1) multiply–adds when a prompt of n tokens fills the cache (GPT-2: 39 M a column).
VecF last_column_p(const MatF& X, const ModelConfig& c, const MapV<const float>& gamma, const MapV<const float>& beta,
                   const MapM<const float>& W_u, const MapM<const float>& W_e, const MapV<const float>& b_u, LineRef at) {
  MatF x_l = X.rightCols(1);                                                            // (d_e, 1)
  if (c.norm_pos() == NormPosition::Pre) x_l = norm_columns<float>(x_l, gamma, beta, c);
  return variant_layers::unembed_line<float>(x_l, W_u, W_e, b_u, nullptr, at).col(0);  // (N_V)
}

}  // namespace

MatF kv_cached_mh_attention(const MatF& X, const MHAttentionW<const float>& W, std::vector<MatF>& K,
                            std::vector<MatF>& V, bool append, const Mask& mask, const AttentionOptions& av) {
  const int H = static_cast<int>(W.heads.size()), n = static_cast<int>(X.cols());
  const int d_mid = static_cast<int>(W.heads[0].W_v.rows());
  MatF Y(H * d_mid, n);  // (H·d_mid, n)
  parallel_for(H, [&](int k) {  // the heads on the compute threads: each writes its own rows and cache
    const int h = k + 1;
    AttentionOptions head = relative_head<float>(av, W, h);  // the relative bias's W_rel[h, :] (variant)
    head.m = av.alibi ? std::pow(2.0, -8.0 * h / H) : 0.0;
    head.patch.h = h;  // random-feature attention draws head h's ω
    Y.middleRows((h - 1) * d_mid, d_mid) = cached_attention(X, W.heads[h - 1], K[h - 1], V[h - 1], append, mask, head);
  }, static_cast<double>(H) * (W.heads[0].W_q.size() + W.heads[0].W_k.size() + W.heads[0].W_v.size()) * n);  // lines 1–3
  return product<float>(W.W_o, Y).colwise() + W.b_o;
}

VecF edtransformer_cached(const Tokens& z, const Tokens& x, const ModelConfig& c, const EdW<const float>& W,
                          EdKvCache& cache, bool* rebuilt, const MHAttentionFn<float>& attn,
                          const CachedMHAttentionFn& cached_attn) {
  using namespace variant_layers;
  const int l = static_cast<int>(x.size());
  const bool extends = !cache.K.empty() && cache.z == z && static_cast<int>(cache.x.size()) == l - 1 &&
                       std::equal(cache.x.begin(), cache.x.end(), x.begin());
  if (!extends) {  // rebuild: encode z (lines 1–9) and keep the cross-attention's K, V of Z
    MatF Z;
    edtransformer_parts<float>(z, x, c, W, nullptr, nullptr, &Z, attn);  // checks z and x
    cache = EdKvCache{z, Z, {}, {}, {}, {}, {}};
    cache.K.assign(c.L_dec, std::vector<MatF>(c.H, MatF(c.d_attn, 0)));
    cache.V.assign(c.L_dec, std::vector<MatF>(c.H, MatF(c.d_mid, 0)));
    cache.Kz.assign(c.L_dec, std::vector<MatF>(c.H));
    cache.Vz.assign(c.L_dec, std::vector<MatF>(c.H));
    for (int layer = 0; layer < c.L_dec; ++layer)
      for (int h = 0; h < c.H; ++h) {
        const AttentionHeadW<const float>& w = W.dec[layer].cross_attn.heads[h];
        cache.Kz[layer][h] = (w.W_k * Z).colwise() + w.b_k;  // (d_attn, ℓ_z)  L2
        cache.Vz[layer][h] = (w.W_v * Z).colwise() + w.b_v;  // (d_mid, ℓ_z)   L3
      }
  }
  if (rebuilt) *rebuilt = !extends;
  const int pos0 = static_cast<int>(cache.x.size()), n = l - pos0;
  // L11–12: the new columns' e_t = W_e[:, x[t]] + W_p[:, t] at their absolute positions t
  MatF X = embed_new_columns(x, pos0, c, W.W_e, W.W_p);  // (d_e, n)
  embedding_extras<float>(X, c, W.extras, nullptr, lines::ed_transformer::dec_embed, Axis::TokenX);  // not in the paper: BERT checkpoints' extras
  const Mask causal = windowed(unidirectional_mask(l, l), c.window).rightCols(n);         // (ℓ_x, n): the new columns'
  const Mask ones = bidirectional_mask(static_cast<int>(cache.Z.cols()), n);  // (ℓ_z, n)
  const AttentionOptions av = attention_options(c, true), av_cross = attention_options(c, false);
  for (int layer = 0; layer < c.L_dec; ++layer) {  // L13
    const DecoderLayerW<const float>& Wl = W.dec[layer];
    // L14–15: cached causal self-attention
    residual_line_pair<float>(X, c, Wl.gamma3, Wl.beta3, nullptr, lines::ed_transformer::self_attention, "X", "X̃", Axis::TokenX,
                              [&](MatF& Xr, const MatF& in, const std::string&, LineRef line) {
                                Xr += cached_mha(cached_attn, in, Wl.self_attn, cache.K[layer], cache.V[layer], true,
                                                 causal, at_line(av, line, layer + 1));
                              });
    // L16–17: cross-attention over Z's cached K, V
    residual_line_pair<float>(X, c, Wl.gamma4, Wl.beta4, nullptr, lines::ed_transformer::cross_attention, "X", "X̃", Axis::TokenX,
                              [&](MatF& Xr, const MatF& in, const std::string&, LineRef line) {
                                Xr += cached_mha(cached_attn, in, Wl.cross_attn, cache.Kz[layer], cache.Vz[layer],
                                                 false, ones, at_line(av_cross, line, layer + 1));
                              });
    // L18–19: the MLP
    residual_line_pair<float>(X, c, Wl.gamma5, Wl.beta5, nullptr, lines::ed_transformer::dec_mlp, "X", "X̃", Axis::TokenX,
                              [&](MatF& Xr, const MatF& in, const std::string& in_name, LineRef line) {
                                mlp_line<float>(Xr, in, in_name,
                                                {Wl.W_mlp3, Wl.b_mlp3, Wl.W_mlp4, Wl.b_mlp4, Wl.W_gate, Wl.b_gate, "mlp3", "gate2"},
                                                c.act(), nullptr, line, "X", Axis::TokenX);
                              });
  }
  cache.x = x;
  // L20–21 on the last column only: Algorithm 15 reads P[:, ℓ_x] alone (see last_column_p)
  return last_column_p(X, c, W.dec_gamma, W.dec_beta, W.W_u, W.W_e, W.extras.b_u, lines::ed_transformer::P);
}

VecF dtransformer_cached(const Tokens& x, const ModelConfig& c, const GptW<const float>& W, GptKvCache& cache,
                         bool* rebuilt, const CachedMHAttentionFn& attn) {
  using namespace variant_layers;
  check_tokens(x, c);
  const int l = static_cast<int>(x.size());
  const int p = c.mask == MaskKind::Prefix ? prefix_position(x, c) : 0;
  // A fresh cache (no layers yet) is rebuilt even for a one-token x, whose cached prefix is empty.
  const bool extends = !cache.K.empty() && static_cast<int>(cache.x.size()) == l - 1 && cache.p == p &&
                       std::equal(cache.x.begin(), cache.x.end(), x.begin());
  if (!extends) {  // rebuild from all of x
    cache.K.assign(c.L, std::vector<MatF>(c.H, MatF(c.d_attn, 0)));
    cache.V.assign(c.L, std::vector<MatF>(c.H, MatF(c.d_mid, 0)));
    cache.x.clear();
  }
  if (rebuilt) *rebuilt = !extends;
  const int pos0 = static_cast<int>(cache.x.size()), n = l - pos0;
  // L2–3: the new columns' e_t = W_e[:, x[t]] + W_p[:, t] at their absolute positions t
  MatF X = embed_new_columns(x, pos0, c, W.W_e, W.W_p);  // (d_e, n)
  embedding_extras<float>(X, c, W.extras, nullptr, lines::d_transformer::embed, Axis::TokenX);  // not in the paper: BERT checkpoints' extras
  const Mask mask = windowed(c.mask == MaskKind::Prefix ? prefix_mask(l, p) : unidirectional_mask(l, l), c.window).rightCols(n);  // (ℓ, n)
  const AttentionOptions av = attention_options(c, true);
  for (int layer = 0; layer < c.L; ++layer) {  // L4
    const LayerW<const float>& Wl = W.layers[layer];
    residual_line_pair<float>(X, c, Wl.gamma1, Wl.beta1, nullptr, lines::d_transformer::norm1, "X", "X̃", Axis::TokenX,
                              [&](MatF& Xr, const MatF& in, const std::string&, LineRef line) {
                                Xr += cached_mha(attn, in, Wl.attn, cache.K[layer], cache.V[layer], true, mask,
                                                 at_line(av, line, layer + 1));
                              });
    residual_line_pair<float>(X, c, Wl.gamma2, Wl.beta2, nullptr, lines::d_transformer::norm2, "X", "X̃", Axis::TokenX,
                              [&](MatF& Xr, const MatF& in, const std::string& in_name, LineRef line) {
                                mlp_line<float>(Xr, in, in_name,
                                                {Wl.W_mlp1, Wl.b_mlp1, Wl.W_mlp2, Wl.b_mlp2, Wl.W_gate, Wl.b_gate, "mlp1", "gate"},
                                                c.act(), nullptr, line, "X", Axis::TokenX);
                              });
  }
  cache.x = x;
  cache.p = p;
  // L10–11 on the last column only: Algorithm 14 reads P[:, ℓ] alone (see last_column_p)
  return last_column_p(X, c, W.gamma, W.beta, W.W_u, W.W_e, W.extras.b_u, lines::d_transformer::P);
}

}  // namespace sf
