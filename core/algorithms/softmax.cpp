// Eq. (2): softmax(A)[t_z, t_x] := exp A[t_z, t_x] / Σ_t exp A[t, t_x], column by column.
#include <algorithm>

#include <unsupported/Eigen/SpecialFunctions>

#include "core/algorithms/algorithms.hpp"

namespace sf {

template <class T>
Mat<T> softmax_columns(const Mat<T>& A) {
  Mat<T> out(A.rows(), A.cols());  // (rows, cols), each column a distribution
  for (Eigen::Index c = 0; c < A.cols(); ++c) {
    const T mx = A.col(c).maxCoeff();
    if (mx == neg_inf<T>()) {  // every entry masked: no distribution exists
      out.col(c).setZero();
      continue;
    }
    out.col(c) = (A.col(c).array() - mx).exp().matrix();  // vectorised exp
    // Masked (−∞) entries get weight exactly 0. (Eigen's vectorised exp clamps its input, so
    // exp(−∞) comes out as 2.9e-39 in float and 5.6e-309 in double: set 0 explicitly.) A plain
    // loop, which the compiler vectorises (Eigen 3.4's select() runs one scalar at a time).
    const T* a = A.col(c).data();
    T* p = out.col(c).data();
    for (Eigen::Index i = 0; i < A.rows(); ++i) p[i] = a[i] == neg_inf<T>() ? T(0) : p[i];
    out.col(c) *= T(1) / out.col(c).sum();  // one division a column, then multiplications (≤ 1 ulp from dividing each)
  }
  return out;
}

// Eq. (5): GELU(x) = x · ℙ[X ≤ x] = x · ½(1 + erf(x/√2)).
template <class T>
Mat<T> gelu(const Mat<T>& A) {
  const T r = T(0.70710678118654752440);
  return (A.array() * (T(0.5) * (T(1) + (A.array() * r).erf()))).matrix();
}

template <class T>
Mat<T> relu(const Mat<T>& A) {
  return A.cwiseMax(T(0));
}

Mask bidirectional_mask(int l_z, int l_x) { return Mask::Ones(l_z, l_x); }

Mask unidirectional_mask(int l_z, int l_x) {
  Mask m(l_z, l_x);  // (ℓ_z, ℓ_x): Mask[t_z, t_x] = [[t_z ≤ t_x]]
  for (int tx = 0; tx < l_x; ++tx) {  // column t_x: ones for t_z ≤ t_x (0-based here), zeros below
    const int ones = std::min(tx + 1, l_z);
    m.col(tx).head(ones).setOnes();
    m.col(tx).tail(l_z - ones).setZero();
  }
  return m;
}

template Mat<float> softmax_columns(const Mat<float>&);
template Mat<double> softmax_columns(const Mat<double>&);
template Mat<float> gelu(const Mat<float>&);
template Mat<double> gelu(const Mat<double>&);
template Mat<float> relu(const Mat<float>&);
template Mat<double> relu(const Mat<double>&);

}  // namespace sf
