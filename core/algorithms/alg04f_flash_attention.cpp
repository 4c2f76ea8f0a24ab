// Algorithm 4-F: Ṽ ← FlashAttention(X, Z | W_qkv, Mask; B_r, B_c)
//   NOT IN THE PAPER: Dao et al. 2022 ("FlashAttention"), as the encyclopedia article (seed 004)
//   describes it: Algorithm 4 without the ℓ_z×ℓ_x matrix S, over blocks of keys with an online softmax.
//   Tokens are columns (the paper's convention): the "rows" of Q, O, m, ℓ in Dao et al. are columns here.
//   Input: X ∈ ℝ^{d_x×ℓ_x}, Z ∈ ℝ^{d_z×ℓ_z}, as in Algorithm 4.
//   Output: Ṽ ∈ ℝ^{d_out×ℓ_x}, Algorithm 4's Ṽ up to rounding.
//   Parameters: W_qkv as in Algorithm 4.
//   Hyperparameters: Mask ∈ {0,1}^{ℓ_z×ℓ_x}; B_r, B_c ≥ 1, the query and key block sizes.
//   A query column whose keys are all masked has ℓ = 0 at line 14: its Ṽ column is 0, as Algorithm 4's
//   softmax_columns makes an all-−∞ column all zeros (so V·0 = 0).
//   Variants as Algorithm 4: RoPE rotates Q and K (rope_rotate), ALiBi adds m_h·B to each block of
//   S/√d_attn (alibi_bias of the block's positions). No patch points: experiments run on Algorithm 4.
#include <algorithm>
#include <cmath>
#include <optional>

#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

template <class T> using Row = Eigen::Matrix<T, 1, Eigen::Dynamic>;

// A block of columns: the 0-based first one and how many (the last block may be shorter than B).
struct Block {
  Eigen::Index start = 0, size = 0;
  std::string range(const char* t) const {  // e.g. "t_x = 17 … 32" (1-based)
    return std::string(t) + " = " + std::to_string(start + 1) + " … " + std::to_string(start + size);
  }
};

Block block(int k, int B, Eigen::Index n) {  // block k (1-based) of size B over n columns
  const Eigen::Index start = static_cast<Eigen::Index>(k - 1) * B;
  return {start, std::min<Eigen::Index>(B, n - start)};
}

int blocks(Eigen::Index n, int B) { return static_cast<int>((n + B - 1) / B); }  // ⌈n/B⌉

// Emits line r with the values `bind()` makes, only when tracing (untraced, no value is copied).
template <class F>
void line(Tracer* tr, LineRef r, F&& bind) {
  if (tr) tr->line(r, bind());
}

// Labels the TokenX / TokenZ axes of a block's values with the block's own tokens, so that row 1 of
// S_blk reads as token J.start + 1. Empty when the trace has no token sequences in force.
class BlockTokens {
 public:
  BlockTokens(Tracer* tr, Block I, Block J) {
    if (!tr) return;
    const auto [sx, sz] = tr->sequences();
    const auto& seqs = tr->trace().sequences;
    if (sx < 0 || sz < 0) return;
    x_ = slice(seqs[sx], I), z_ = slice(seqs[sz], J);
    scope_.emplace(tr, x_, z_);
  }

 private:
  static Tokens slice(const Tokens& t, Block b) {
    if (b.start + b.size > static_cast<Eigen::Index>(t.size())) return t;  // labels shorter than the values
    return Tokens(t.begin() + b.start, t.begin() + b.start + b.size);
  }
  Tokens x_, z_;
  std::optional<TraceSequences> scope_;
};

const char* const kColumns =
    "Tokens are columns (the paper's convention): Dao et al.'s rows of Q, O, m, ℓ are columns here.";

// The last line's comparison: Algorithm 4 run untraced on the same inputs, and the memory each holds.
template <class T>
std::vector<Value> comparison(const Mat<T>& X, const Mat<T>& Z, const AttentionHeadW<const T>& W, const Mask& mask,
                              int B_r, int B_c, const AttentionOptions& av, const Mat<T>& Vt) {
  const Mat<T> exact = attention<T>(X, Z, W, mask, nullptr, nullptr, av);  // Algorithm 4, (d_out, ℓ_x)
  const double diff = Vt.size() ? static_cast<double>((Vt - exact).cwiseAbs().maxCoeff()) : 0.0;
  const Eigen::Index l_z = Z.cols(), l_x = X.cols(), d_out = W.W_v.rows();
  const Eigen::Index b_r = std::min<Eigen::Index>(B_r, l_x), b_c = std::min<Eigen::Index>(B_c, l_z);
  return {tv("Ṽ", Vt, Axis::Feature, Axis::TokenX),
          with_note(tscalar("max |Ṽ_flash − Ṽ|", diff),
                    "Against Algorithm 4 (Attention) on the same X, Z, W_qkv and Mask, computed untraced: the "
                    "two differ only by rounding (the online softmax sums in another order and rescales)."),
          with_note(tscalar("floats, Algorithm 4's S", static_cast<double>(l_z * l_x)),
                    "ℓ_z·ℓ_x: Algorithm 4 holds the whole score matrix S (and softmax(S), as large) at once."),
          with_note(tscalar("floats, Algorithm 4-F's blocks", static_cast<double>(b_c * b_r + 2 * b_r + d_out * b_r)),
                    "B_c·B_r (S_blk) + 2·B_r (m, ℓ) + d_out·B_r (O): the working set of one block, whatever "
                    "ℓ_z and ℓ_x are (Q, K, V and Ṽ, which both algorithms hold, are not counted).")};
}

}  // namespace

template <class T>
Mat<T> flash_attention(const Mat<T>& X, const Mat<T>& Z, const AttentionHeadW<const T>& W, const Mask& mask, int B_r,
                       int B_c, Tracer* tr, const AttentionOptions& av) {
  if (mask.rows() != Z.cols() || mask.cols() != X.cols())
    throw Error("FlashAttention: Mask must be ℓ_z×ℓ_x = " + std::to_string(Z.cols()) + "×" + std::to_string(X.cols()));
  if (B_r < 1 || B_c < 1)
    throw Error("FlashAttention: the block sizes must be at least 1 (B_r = " + std::to_string(B_r) +
                ", B_c = " + std::to_string(B_c) + "); set block_r and block_c to 1 or more");
  if (av.patch.patches) throw Error("FlashAttention has no patch points: experiments run on Algorithm 4");
  TraceFrame frame(tr, algs::flash_attention,
                   tr ? std::vector<Value>{tv("X", X, Axis::Feature, Axis::TokenX), tv("Z", Z, Axis::Feature, Axis::TokenZ),
                                           tparam<T>(tr, "W_q", W.W_q), tparam<T>(tr, "b_q", W.b_q),
                                           tparam<T>(tr, "W_k", W.W_k), tparam<T>(tr, "b_k", W.b_k),
                                           tparam<T>(tr, "W_v", W.W_v), tparam<T>(tr, "b_v", W.b_v),
                                           tmask("Mask", mask, Axis::TokenZ, Axis::TokenX), tscalar("B_r", B_r),
                                           tscalar("B_c", B_c)}
                      : std::vector<Value>{});
  namespace L = lines::flash_attention;
  const T inv_sqrt_d = T(1) / std::sqrt(static_cast<T>(W.W_q.rows()));
  const Eigen::Index l_x = X.cols(), l_z = Z.cols(), d_out = W.W_v.rows();

  // L1: Q ← W_q X + b_q 1ᵀ   (RoPE: then column t rotated by t·θ_i, as Algorithm 4)
  Mat<T> Q = (W.W_q * X).colwise() + W.b_q;  // (d_attn, ℓ_x)
  if (av.rope_base > 0) rope_rotate<T>(Q, av.x_pos0, av.rope_base);
  line(tr, L::Q, [&] { return std::vector<Value>{tv("Q", Q, Axis::Feature, Axis::TokenX)}; });
  // L2: K ← W_k Z + b_k 1ᵀ   (RoPE: then column t rotated by t·θ_i)
  Mat<T> K = (W.W_k * Z).colwise() + W.b_k;  // (d_attn, ℓ_z)
  if (av.rope_base > 0) rope_rotate<T>(K, av.z_pos0, av.rope_base);
  line(tr, L::K, [&] { return std::vector<Value>{tv("K", K, Axis::Feature, Axis::TokenZ)}; });
  // L3: V ← W_v Z + b_v 1ᵀ
  const Mat<T> V = (W.W_v * Z).colwise() + W.b_v;  // (d_out, ℓ_z)
  line(tr, L::V, [&] { return std::vector<Value>{tv("V", V, Axis::Feature, Axis::TokenZ)}; });

  Mat<T> Vt = Mat<T>::Zero(d_out, l_x);  // (d_out, ℓ_x), filled one query block at a time
  // L4: for i ∈ [⌈ℓ_x/B_r⌉]: I ← the i-th block of B_r query columns
  for (int i = 1; i <= blocks(l_x, B_r); ++i) {
    const Block I = block(i, B_r, l_x);
    line(tr, L::for_i, [&] {
      return std::vector<Value>{with_note(tscalar("i", i), "Query block I = columns " + I.range("t_x") + ". " + kColumns)};
    });
    // L5: m ← −∞, ℓ ← 0, O ← 0   [[m, ℓ ∈ ℝ^{1×|I|}, O ∈ ℝ^{d_out×|I|}]]
    Row<T> m = Row<T>::Constant(I.size, neg_inf<T>()), ell = Row<T>::Zero(I.size);  // (1, |I|) each
    Mat<T> O = Mat<T>::Zero(d_out, I.size);                                            // (d_out, |I|)
    {
      BlockTokens labels(tr, I, {0, 0});
      line(tr, L::init, [&] {
        return std::vector<Value>{tv("m", m, Axis::Feature, Axis::TokenX), tv("ℓ", ell, Axis::Feature, Axis::TokenX),
                                  tv("O", O, Axis::Feature, Axis::TokenX)};
      });
    }
    // L6: for j ∈ [⌈ℓ_z/B_c⌉]: J ← the j-th block of B_c key tokens
    for (int j = 1; j <= blocks(l_z, B_c); ++j) {
      const Block J = block(j, B_c, l_z);
      BlockTokens labels(tr, I, J);
      line(tr, L::for_j, [&] {
        return std::vector<Value>{with_note(tscalar("j", j), "Key block J = tokens " + J.range("t_z") + " of Z.")};
      });
      const auto M = mask.block(J.start, I.start, J.size, I.size);  // (|J|, |I|)
      // L7: if ¬Mask[t_z, t_x] for every t_z ∈ J, t_x ∈ I then skip this block
      const bool skip = (M.array() == 0).all();
      line(tr, L::skip, [&] {
        return std::vector<Value>{with_note(
            tscalar("skip", skip ? 1 : 0),
            skip ? "Every pair of block (i, j) is masked: its scores would all be −∞, so it is never computed."
                 : "Some pair of block (i, j) is allowed by the mask: the block is computed.")};
      });
      if (skip) continue;
      // L8: S_blk ← K[:, J]ᵀ Q[:, I] / √d_attn; ∀ t_z, t_x, if ¬Mask[t_z, t_x] then S_blk[t_z, t_x] ← −∞
      Mat<T> S = (K.middleCols(J.start, J.size).transpose() * Q.middleCols(I.start, I.size)) * inv_sqrt_d;  // (|J|, |I|)
      if (av.alibi)  // ALiBi (variant, as Algorithm 4): + m_h·B of the block's positions
        S += static_cast<T>(av.m) * alibi_bias<T>(static_cast<int>(J.size), static_cast<int>(I.size),
                                                  av.z_pos0 + static_cast<int>(J.start), av.x_pos0 + static_cast<int>(I.start));
      if (av.relative()) {  // relative bias (variant, as Algorithm 4): + B of the block's positions
        AttentionOptions at = av;
        at.z_pos0 += static_cast<int>(J.start);
        at.x_pos0 += static_cast<int>(I.start);
        S += relative_bias<T>(at, static_cast<int>(J.size), static_cast<int>(I.size));
      }
      S = (M.array() != 0).select(S, neg_inf<T>());
      line(tr, L::S_blk, [&] { return std::vector<Value>{tv("S_blk", S, Axis::TokenZ, Axis::TokenX)}; });
      // L9: m_new ← max(m, max_{t_z} S_blk[t_z, :])   (column-wise)
      const Row<T> m_new = m.cwiseMax(S.colwise().maxCoeff());  // (1, |I|)
      line(tr, L::m_new, [&] { return std::vector<Value>{tv("m_new", m_new, Axis::Feature, Axis::TokenX)}; });
      // exp(m − m_new): a column with no allowed key yet (m = −∞) has O = 0 and ℓ = 0, so its factor is
      // 0 (not exp(−∞ + ∞) = NaN); exp(S_blk − m_new) is exactly 0 at −∞ (Eigen's exp clamps its input).
      const Row<T> alpha = (m.array() == neg_inf<T>()).select(T(0), (m - m_new).array().exp()).matrix();
      const Mat<T> P = (S.array() == neg_inf<T>()).select(T(0), (S.rowwise() - m_new).array().exp()).matrix();  // (|J|, |I|)
      // L10: O ← O · diag(exp(m − m_new)) + V[:, J] exp(S_blk − 1 m_newᵀ)
      O = O * alpha.asDiagonal();
      O.noalias() += V.middleCols(J.start, J.size) * P;
      line(tr, L::O, [&] { return std::vector<Value>{tv("O", O, Axis::Feature, Axis::TokenX)}; });
      // L11: ℓ ← ℓ ⊙ exp(m − m_new) + 1ᵀ exp(S_blk − 1 m_newᵀ)
      ell = ell.cwiseProduct(alpha) + P.colwise().sum();
      line(tr, L::ell, [&] { return std::vector<Value>{tv("ℓ", ell, Axis::Feature, Axis::TokenX)}; });
      // L12: m ← m_new
      m = m_new;
      line(tr, L::m, [&] { return std::vector<Value>{tv("m", m, Axis::Feature, Axis::TokenX)}; });
    }  // L13: end
    // L14: Ṽ[:, I] ← O · diag(ℓ)⁻¹   (ℓ = 0: every key masked, the column is 0 as in Algorithm 4)
    Vt.middleCols(I.start, I.size) = O * (ell.array() > 0).select(ell.array().inverse(), T(0)).matrix().asDiagonal();
    line(tr, L::V_block, [&] {
      return std::vector<Value>{with_note(tv("Ṽ", Vt, Axis::Feature, Axis::TokenX),
                                          "Columns " + I.range("t_x") + " are done; the columns of later query blocks are still 0.")};
    });
  }  // L15: end
  // L16: return Ṽ   (with max |Ṽ_flash − Ṽ| against Algorithm 4, and the memory each needs)
  line(tr, L::V_tilde, [&] { return comparison<T>(X, Z, W, mask, B_r, B_c, av, Vt); });
  return Vt;
}

template Mat<float> flash_attention(const Mat<float>&, const Mat<float>&, const AttentionHeadW<const float>&,
                                    const Mask&, int, int, Tracer*, const AttentionOptions&);
template Mat<double> flash_attention(const Mat<double>&, const Mat<double>&, const AttentionHeadW<const double>&,
                                     const Mask&, int, int, Tracer*, const AttentionOptions&);

}  // namespace sf
