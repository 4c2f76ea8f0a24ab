// Algorithm 6: ê ← layer_norm(e | γ, β)
//   /* Normalizes layer activations e. */
//   Input: e ∈ ℝ^{d_e}, neural network activations.
//   Output: ê ∈ ℝ^{d_e}, normalized activations.
//   Parameters: γ, β ∈ ℝ^{d_e}, element-wise scale and offset.
// The paper divides by √v, which is 0 for a constant e; here it is √(v + ε), ε from the
// configuration (default 1e-5), as in the index tutorial and every real implementation.
#include <cmath>

#include "core/algorithms/algorithms.hpp"

namespace sf {

template <class T>
Vec<T> layer_norm(const Vec<T>& e, const MapV<const T>& gamma, const MapV<const T>& beta, T eps, Tracer* tr) {
  TraceFrame frame(tr, 6,
                   tr ? std::vector<Value>{tv("e", e), tv("γ", gamma), tv("β", beta),
                                           with_note(tscalar("ε", eps), "The paper has no ε: it divides by √v, which is 0 "
                                                                        "for a constant e. Stepformer uses √(v + ε).")}
                      : std::vector<Value>{});
  const T d_e = static_cast<T>(e.size());
  // L1: m ← Σ_{i=1}^{d_e} e[i] / d_e
  const T m = e.sum() / d_e;
  if (tr) tr->line(6, 1, {tscalar("m", m)});
  // L2: v ← Σ_{i=1}^{d_e} (e[i] − m)² / d_e
  const T v = (e.array() - m).square().sum() / d_e;
  if (tr) tr->line(6, 2, {tscalar("v", v)});
  // L3: return ê = (e − m)/√(v + ε) ⊙ γ + β
  Vec<T> e_hat = ((e.array() - m) / std::sqrt(v + eps) * gamma.array() + beta.array()).matrix();  // (d_e)
  if (tr) tr->line(6, 3, {tv("ê", e_hat)});
  return e_hat;
}

template <class T>
Mat<T> layer_norm_columns(const Mat<T>& X, const MapV<const T>& gamma, const MapV<const T>& beta, T eps, Tracer* tr) {
  Mat<T> out(X.rows(), X.cols());  // (d_e, ℓ)
  for (Eigen::Index t = 0; t < X.cols(); ++t) {
    TraceIndex it(tr, &Indices::t, static_cast<int>(t) + 1);
    out.col(t) = layer_norm<T>(X.col(t), gamma, beta, eps, tr);
  }
  return out;
}

template Vec<float> layer_norm(const Vec<float>&, const MapV<const float>&, const MapV<const float>&, float, Tracer*);
template Vec<double> layer_norm(const Vec<double>&, const MapV<const double>&, const MapV<const double>&, double,
                                Tracer*);
template Mat<float> layer_norm_columns(const Mat<float>&, const MapV<const float>&, const MapV<const float>&, float,
                                       Tracer*);
template Mat<double> layer_norm_columns(const Mat<double>&, const MapV<const double>&, const MapV<const double>&,
                                        double, Tracer*);

}  // namespace sf
