// Stepformer core: common numeric types.
//
// Legend (the paper's symbols, "Formal Algorithms for Transformers", Phuong & Hutter 2022):
//   d_e    embedding size          ℓ (l)   sequence length        ℓ_max  max context
//   N_V    vocabulary size         L       layers                 H      heads
//   d_attn query/key size          d_mid   value size per head    d_mlp  MLP hidden size
// Matrices act on column vectors: a sequence is a matrix with ONE COLUMN PER TOKEN, exactly
// as in the paper (X ∈ ℝ^{d_e×ℓ}). Eigen is column-major, so a column is contiguous.
// Token ids are 1-based everywhere in core, as in the paper; the only "- 1" conversions are
// at the points where a 1-based id or position indexes an Eigen column.
#pragma once
#include <Eigen/Dense>
#include <limits>
#include <type_traits>
#include <vector>

namespace sf {

template <class T> using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T> using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;
// Views of parameter storage; MapM<const float> is a read-only view.
template <class T>
using MapM = Eigen::Map<std::conditional_t<std::is_const_v<T>, const Mat<std::remove_const_t<T>>, Mat<T>>>;
template <class T>
using MapV = Eigen::Map<std::conditional_t<std::is_const_v<T>, const Vec<std::remove_const_t<T>>, Vec<T>>>;

using MatF = Mat<float>;
using VecF = Vec<float>;

// Mask ∈ {0,1}^{ℓ_z×ℓ_x} (eq. 3), kept as an explicit 0/1 matrix.
using Mask = Eigen::Matrix<unsigned char, Eigen::Dynamic, Eigen::Dynamic>;

// A token sequence x ∈ V*: 1-based token ids.
using Tokens = std::vector<int>;

template <class T> constexpr T neg_inf() { return -std::numeric_limits<T>::infinity(); }

}  // namespace sf
