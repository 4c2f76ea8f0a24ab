// The variants of the seeds (docs/variants.md) that change what a line of the paper's algorithms
// computes, not its number: GPT-2's GELU_tanh, SwiGLU's SiLU, the prefix-LM mask, RoPE and ALiBi
// (all from the encyclopedia article, seed 004, except GELU_tanh: GPT-2).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"

namespace sf {

// Variant (GPT-2): GELU_tanh(x) = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
template <class T>
Mat<T> gelu_tanh(const Mat<T>& A) {
  const T k = static_cast<T>(std::sqrt(2.0 / std::numbers::pi));
  const auto x = A.array();  // Eigen's vectorised tanh (a scalar std::tanh per entry cost 30–50% of a forward)
  return (T(0.5) * x * (T(1) + (k * (x + T(0.044715) * x * x * x)).tanh())).matrix();
}

// Variant (SwiGLU, seed 004): SiLU(x) = x·σ(x) = x / (1 + e^{−x}).
template <class T>
Mat<T> silu(const Mat<T>& A) {
  return A.unaryExpr([](T x) { return x / (T(1) + std::exp(-x)); });
}

// Variant (prefix-LM, seed 004): Mask[t_z, t_x] = [[t_z ≤ max(t_x, p)]].
Mask prefix_mask(int l, int p) {
  Mask M(l, l);  // (ℓ, ℓ)
  for (int t_z = 1; t_z <= l; ++t_z)
    for (int t_x = 1; t_x <= l; ++t_x) M(t_z - 1, t_x - 1) = t_z <= std::max(t_x, p) ? 1 : 0;
  return M;
}

// Variant (sliding window, issue 25): Mask[t_z, t_x] ∧ [[|t_z − t_x| ≤ w]].
Mask windowed(Mask m, int w) {
  if (w <= 0) return m;
  for (Eigen::Index t_x = 0; t_x < m.cols(); ++t_x)
    for (Eigen::Index t_z = 0; t_z < m.rows(); ++t_z)
      if (std::abs(t_z - t_x) > w) m(t_z, t_x) = 0;
  return m;
}

int prefix_position(const Tokens& x, const ModelConfig& c) {
  const auto sep = std::find(c.vocab.begin(), c.vocab.end(), c.prefix_separator);
  if (sep == c.vocab.end()) return 0;
  const int id = static_cast<int>(sep - c.vocab.begin()) + 1;  // 1-based token id
  const auto first = std::find(x.begin(), x.end(), id);
  return first == x.end() ? 0 : static_cast<int>(first - x.begin()) + 1;
}

AttentionOptions attention_options(const ModelConfig& c, bool self) {
  AttentionOptions av;
  av.rope_base = self && c.position == Position::Rope ? c.rope_base : 0;
  av.alibi = self && c.position == Position::Alibi;
  av.H_kv = c.kv_heads();
  if (c.attention == AttentionKind::Flash) av.flash_B_r = c.block_r, av.flash_B_c = c.block_c;
  if (c.attention == AttentionKind::RandomFeatures) av.rf_D = c.rf_features, av.rf_seed = c.rf_seed, av.rf_orthogonal = c.rf_orthogonal;
  if (self && c.position == Position::Relative) {
    av.rel_buckets = c.relative_buckets;
    av.rel_max_distance = c.relative_max_distance;
    av.rel_bidirectional = c.arch == "bert";  // T5's encoder buckets; GPT's are its decoder's
  }
  return av;
}

// Variant (RoPE, seed 004): q′[2i−1] = q[2i−1] cos(tθ_i) − q[2i] sin(tθ_i),
// q′[2i] = q[2i−1] sin(tθ_i) + q[2i] cos(tθ_i), θ_i = rope_base^{−2(i−1)/d_attn}.
template <class T>
void rope_rotate(Mat<T>& A, int pos0, double rope_base) {
  const Eigen::Index d_attn = A.rows();
  for (Eigen::Index j = 0; j < A.cols(); ++j) {
    const double t = pos0 + static_cast<double>(j) + 1;  // the token's 1-based position
    for (Eigen::Index i = 1; 2 * i <= d_attn; ++i) {
      const double theta = std::pow(rope_base, -2.0 * static_cast<double>(i - 1) / static_cast<double>(d_attn));
      const T cs = static_cast<T>(std::cos(t * theta)), sn = static_cast<T>(std::sin(t * theta));
      const T a = A(2 * i - 2, j), b = A(2 * i - 1, j);
      A(2 * i - 2, j) = a * cs - b * sn;
      A(2 * i - 1, j) = a * sn + b * cs;
    }
  }
}

// Variant (ALiBi, seed 004): B[t_z, t_x] = −|t_z − t_x| at absolute positions.
template <class T>
Mat<T> alibi_bias(int l_z, int l_x, int z_pos0, int x_pos0) {
  Mat<T> B(l_z, l_x);  // (ℓ_z, ℓ_x)
  for (int t_z = 1; t_z <= l_z; ++t_z)
    for (int t_x = 1; t_x <= l_x; ++t_x) B(t_z - 1, t_x - 1) = -static_cast<T>(std::abs((z_pos0 + t_z) - (x_pos0 + t_x)));
  return B;
}

// Variant (relative position bias, T5; issue 25): transformers' T5Attention._relative_position_bucket
// with relative_position = t_z − t_x (memory − query), in double.
int relative_bucket(int rel, bool bidirectional, int buckets, int max_distance) {
  int offset = 0, n = buckets, d = 0;
  if (bidirectional) {
    n /= 2;
    if (rel > 0) offset = n;  // keys after the query: the upper half
    d = std::abs(rel);
  } else {
    d = std::max(-rel, 0);  // t_x − t_z; keys after the query (masked by the causal mask) at 0
  }
  const int exact = n / 2;
  if (d < exact) return offset + d;
  const int large = exact + static_cast<int>(std::log(static_cast<double>(d) / exact) /
                                             std::log(static_cast<double>(max_distance) / exact) * (n - exact));
  return offset + std::min(large, n - 1);
}

Eigen::MatrixXi relative_buckets(const AttentionOptions& av, int l_z, int l_x) {
  Eigen::MatrixXi b(l_z, l_x);  // (ℓ_z, ℓ_x)
  for (int t_x = 1; t_x <= l_x; ++t_x)
    for (int t_z = 1; t_z <= l_z; ++t_z)
      b(t_z - 1, t_x - 1) = relative_bucket((av.z_pos0 + t_z) - (av.x_pos0 + t_x), av.rel_bidirectional, av.rel_buckets,
                                            av.rel_max_distance);
  return b;
}

template <class T>
Mat<T> relative_bias(const AttentionOptions& av, int l_z, int l_x) {
  if (static_cast<int>(av.rel_table.size()) != av.rel_buckets)
    throw Error("relative position bias: the head's W_rel row has " + std::to_string(av.rel_table.size()) +
                " entries, not relative_buckets = " + std::to_string(av.rel_buckets));
  const Eigen::MatrixXi b = relative_buckets(av, l_z, l_x);
  return b.unaryExpr([&](int k) { return static_cast<T>(av.rel_table[static_cast<size_t>(k)]); });
}

template <class T>
AttentionOptions relative_head(AttentionOptions av, const MHAttentionW<const T>& W, int h) {
  if (!av.relative()) return av;
  const Eigen::Index H = static_cast<Eigen::Index>(W.heads.size());
  if (W.W_rel.rows() != H || W.W_rel.cols() != av.rel_buckets)
    throw Error("relative position bias: W_rel must be H×relative_buckets = " + std::to_string(H) + "×" +
                std::to_string(av.rel_buckets) + " (this self-attention's is " + std::to_string(W.W_rel.rows()) + "×" +
                std::to_string(W.W_rel.cols()) + ")");
  av.rel_table.resize(static_cast<size_t>(av.rel_buckets));
  for (int k = 0; k < av.rel_buckets; ++k) av.rel_table[static_cast<size_t>(k)] = static_cast<double>(W.W_rel(h - 1, k));
  return av;
}

#define SF_INSTANTIATE_VARIANTS(T)                               \
  template AttentionOptions relative_head<T>(AttentionOptions, const MHAttentionW<const T>&, int); \
  template Mat<T> relative_bias<T>(const AttentionOptions&, int, int); \
  template Mat<T> gelu_tanh<T>(const Mat<T>&);                   \
  template Mat<T> silu<T>(const Mat<T>&);                        \
  template void rope_rotate<T>(Mat<T>&, int, double);            \
  template Mat<T> alibi_bias<T>(int, int, int, int);
SF_INSTANTIATE_VARIANTS(float)
SF_INSTANTIATE_VARIANTS(double)
#undef SF_INSTANTIATE_VARIANTS

}  // namespace sf
