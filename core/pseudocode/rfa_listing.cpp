// Algorithm 4-R, random-feature attention: NOT IN THE PAPER. Stepformer's listing, in the paper's
// style, of Peng et al. 2021 (RFA) and Choromanski et al. (Performer) as the encyclopedia article
// (seed 004) describes them; its lines are those of core/algorithms/alg04r_random_feature_attention.cpp
// and random_features.cpp (lines::random_feature_attention in vocabulary.hpp).
#include "core/pseudocode/rfa_listing.hpp"

#include "core/trace/vocabulary.hpp"

namespace sf {

PseudoAlgorithm rfa_pseudocode() {
  return {algs::random_feature_attention,
          "RFAttention",
          "Ṽ ← RFAttention(X, Z | W_qkv, Mask; D, ω)",
          {
              "/* Not in the paper: Peng et al. 2021 (Random Feature Attention) and Performer, from the encyclopedia "
              "article (seed 004). Estimates Algorithm 4's Ṽ with D random Fourier features in time linear in ℓ: the "
              "ℓ_z×ℓ_x score matrix is never built. */",
              "/* The estimate keeps the article's key factor e^{‖k‖²/2σ²} (κ, line 7): without it the sums estimate "
              "a Gaussian kernel, not softmax(qᵀk/√d_attn). The w_i are drawn from N(0, σ⁻² I), the variance that "
              "makes E_w[φ(x)ᵀφ(y)] = e^{−‖x−y‖²/2σ²} (the article writes σ² I). */",
              "Input: X ∈ ℝ^{d_x×ℓ_x}, Z ∈ ℝ^{d_z×ℓ_z}, vector representations of primary and context sequence.",
              "Output: Ṽ ∈ ℝ^{d_out×ℓ_x}, an estimate of Algorithm 4's Ṽ.",
              "Parameters: W_qkv as in Algorithm 4.",
              "Hyperparameters: Mask ∈ {0,1}^{ℓ_z×ℓ_x}, ↑(3), in which query t_x sees keys 1 … n(t_x) (less padding); "
              "D ∈ ℕ; ω ∈ ℝ^{D×d_attn}, ω_i ~ N(0, I) drawn from rf_seed, fixed (not learned).",
          },
          {
              {1, "Q ← W_q X + b_q 1ᵀ        [[Query ∈ ℝ^{d_attn×ℓ_x}]]", 0},
              {2, "K ← W_k Z + b_k 1ᵀ        [[Key ∈ ℝ^{d_attn×ℓ_z}]]", 0},
              {3, "V ← W_v Z + b_v 1ᵀ        [[Value ∈ ℝ^{d_out×ℓ_z}]]", 0},
              {4, "σ ← d_attn^{1/4};  w_i ← ω_i / σ for i ∈ [D]        [[w_i ~ N(0, σ⁻² I)]]", 0},
              {5, "Φ_Q ← φ(Q), φ(x) = D^{−1/2}[cos⟨w_1,x⟩, sin⟨w_1,x⟩, …, cos⟨w_D,x⟩, sin⟨w_D,x⟩]ᵀ        "
                  "[[Φ_Q ∈ ℝ^{2D×ℓ_x}]]", 0},
              {6, "Φ_K ← φ(K)        [[Φ_K ∈ ℝ^{2D×ℓ_z}]]", 0},
              {7, "κ[t_z] ← exp(‖K[:, t_z]‖²/2σ² − c), c = max_{t_z} ‖K[:, t_z]‖²/2σ²        [[κ ∈ ℝ^{1×ℓ_z}]]", 0},
              {8, "S_φ ← 0, s_φ ← 0, g ← 0, n ← 0        [[S_φ ∈ ℝ^{2D×d_out}, s_φ ∈ ℝ^{2D}]]", 0},
              {9, "for t_x ∈ [ℓ_x], by increasing n(t_x):", 0},
              {10, "while n < n(t_x): n ← n + 1; unless key n is padding: S_φ ← S_φ + κ[n] Φ_K[:, n] V[:, n]ᵀ, "
                   "s_φ ← s_φ + κ[n] Φ_K[:, n], g ← g + κ[n]", 1},
              {11, "a ← S_φᵀ Φ_Q[:, t_x];  b ← s_φᵀ Φ_Q[:, t_x]", 1},
              {12, "Ṽ[:, t_x] ← a / max(b, ε g)        [[ε = 10⁻³; g = 0 (no key): 0]]", 1},
              {13, "end", 0},
              {14, "return Ṽ", 0},
          }};
}

const char* explain_rfa_line(int line) {
  switch (line) {
    case 1: return "Compute a query for every token of X, as Algorithm 4's line 1 does.";
    case 2: return "Compute a key for every token of the context Z, as Algorithm 4's line 2 does.";
    case 3: return "Compute a value for every context token, as Algorithm 4's line 3 does.";
    case 4: return "Scale the fixed random directions ω_i by σ = d_attn^{1/4}, so that ⟨q, k⟩/σ² is Algorithm 4's "
                   "qᵀk/√d_attn and the features estimate the matching Gaussian kernel.";
    case 5: return "Map every query to 2D random Fourier features. On average over the random w_i, φ(x)ᵀφ(y) equals "
                   "exp(−‖x − y‖²/2σ²); with D features it is a Monte-Carlo estimate of that.";
    case 6: return "Map every key to the same features.";
    case 7: return "Weight each key by exp(‖k‖²/2σ²): exp(qᵀk/√d_attn) = e^{‖q‖²/2σ²}·e^{‖k‖²/2σ²}·e^{−‖q−k‖²/2σ²}, "
                   "and the query's factor cancels in the normalisation. The largest key's factor c is divided out "
                   "so that nothing overflows; it cancels too.";
    case 8: return "Start the running sums: S_φ collects κ φ(k) vᵀ, s_φ collects κ φ(k), g the weights κ themselves.";
    case 9: return "Visit the queries in the order of how many keys the mask lets them see (the causal mask: in order "
                   "of t_x), so that the sums only ever grow.";
    case 10: return "Add the keys this query may see and earlier ones did not. Under the causal mask that is one key "
                    "per query: a prefix sum. Bidirectionally the first query adds them all. Each key is added once: "
                    "linear time, and no ℓ_z×ℓ_x matrix.";
    case 11: return "The numerator a and the denominator b of the estimate, each one product with the query's features.";
    case 12: return "Divide. With sin/cos features b can come out near zero or negative although the exact softmax "
                    "denominator is positive; then Stepformer divides by ε·g instead and says so in the trace.";
    case 13: return "End of the queries.";
    case 14: return "Return Ṽ. The step also shows how far it is from Algorithm 4's Ṽ on the same inputs, and the "
                    "implied weights beside softmax's (computed for the view only).";
    default: return nullptr;
  }
}

std::vector<NotationEntry> rfa_notation_entries() {
  const auto text = [](std::string s) { return NotationText{std::move(s), ""}; };
  const auto none = [](std::string why) { return NotationText{"", std::move(why)}; };
  const std::string carpenter_none =
      "no counterpart: Carpenter's ATTEND computes the exact SOFTMAX of the scores lp[1:N]; it has no random "
      "features, kernel estimate or running sums";
  const std::string dyz_none =
      "no counterpart: the tutorial writes the exact attention weights Ω^h (a softmax over t′), never an estimate";
  const int a = algs::random_feature_attention;
  std::vector<NotationEntry> t{
      {a, 1, text("ATTEND: q[n, 1:K] = x[n, 1:V] * beta.query   // as Algorithm 4 line 1"),
       text("q^h_{α;t;c} ≡ Σ_{i=1}^{n} Q^h_{ci} s_{α;t;i}   (as Algorithm 4 line 1)")},
      {a, 2, text("ATTEND: k[n, 1:K] = x[n, 1:V] * beta.key"), text("k^h_{α;t;c} ≡ Σ_{i=1}^{n} K^h_{ci} s_{α;t;i}")},
      {a, 3, text("ATTEND: v[n, 1:V] = x[n, 1:V] * beta.value"), text("v^h_{α;t;c} ≡ Σ_{i=1}^{n} V^h_{ci} s_{α;t;i}")},
  };
  for (int line = 4; line <= 12; ++line) t.push_back({a, line, none(carpenter_none), none(dyz_none)});
  t.push_back({a, 13, none("the end of a loop: nothing is computed"), none("the end of a loop: nothing is computed")});
  t.push_back({a, 14, text("ATTEND: u[n, 1:V]   (returned for every row n; 4-R's are an estimate of it)"),
               text("Σ_{t′=1}^{T} Ω^h_{α;tt′} v^h_{α;t′;c}   (4-R's Ṽ estimates it)")});
  return t;
}

}  // namespace sf
