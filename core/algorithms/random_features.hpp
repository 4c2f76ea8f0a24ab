// Random-feature attention (Algorithm 4-R; NOT IN THE PAPER: Peng et al. 2021 "Random Feature
// Attention", Choromanski et al. "Performer", as the encyclopedia article, seed 004, describes them).
// The pieces that the traced algorithm (alg04r_random_feature_attention.cpp), the training path
// (core/gradients/grad_random_features.cpp), the comparison view and the benchmark share.
//
// The estimate. With σ = d_attn^{1/4}, qᵀk/√d_attn = ⟨q, k⟩/σ², and
//   exp(⟨q, k⟩/σ²) = e^{‖q‖²/2σ²} e^{‖k‖²/2σ²} e^{−‖q − k‖²/2σ²},
// the last factor a Gaussian kernel that random Fourier features estimate without bias:
//   E_w[⟨φ(q), φ(k)⟩] = e^{−‖q − k‖²/2σ²},  φ(x) = D^{−1/2}[cos⟨w_1, x⟩, sin⟨w_1, x⟩, …, cos⟨w_D, x⟩, sin⟨w_D, x⟩]ᵀ,
// the expectation over w_1 … w_D drawn independently from N(0, σ⁻² I) (the article writes N(0, σ² I):
// see the errata). The factor e^{‖q‖²/2σ²} is common to a query's numerator and denominator and
// cancels; e^{‖k‖²/2σ²} does not, so every key is weighted by κ = e^{‖k‖²/2σ²}:
//   Ṽ[:, t] = Σ_i κ_i φ(k_i)ᵀφ(q_t) v_i / Σ_i κ_i φ(k_i)ᵀφ(q_t)   (the sums over the keys Mask allows t).
// Stepformer draws ω_i ~ N(0, I) (seeded) and uses w_i = ω_i/σ.
#pragma once
#include <cstdint>
#include <vector>

#include "core/model/types.hpp"
#include "core/trace/trace.hpp"

namespace sf {

// The denominator guard. With sin/cos features (not positive ones) the estimated denominator
// b = Σ_i κ_i φ(k_i)ᵀφ(q) can be near zero or negative, though the exact one is positive. Since
// ‖φ(x)‖ = 1, |b| ≤ g = Σ_i κ_i; Algorithm 4-R divides by max(b, ε·g). ε = 10⁻³: a b below it is
// within float's rounding of a sum of up to 4096 terms (4096·2⁻²⁴ ≈ 2.4·10⁻⁴ of g) and far inside
// the Monte-Carlo noise of the estimate (its spread is ~1/√(2D) of g, 0.09 at D = 64), so its sign
// and size mean nothing; the guarded column is reported (trace note, --dump-state), never hidden.
inline constexpr double kRfGuard = 1e-3;

// ω (D, d_attn): the random directions of head `head` (1-based), drawn from `seed` with a
// portable generator (splitmix64 and Box–Muller, the same numbers on every platform and in
// tests/reference/gen_random_features_reference.py), rows ω_i ~ N(0, I). orthogonal (Performer's
// option): each block of d_attn consecutive rows is Gram–Schmidt-orthogonalised, then each row is
// rescaled to the norm of a fresh N(0, I) vector (chi-distributed with d_attn degrees of freedom, as
// Performer does), so that every row keeps N(0, I)'s norm distribution and the estimate stays
// unbiased. Throws sf::Error for D < 1 or d_attn < 1.
Mat<double> rf_omega(int D, int d_attn, std::uint64_t seed, int head, bool orthogonal);

// The scaled directions w_i = ω_i/σ, σ = d_attn^{1/4}, as T (D, d_attn).
template <class T> Mat<T> rf_directions(const Mat<double>& omega);

// φ(X) (2D, ℓ): rows 2i−1 and 2i (1-based) of column t are D^{−1/2} cos⟨w_i, x_t⟩ and D^{−1/2} sin⟨w_i, x_t⟩.
template <class T> Mat<T> rf_phi(const Mat<T>& X, const Mat<T>& W);

// κ (1, ℓ_z): κ[t_z] = exp(‖k_{t_z}‖²/2σ² − c), c = the largest ‖k‖²/2σ² over the keys some query may
// see (keep). The common factor e^{−c} cancels between numerator and denominator (and in the guard,
// which scales with g); without it float overflows once ‖k‖²/2σ² > 88.
template <class T>
Eigen::Matrix<T, 1, Eigen::Dynamic> rf_key_weights(const Mat<T>& K, const std::vector<char>& keep);

// The masks random-feature attention computes in linear time: each query t_x sees the keys
// t_z ≤ n(t_x) that are not padding (keep[t_z]): Mask[t_z, t_x] = keep[t_z]·[[t_z ≤ n(t_x)]]. Causal
// (n = t_x), bidirectional and cross (n = ℓ_z), prefix-LM (n = max(t_x, p)) and key padding all are.
// Queries are visited in `order` (increasing n), so the running sums only ever grow.
struct KeyPrefixes {
  std::vector<int> n;      // (ℓ_x) the last key t_x may see (1-based; 0: none)
  std::vector<char> keep;  // (ℓ_z) 1 unless the key is masked for every query
  std::vector<int> order;  // (ℓ_x) 0-based query columns by increasing n (stable)
};
// Throws sf::Error naming the first column that is not of that form.
KeyPrefixes key_prefixes(const Mask& mask);

// What Algorithm 4-R's lines 4–13 compute besides Ṽ, per query column.
template <class T>
struct RfaStats {
  Eigen::Matrix<T, 1, Eigen::Dynamic> b;  // (1, ℓ_x) the denominators b = s_φᵀφ(q)
  Eigen::Matrix<T, 1, Eigen::Dynamic> g;  // (1, ℓ_x) g = Σ κ over the keys the query sees
  int guarded = 0;                        // columns with b < ε·g (divided by ε·g instead)
};

// Algorithm 4-R's lines 4–13 (traced when tr is given: lines::random_feature_attention), from Q (d_attn, ℓ_x), K (d_attn, ℓ_z), V (d_out, ℓ_z): Ṽ (d_out,
// ℓ_x) in O((ℓ_x + ℓ_z)·D·(d_attn + d_out)) time and O(D·d_out) extra memory. A query with no allowed
// key gets a 0 column (as Algorithm 4).
template <class T>
Mat<T> rf_attention_qkv(const Mat<T>& Q, const Mat<T>& K, const Mat<T>& V, const Mask& mask, const Mat<double>& omega,
                        RfaStats<T>* stats = nullptr, Tracer* tr = nullptr);

// FOR THE VIEW ONLY, not part of the algorithm (it is the ℓ_z×ℓ_x matrix 4-R never builds): the
// implied weights Â[t_z, t_x] = Mask·κ_{t_z} φ(k_{t_z})ᵀφ(q_{t_x}) / max(b_{t_x}, ε·g_{t_x}), for which
// Ṽ = V·Â exactly. Columns of Â sum to 1 unless guarded.
template <class T>
Mat<T> rf_implied_weights(const Mat<T>& Q, const Mat<T>& K, const Mask& mask, const Mat<double>& omega);

// The error of the estimate against Algorithm 4 on one head's Q, K, V, for the view and the
// benchmark: max and mean |Ṽ_rfa − Ṽ| and max |Â − softmax(S/√d_attn)|.
struct RfaError {
  double max_v = 0, mean_v = 0, max_weights = 0;
};
template <class T>
RfaError rf_error(const Mat<T>& Q, const Mat<T>& K, const Mat<T>& V, const Mask& mask, const Mat<double>& omega);

// The error against D (the comparison view's chart): for each D, `seeds` estimates drawn from
// seeds seed0 … seed0 + seeds − 1 (head `head`'s stream), the mean and the sample standard deviation
// of max |Â − softmax(S/√d_attn)| and of max |Ṽ_rfa − Ṽ|.
struct RfaErrorPoint {
  int D = 0;
  double weights_mean = 0, weights_sd = 0, v_mean = 0, v_sd = 0;
};
template <class T>
std::vector<RfaErrorPoint> rf_error_curve(const Mat<T>& Q, const Mat<T>& K, const Mat<T>& V, const Mask& mask,
                                          const std::vector<int>& Ds, int seeds, std::uint64_t seed0, int head,
                                          bool orthogonal);

}  // namespace sf
