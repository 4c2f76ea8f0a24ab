// Random-feature attention's shared pieces (random_features.hpp): ω, φ, κ, the mask's key
// prefixes, the untraced linear-time estimate, and the comparisons with Algorithm 4.
#include "core/algorithms/random_features.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <string>

#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

template <class T> using Row = Eigen::Matrix<T, 1, Eigen::Dynamic>;

// splitmix64 (Steele, Lea, Flood 2014): a portable stream of 64-bit numbers; std::normal_distribution
// is implementation-defined, so it could not be reproduced by the PyTorch reference.
class Normals {
 public:
  explicit Normals(std::uint64_t seed) : state_(seed) {}
  double next() {  // N(0, 1) by Box–Muller, two per pair of uniforms
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform(), u2 = uniform();  // u1 ∈ (0, 1]: log(u1) is finite
    const double r = std::sqrt(-2.0 * std::log(u1)), a = 2.0 * std::numbers::pi * u2;
    spare_ = r * std::sin(a), has_spare_ = true;
    return r * std::cos(a);
  }

 private:
  double uniform() {  // [0, 1), 53 bits
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
  std::uint64_t state_;
  double spare_ = 0;
  bool has_spare_ = false;
};

// Each block of d rows of ω made orthonormal (modified Gram–Schmidt, in row order), then row i
// rescaled to ‖ξ_i‖ for a fresh ξ_i ~ N(0, I_d). D > d: the blocks are independent.
void orthogonalise(Mat<double>& omega, Normals& rng) {
  const Eigen::Index D = omega.rows(), d = omega.cols();
  for (Eigen::Index b0 = 0; b0 < D; b0 += d)
    for (Eigen::Index i = b0; i < std::min(D, b0 + d); ++i) {
      for (Eigen::Index j = b0; j < i; ++j) omega.row(i) -= omega.row(i).dot(omega.row(j)) * omega.row(j);
      omega.row(i).normalize();  // a Gaussian row is in the span of the others with probability 0
    }
  for (Eigen::Index i = 0; i < D; ++i) {
    double chi2 = 0;
    for (Eigen::Index k = 0; k < d; ++k) chi2 += std::pow(rng.next(), 2);
    omega.row(i) *= std::sqrt(chi2);
  }
}

template <class T> T sigma2(Eigen::Index d_attn) { return static_cast<T>(std::sqrt(static_cast<double>(d_attn))); }

}  // namespace

Mat<double> rf_omega(int D, int d_attn, std::uint64_t seed, int head, bool orthogonal) {
  if (D < 1 || d_attn < 1)
    throw Error("random-feature attention: D (rf_features) and d_attn must be at least 1 (they are " +
                std::to_string(D) + " and " + std::to_string(d_attn) + ")");
  // One stream per (seed, head): both are mixed into splitmix64's starting state.
  Normals rng(seed * 0x100000001B3ULL + static_cast<std::uint64_t>(head) * 0xD1B54A32D192ED03ULL);
  Mat<double> omega(D, d_attn);  // (D, d_attn) filled row by row
  for (int i = 0; i < D; ++i)
    for (int k = 0; k < d_attn; ++k) omega(i, k) = rng.next();
  if (orthogonal) orthogonalise(omega, rng);
  return omega;
}

template <class T>
Mat<T> rf_directions(const Mat<double>& omega) {
  return (omega / std::pow(static_cast<double>(omega.cols()), 0.25)).cast<T>();  // w_i = ω_i/σ
}

template <class T>
Mat<T> rf_phi(const Mat<T>& X, const Mat<T>& W) {
  const Mat<T> U = W * X;  // (D, ℓ) ⟨w_i, x_t⟩
  const T s = T(1) / std::sqrt(static_cast<T>(W.rows()));
  Mat<T> phi(2 * W.rows(), X.cols());  // (2D, ℓ)
  for (Eigen::Index i = 0; i < W.rows(); ++i) {
    phi.row(2 * i) = s * U.row(i).array().cos().matrix();
    phi.row(2 * i + 1) = s * U.row(i).array().sin().matrix();
  }
  return phi;
}

template <class T>
Row<T> rf_key_weights(const Mat<T>& K, const std::vector<char>& keep) {
  const Row<T> e = K.colwise().squaredNorm() / (T(2) * sigma2<T>(K.rows()));  // ‖k‖²/2σ²
  T c = 0;
  bool any = false;
  for (Eigen::Index t = 0; t < e.size(); ++t)
    if (keep[t]) c = any ? std::max(c, e(t)) : e(t), any = true;
  return (e.array() - c).min(T(0)).exp().matrix();  // keys no query sees get ≤ 1 too (never used)
}

KeyPrefixes key_prefixes(const Mask& mask) {
  const Eigen::Index l_z = mask.rows(), l_x = mask.cols();
  KeyPrefixes p{std::vector<int>(l_x, 0), std::vector<char>(l_z, 0), std::vector<int>(l_x)};
  for (Eigen::Index tz = 0; tz < l_z; ++tz) p.keep[tz] = (mask.row(tz).array() != 0).any() ? 1 : 0;
  for (Eigen::Index tx = 0; tx < l_x; ++tx) {
    for (Eigen::Index tz = l_z; tz > 0; --tz)
      if (mask(tz - 1, tx)) {
        p.n[tx] = static_cast<int>(tz);
        break;
      }
    for (Eigen::Index tz = 0; tz < p.n[tx]; ++tz)
      if ((mask(tz, tx) != 0) != (p.keep[tz] != 0))
        throw Error("random-feature attention runs in linear time only for masks in which each query sees a prefix "
                    "of the keys, less the padded ones (causal, bidirectional, cross, prefix-LM, padding); column t_x = " +
                    std::to_string(tx + 1) + " of this Mask is not one (key t_z = " + std::to_string(tz + 1) +
                    "): use attention \"exact\" for it");
  }
  std::iota(p.order.begin(), p.order.end(), 0);
  std::stable_sort(p.order.begin(), p.order.end(), [&p](int a, int b) { return p.n[a] < p.n[b]; });
  return p;
}

namespace {
// Emits line r with the values `bind()` makes, only when tracing (untraced, no value is copied).
template <class F>
void line(Tracer* tr, LineRef r, F&& bind) {
  if (tr) tr->line(r, bind());
}

template <class T>
std::vector<Value> directions_values(const Mat<double>& omega, const Mat<T>& W) {
  return {with_note(tscalar("σ", std::pow(static_cast<double>(omega.cols()), 0.25)), "σ = d_attn^{1/4}, so ⟨q, k⟩/σ² = qᵀk/√d_attn."),
          with_note(tv("ω", omega.cast<T>()), "ω_i ~ N(0, I), drawn from rf_seed (fixed, not trained, not stored)."),
          with_note(tv("W", W), "w_i = ω_i/σ ~ N(0, σ⁻² I): then E_w[φ(x)ᵀφ(y)] = e^{−‖x − y‖²/2σ²} (the article "
                                "writes N(0, σ² I), which gives e^{−σ²‖x − y‖²/2}).")};
}

// Line 12's note: what the guard did to this column, in words.
template <class T>
std::string guard_note(T b, T g) {
  if (g == T(0)) return "No key is allowed: the column is 0, as in Algorithm 4.";
  if (b >= T(kRfGuard) * g) return "b ≥ ε·g: Ṽ[:, t_x] = a/b.";
  return std::string(b <= T(0) ? "b ≤ 0" : "b is near 0") + " (b/g = " + std::to_string(static_cast<double>(b / g)) +
         ", the exact denominator is > 0): sin/cos features are not positive, so the estimate failed here; "
         "divided by ε·g instead (ε = 10⁻³).";
}
}  // namespace

template <class T>
Mat<T> rf_attention_qkv(const Mat<T>& Q, const Mat<T>& K, const Mat<T>& V, const Mask& mask, const Mat<double>& omega,
                        RfaStats<T>* stats, Tracer* tr) {
  namespace L = lines::random_feature_attention;
  const KeyPrefixes p = key_prefixes(mask);
  // L4: σ ← d_attn^{1/4}; w_i ← ω_i/σ
  const Mat<T> W = rf_directions<T>(omega);  // (D, d_attn)
  line(tr, L::W, [&] { return directions_values<T>(omega, W); });
  // L5: Φ_Q ← φ(Q)   L6: Φ_K ← φ(K)
  const Mat<T> phiQ = rf_phi<T>(Q, W), phiK = rf_phi<T>(K, W);  // (2D, ℓ_x), (2D, ℓ_z)
  line(tr, L::phi_Q, [&] { return std::vector<Value>{tv("φ(Q)", phiQ, Axis::Feature, Axis::TokenX)}; });
  line(tr, L::phi_K, [&] { return std::vector<Value>{tv("φ(K)", phiK, Axis::Feature, Axis::TokenZ)}; });
  // L7: κ[t_z] ← exp(‖K[:, t_z]‖²/2σ² − c)
  const Row<T> kappa = rf_key_weights<T>(K, p.keep);  // (1, ℓ_z)
  line(tr, L::kappa, [&] {
    return std::vector<Value>{with_note(tv("κ", kappa, Axis::Feature, Axis::TokenZ),
                                        "e^{‖k‖²/2σ²} of each key over that of the largest key (c): the common "
                                        "factor e^{c} cancels between numerator and denominator.")};
  });
  // L8: S_φ ← 0, s_φ ← 0, g ← 0, n ← 0
  Mat<T> S = Mat<T>::Zero(phiK.rows(), V.rows());  // (2D, d_out) S_φ
  Vec<T> s = Vec<T>::Zero(phiK.rows());            // (2D) s_φ
  T g = 0;
  const auto sums = [&] {
    return std::vector<Value>{tv("S_φ", S), tv("s_φ", s), tscalar("g", static_cast<double>(g))};
  };
  line(tr, L::init, sums);
  Mat<T> Vt = Mat<T>::Zero(V.rows(), Q.cols());  // (d_out, ℓ_x)
  RfaStats<T> st{Row<T>::Zero(Q.cols()), Row<T>::Zero(Q.cols()), 0};
  int n = 0;
  // L9: for t_x ∈ [ℓ_x], in the order of n(t_x)
  for (int tx : p.order) {
    line(tr, L::for_t, [&] {
      return std::vector<Value>{tscalar("t_x", tx + 1),
                                with_note(tscalar("n(t_x)", p.n[tx]), "The last key Mask allows query t_x.")};
    });
    // L10: while n < n(t_x): n ← n + 1; unless key n is padding: S_φ += κ_n φ(k_n) v_nᵀ, s_φ += κ_n φ(k_n), g += κ_n
    for (; n < p.n[tx]; ++n)
      if (p.keep[n]) {
        S.noalias() += (kappa(n) * phiK.col(n)) * V.col(n).transpose();
        s += kappa(n) * phiK.col(n);
        g += kappa(n);
      }
    line(tr, L::add, sums);
    // L11: a ← S_φᵀ φ(q_{t_x}), b ← s_φᵀ φ(q_{t_x})
    const Vec<T> a = S.transpose() * phiQ.col(tx);  // (d_out)
    const T b = s.dot(phiQ.col(tx));
    st.b(tx) = b, st.g(tx) = g;
    line(tr, L::num, [&] {
      return std::vector<Value>{tv("a", a), with_note(tscalar("b", static_cast<double>(b)), guard_note(b, g))};
    });
    // L12: Ṽ[:, t_x] ← a / max(b, ε g)   (no allowed key, g = 0: a 0 column)
    if (g > T(0)) {
      if (b < T(kRfGuard) * g) ++st.guarded;
      Vt.col(tx) = a / std::max(b, T(kRfGuard) * g);
    }
    line(tr, L::V_col, [&] {
      return std::vector<Value>{with_note(tv("Ṽ", Vt, Axis::Feature, Axis::TokenX), guard_note(b, g))};
    });
  }  // L13: end
  if (stats) *stats = std::move(st);
  return Vt;
}

template <class T>
Mat<T> rf_implied_weights(const Mat<T>& Q, const Mat<T>& K, const Mask& mask, const Mat<double>& omega) {
  const KeyPrefixes p = key_prefixes(mask);
  const Mat<T> W = rf_directions<T>(omega);
  const Row<T> kappa = rf_key_weights<T>(K, p.keep);
  Mat<T> A = (kappa.asDiagonal() * (rf_phi<T>(K, W).transpose() * rf_phi<T>(Q, W)));  // (ℓ_z, ℓ_x)
  A = (mask.array() != 0).select(A, T(0));
  for (Eigen::Index tx = 0; tx < A.cols(); ++tx) {
    const T g = (mask.col(tx).array() != 0).select(kappa.transpose(), T(0)).sum();
    if (g > T(0)) A.col(tx) /= std::max(A.col(tx).sum(), T(kRfGuard) * g);
  }
  return A;
}

namespace {
// softmax(S/√d_attn) with −∞ where ¬Mask (Algorithm 4 lines 4–6's weights).
template <class T>
Mat<T> exact_weights(const Mat<T>& Q, const Mat<T>& K, const Mask& mask) {
  const Mat<T> S = (K.transpose() * Q) / std::sqrt(static_cast<T>(Q.rows()));
  return softmax_columns<T>((mask.array() != 0).select(S, neg_inf<T>()));
}
}  // namespace

template <class T>
RfaError rf_error(const Mat<T>& Q, const Mat<T>& K, const Mat<T>& V, const Mask& mask, const Mat<double>& omega) {
  const Mat<T> A = exact_weights<T>(Q, K, mask);
  const Mat<T> dV = rf_attention_qkv<T>(Q, K, V, mask, omega) - V * A;
  RfaError e;
  e.max_v = dV.size() ? static_cast<double>(dV.cwiseAbs().maxCoeff()) : 0.0;
  e.mean_v = dV.size() ? static_cast<double>(dV.cwiseAbs().mean()) : 0.0;
  const Mat<T> dA = rf_implied_weights<T>(Q, K, mask, omega) - A;
  e.max_weights = dA.size() ? static_cast<double>(dA.cwiseAbs().maxCoeff()) : 0.0;
  return e;
}

template <class T>
std::vector<RfaErrorPoint> rf_error_curve(const Mat<T>& Q, const Mat<T>& K, const Mat<T>& V, const Mask& mask,
                                          const std::vector<int>& Ds, int seeds, std::uint64_t seed0, int head,
                                          bool orthogonal) {
  std::vector<RfaErrorPoint> out;
  const auto mean_sd = [](const std::vector<double>& x, double& mean, double& sd) {
    mean = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
    double ss = 0;
    for (double v : x) ss += (v - mean) * (v - mean);
    sd = x.size() > 1 ? std::sqrt(ss / static_cast<double>(x.size() - 1)) : 0.0;
  };
  for (int D : Ds) {
    std::vector<double> w, v;
    for (int k = 0; k < std::max(seeds, 1); ++k) {
      const RfaError e = rf_error<T>(Q, K, V, mask, rf_omega(D, static_cast<int>(Q.rows()), seed0 + k, head, orthogonal));
      w.push_back(e.max_weights), v.push_back(e.max_v);
    }
    RfaErrorPoint pt{D};
    mean_sd(w, pt.weights_mean, pt.weights_sd);
    mean_sd(v, pt.v_mean, pt.v_sd);
    out.push_back(pt);
  }
  return out;
}

#define SF_RF(T)                                                                                                  \
  template Mat<T> rf_directions<T>(const Mat<double>&);                                                           \
  template Mat<T> rf_phi<T>(const Mat<T>&, const Mat<T>&);                                                        \
  template Row<T> rf_key_weights<T>(const Mat<T>&, const std::vector<char>&);                                     \
  template Mat<T> rf_attention_qkv<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mask&, const Mat<double>&, \
                                      RfaStats<T>*, Tracer*);                                                     \
  template Mat<T> rf_implied_weights<T>(const Mat<T>&, const Mat<T>&, const Mask&, const Mat<double>&);           \
  template RfaError rf_error<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mask&, const Mat<double>&);     \
  template std::vector<RfaErrorPoint> rf_error_curve<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mask&,  \
                                                        const std::vector<int>&, int, std::uint64_t, int, bool);
SF_RF(float)
SF_RF(double)
#undef SF_RF

}  // namespace sf
