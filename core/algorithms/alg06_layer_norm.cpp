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

namespace {

// Algorithm 6 on one column e, ê written in place: e and ê may be columns of X and of the output
// (Ref: no copy, no allocation), so an untraced pass over ℓ columns allocates nothing.
template <class T>
void layer_norm_into(const Eigen::Ref<const Vec<T>>& e, const MapV<const T>& gamma, const MapV<const T>& beta, T eps,
                     Tracer* tr, Eigen::Ref<Vec<T>> e_hat) {
  TraceFrame frame(tr, 6,
                   tr ? std::vector<Value>{tv("e", e), tparam<T>(tr, "γ", gamma), tparam<T>(tr, "β", beta),
                                           with_note(tscalar("ε", eps), "The paper has no ε: it divides by √v, which is 0 "
                                                                        "for a constant e. Stepformer uses √(v + ε).")}
                      : std::vector<Value>{});
  const T d_e = static_cast<T>(e.size());
  // L1: m ← Σ_{i=1}^{d_e} e[i] / d_e
  const T m = e.sum() / d_e;
  if (tr) tr->line(lines::layer_norm::m, {tscalar("m", m)});
  // L2: v ← Σ_{i=1}^{d_e} (e[i] − m)² / d_e
  const T v = (e.array() - m).square().sum() / d_e;
  if (tr) tr->line(lines::layer_norm::v, {tscalar("v", v)});
  // L3: return ê = (e − m)/√(v + ε) ⊙ γ + β
  e_hat = ((e.array() - m) / std::sqrt(v + eps) * gamma.array() + beta.array()).matrix();  // (d_e)
  if (tr) tr->line(lines::layer_norm::e_hat, {tv("ê", e_hat)});
}

}  // namespace

template <class T>
Vec<T> layer_norm(const Vec<T>& e, const MapV<const T>& gamma, const MapV<const T>& beta, T eps, Tracer* tr) {
  Vec<T> e_hat(e.size());  // (d_e)
  layer_norm_into<T>(e, gamma, beta, eps, tr, e_hat);
  return e_hat;
}

template <class T>
Mat<T> layer_norm_columns(const Mat<T>& X, const MapV<const T>& gamma, const MapV<const T>& beta, T eps, Tracer* tr) {
  Mat<T> out(X.rows(), X.cols());  // (d_e, ℓ)
  for (Eigen::Index t = 0; t < X.cols(); ++t) {
    TraceIndex it(tr, &Indices::t, static_cast<int>(t) + 1);
    layer_norm_into<T>(X.col(t), gamma, beta, eps, tr, out.col(t));  // out[:, t] ← layer_norm(X[:, t] | γ, β)
  }
  return out;
}

// Variant (RMSNorm, encyclopedia article 004): Algorithm 6 without m and without β.
template <class T>
Vec<T> rms_norm(const Vec<T>& e, const MapV<const T>& gamma, T eps, Tracer* tr) {
  TraceFrame frame(tr, 6,
                   tr ? std::vector<Value>{tv("e", e), tparam<T>(tr, "γ", gamma),
                                           with_note(tscalar("ε", eps), "RMSNorm (variant, encyclopedia article 004): "
                                                                        "no m, no β; ê = e/√(v + ε) ⊙ γ.")}
                      : std::vector<Value>{});
  const T d_e = static_cast<T>(e.size());
  // L1: (no m: RMSNorm does not centre e)
  // L2: v ← Σ_{i=1}^{d_e} e[i]² / d_e
  const T v = e.array().square().sum() / d_e;
  if (tr) tr->line(lines::layer_norm::v, {tscalar("v", v)});
  // L3: return ê = e/√(v + ε) ⊙ γ
  Vec<T> e_hat = (e.array() / std::sqrt(v + eps) * gamma.array()).matrix();  // (d_e)
  if (tr) tr->line(lines::layer_norm::e_hat, {tv("ê", e_hat)});
  return e_hat;
}

template <class T>
Mat<T> norm_columns(const Mat<T>& X, const MapV<const T>& gamma, const MapV<const T>& beta, const ModelConfig& c,
                    Tracer* tr) {
  const T eps = static_cast<T>(c.eps);
  if (c.norm == Norm::LayerNorm) return layer_norm_columns<T>(X, gamma, beta, eps, tr);
  Mat<T> out(X.rows(), X.cols());  // (d_e, ℓ)
  for (Eigen::Index t = 0; t < X.cols(); ++t) {
    TraceIndex it(tr, &Indices::t, static_cast<int>(t) + 1);
    out.col(t) = rms_norm<T>(X.col(t), gamma, eps, tr);
  }
  return out;
}

template Vec<float> rms_norm(const Vec<float>&, const MapV<const float>&, float, Tracer*);
template Vec<double> rms_norm(const Vec<double>&, const MapV<const double>&, double, Tracer*);
template Mat<float> norm_columns(const Mat<float>&, const MapV<const float>&, const MapV<const float>&,
                                 const ModelConfig&, Tracer*);
template Mat<double> norm_columns(const Mat<double>&, const MapV<const double>&, const MapV<const double>&,
                                  const ModelConfig&, Tracer*);
template Vec<float> layer_norm(const Vec<float>&, const MapV<const float>&, const MapV<const float>&, float, Tracer*);
template Vec<double> layer_norm(const Vec<double>&, const MapV<const double>&, const MapV<const double>&, double,
                                Tracer*);
template Mat<float> layer_norm_columns(const Mat<float>&, const MapV<const float>&, const MapV<const float>&, float,
                                       Tracer*);
template Mat<double> layer_norm_columns(const Mat<double>&, const MapV<const double>&, const MapV<const double>&,
                                        double, Tracer*);

}  // namespace sf
