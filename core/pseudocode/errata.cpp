// The seeds' errata (see errata.hpp). The quotes are the seeds' own text: the paper's lines as
// reference/algorithms.md transcribes them, Carpenter's listings (seed 002) and the formulas of
// Dinan–Yaida–Zhang (seed 001) verbatim but for the LaTeX, written here in Unicode.
#include "core/pseudocode/errata.hpp"

namespace sf {

namespace {

constexpr Seed kPaper = Seed::Paper;
constexpr Seed kCarpenter = Seed::Carpenter;
constexpr Seed kDyz = Seed::DinanYaidaZhang;

// Line 2 of each forward algorithm (e_t ← W_e[:, x[t]] + W_p[:, t]): where embeddings and positions show.
const std::vector<ErratumTarget> kEmbeddingLines{{10, 2}, {9, 2}, {8, 2}};
// The last line of each forward algorithm (P = softmax(W_u X)): the unembedding.
const std::vector<ErratumTarget> kUnembeddingLines{{10, 11}, {9, 12}, {8, 21}};

}  // namespace

const char* to_string(ErratumKind k) { return k == ErratumKind::Slip ? "slip" : "departure"; }

const char* to_string(Seed s) {
  switch (s) {
    case Seed::Paper: return "Phuong & Hutter 2022 (seed 000)";
    case Seed::Carpenter: return "Carpenter 2023 (seed 002)";
    case Seed::DinanYaidaZhang: return "Dinan–Yaida–Zhang (seed 001)";
    case Seed::Article: return "the encyclopedia article (seed 004)";
  }
  return "";
}

const std::vector<Erratum>& errata() {
  static const std::vector<Erratum> table{
      // ---- the paper ----
      {"paper-layer-norm-eps", kPaper, ErratumKind::Slip, "Algorithm 6 (layer_norm), line 3",
       "return ê = (e − m)/√v ⊙ γ + β",
       "No ε under the root: a constant e (v = 0) divides by zero.",
       "Computes (e − m)/√(v + ε) with ε = 1e-5 (the configuration's eps), shown in the LayerNorm tab and the "
       "status bar, as the index tutorial (seed 001) does.",
       {{6, 3}}},
      {"paper-alg8-loop-index", kPaper, ErratumKind::Slip, "Algorithm 8 (EDTransformer), line 13",
       "for i = 1, 2, …, L_dec do   (the body uses W^{dec}_l, γ³_l, W^l_mlp3 …)",
       "The decoder loop counts i but its body indexes the layer by l.",
       "Counts the decoder layers with l, as the body reads; the call stack shows l.", {{8, 13}}},
      {"paper-alg9-wu-shape", kPaper, ErratumKind::Slip, "Algorithm 9 (ETransformer), Parameters and line 12",
       "W_u ∈ ℝ^{N_V×d_e} … 12 return P = softmax(W_u X)",
       "After line 10 X ∈ ℝ^{d_f×ℓ}, so W_u X needs W_u ∈ ℝ^{N_V×d_f}; the printed shape works only when "
       "d_f = d_e.",
       "W_u ∈ ℝ^{N_V×d_f} (the checkpoint's W_u has shape [N_V, d_f]).", {{9, 12}}},
      {"paper-alg15-unbounded", kPaper, ErratumKind::Slip, "Algorithm 15 (EDInference), line 3",
       "while y ≠ eos_token do",
       "Nothing bounds the loop: a model that never samples eos_token never stops, and x̂ outgrows ℓ_max.",
       "Stops at eos_token or when x̂ reaches ℓ_max tokens, and the Translation tab says which.", {{15, 3}}},
      {"paper-tau-zero", kPaper, ErratumKind::Slip, "Algorithm 14 line 5 (and Algorithm 15 line 6)",
       "sample a token y from q ∝ p^{1/τ}   with τ ∈ (0, ∞); §7: τ = 0 gives the most likely continuation",
       "p^{1/τ} is undefined at τ = 0, which the text nevertheless offers.",
       "Takes τ = 0 as the limit τ → 0: y is the argmax of p (ties to the lowest id).", {{14, 5}, {15, 6}}},
      {"paper-sinusoid-base", kPaper, ErratumKind::Departure, "§5 (positional embedding), Algorithm 2",
       "W_p[2i−1, t] = sin(t / ℓ_max^{2i/d_e}),  W_p[2i, t] = cos(t / ℓ_max^{2i/d_e})",
       "Vaswani et al. divide by 10000^{2i/d_e}, not ℓ_max^{2i/d_e}: the same model gets other frequencies.",
       "position: \"sinusoidal\" (File › New model…) uses ℓ_max by default and position_base = 10000 on request; "
       "the paper's models learn W_p.",
       kEmbeddingLines},
      // ---- Carpenter ----
      {"carpenter-history-names", kCarpenter, ErratumKind::Slip, "LOG_DENSITY",
       "history = []  …  history_toks = []  …  next_tok = toks[i, j]  …  DECODE(history_toks, …)",
       "`history` is set but never used; `history_toks` is reset to [] for every j (so DECODE always sees an "
       "empty history), and `toks` is not the argument's name (`tok`).",
       "Algorithm 13 line 5 sums −log P(θ)[x_n[t+1], t] over t with one forward pass of the whole x_n: "
       "position t sees x_n[1:t].",
       {{13, 5}, {13, 4}}},
      {"carpenter-pop-reversed", kCarpenter, ErratumKind::Slip, "LOG_DENSITY",
       "if (history_toks.size() < MAX_HISTORY): history_toks.pop_first()",
       "The condition is reversed: it drops the oldest token while the history is still short, and lets it grow "
       "past MAX_HISTORY. It should pop when size() ≥ MAX_HISTORY.",
       "Algorithm 14 with \"trim the context to ℓ_max\" (labelled as not the paper's) keeps the last ℓ_max tokens "
       "before each DTransformer call.",
       {{14, 3}}},
      {"carpenter-decode-tok", kCarpenter, ErratumKind::Slip, "COMPLETE_TEXT",
       "while (toks.size() > N) toks.pop_first() … prob = DECODE(tok, …decoder params…)",
       "DECODE is given `tok`, but the trimmed, growing sequence is `toks`.",
       "Algorithm 14 line 3 runs DTransformer on the current x (the prompt and what was generated so far).",
       {{14, 3}}},
      {"carpenter-z-for-w", kCarpenter, ErratumKind::Slip, "MULTI_HEAD_ATTEND",
       "w[1:N, 1:V] = tau * z + rho * [1 ... 1]   …   y[n, 1:V] = STANDARDIZE(x[n, 1:V] + z[1:V])",
       "The affine output w is computed and never used: the residual adds z (the concatenated heads, "
       "without the row index n) instead of w[n, 1:V].",
       "Algorithm 5 line 4 returns W_o Y + b_o 1ᵀ, and that is what the residual adds (Algorithm 10 line 6).",
       {{5, 4}, {10, 6}}},
      {"carpenter-no-self-attention", kCarpenter, ErratumKind::Slip, "ATTEND and MULTI_HEAD_ATTEND",
       "lp[1:n-1] = [q[n] * k[1]', ..., q[n] * k[n-1]'] / sqrt(V)   lp[n:N] = -inf",
       "Token n cannot attend to itself, and token 1 has every score −∞: its softmax is 0/0.",
       "The paper's causal mask, Mask[t_z, t_x] = [[t_z ≤ t_x]], keeps the diagonal: every token sees itself.",
       {{4, 5}}},
      {"carpenter-scale-sqrt-v", kCarpenter, ErratumKind::Departure, "ATTEND and MULTI_HEAD_ATTEND",
       "/ sqrt(V)   // scaled by sqrt value size",
       "Scores are divided by the square root of the value size V, not of the query/key size K as in Vaswani et "
       "al. and the paper.",
       "Algorithm 4 line 6 divides S by √d_attn (the query/key size).", {{4, 6}}},
      {"carpenter-pos-formula", kCarpenter, ErratumKind::Departure, "POS",
       "r = n / N * (2 * i / V)      // exponent ranges from 2/V to 1\nu[2 * i - 1] = sin(r);  u[2 * i] = cos(r)",
       "Not the sinusoid of Vaswani et al. or the paper (t / base^{2i/d_e}): the angle is a product, linear in i, "
       "and N is the history length, so a token's position vector changes with the length of the input.",
       "position: \"sinusoidal\" computes sin(t / base^{2i/d_e}) with a fixed base (ℓ_max or position_base).",
       kEmbeddingLines},
      // ---- Dinan–Yaida–Zhang ----
      {"dyz-vocab-index-base", kDyz, ErratumKind::Slip, "§0 and §1 (vocabulary, word embedding)",
       "0  1  …  n_vocab − 1   (the vocabulary)   …   z̃_{α;t;i} = Σ_{j=1}^{n_vocab} W^{WE}_{ij} x_{α;t;j}",
       "The vocabulary is numbered from 0 but the embedding sums j from 1 to n_vocab.",
       "Token ids are 1-based throughout (1 … N_V), as the paper's V ≅ [N_V].", kEmbeddingLines},
      {"dyz-unembedding-sum", kDyz, ErratumKind::Slip, "§5 (head, untied)",
       "z^{(L)}_{α;t;i} = W^{WU}_{ij} s^{(L−1)}_{α;t;j}",
       "The sum over j is not written, where every other formula of the tutorial writes its sums out.",
       "Algorithm 10 line 11 (9 line 12, 8 line 21) computes the product W_u X in full.", kUnembeddingLines},
      {"dyz-variance-formula", kDyz, ErratumKind::Departure, "§2 (layer normalization)",
       "√( (1/n) Σ_j (z_{α;t;j})² − ((1/n) Σ_j z_{α;t;j})² + ε )",
       "The variance as E[z²] − E[z]² cancels catastrophically in floating point when the mean is large; it can "
       "even come out negative.",
       "Algorithm 6 line 2 computes v = Σ (e[i] − m)² / d_e, after the mean.", {{6, 2}}},
      {"dyz-tied-rescale", kDyz, ErratumKind::Departure, "§5 (head, tied)",
       "z^{(L)}_{α;t;i} = N_rescale Σ_{j=1}^{n} W^{WE}_{ji} s^{(L−1)}_{α;t;j}",
       "The tied head multiplies by N_rescale, which the tutorial does not define.",
       "tied_unembedding: true (a variant) uses W_u = W_eᵀ with no rescale factor.", kUnembeddingLines},
      // ---- the encyclopedia article (seed 004) ----
      // Issue 25 said its speculative-decoding paragraph "stops mid-sentence (…until all)"; in seed 004
      // it ends "…until all tokens are generated." What is loose is the stochastic case, below.
      {"article-speculative-acceptance-rule", Seed::Article, ErratumKind::Slip, "Speculative decoding",
       "For non-greedy decoding, similar ideas apply, except the speculative tokens are accepted or rejected "
       "stochastically, in a way that guarantees the final output distribution is the same as if speculative decoding "
       "was not used.",
       "The guarantee holds only for one rule, which the article does not give: accept x̃ with probability "
       "min(1, p(x̃)/q(x̃)) and, on rejection, draw the replacement from norm(max(0, p − q)), not from p (drawing from "
       "p would over-weight the tokens the draft already proposes too often). Its greedy example also leaves out that "
       "when every proposal is accepted the same target run gives one more token.",
       "Algorithm 14-S writes the rule out (lines 10–16: r, u, the residual p′, and the extra token from the pass's last "
       "column); a "
       "chi-square test over 20,000 seeded runs checks that the first token has the target's distribution.",
       {{105, 13}, {105, 11}, {105, 16}}},
      // ---- the encyclopedia article (seed 004): the algorithms issue 25 adds, not in the paper ----
      {"article-rfa-sigma", Seed::Article, ErratumKind::Slip, "Random Feature Attention",
       "where w_1, …, w_D are independent samples from the normal distribution N(0, σ²I). This choice of "
       "parameters satisfy E[⟨φ(x), φ(y)⟩] = e^{−‖x−y‖²/2σ²} … where σ = d_K^{1/4}.",
       "Three things are loose. (1) With w_i ~ N(0, σ²I), E[cos⟨w, x−y⟩] = e^{−σ²‖x−y‖²/2}, not e^{−‖x−y‖²/2σ²}: "
       "the stated kernel needs w_i ~ N(0, σ⁻²I) (the two agree only at σ = 1). (2) The expectation is over the "
       "random w_1 … w_D, which the article does not say; for one draw of the w_i the \"≈\" is a Monte-Carlo "
       "estimate with error ~1/√D, not an identity. (3) σ is used throughout and only fixed at the end "
       "(σ = d_K^{1/4}), which is what makes e^{⟨x,y⟩/σ²} the softmax's e^{qᵀk/√d_K}. The article does keep the "
       "key factor e^{‖k_i‖²/2σ²} in its approximation; issue 25's summary of it drops that factor, without which "
       "the estimate is of a Gaussian-kernel attention, not of softmax(qᵀk/√d_K).",
       "Algorithm 4-R draws ω_i ~ N(0, I) from rf_seed and uses w_i = ω_i/σ ~ N(0, σ⁻²I) with σ = d_attn^{1/4} "
       "(line 4), keeps the key weights κ = e^{‖k‖²/2σ²} (line 7), and labels max |Ṽ_rfa − Ṽ| as an estimate's "
       "error; tests check the kernel estimate's mean over 20,000 seeds and that N(0, σ²I) would fail it.",
       {{106, 4}, {106, 7}}},
      // ---- the encyclopedia article (seed 004): ALiBi's bias (issue 25, item 6) ----
      {"article-alibi-causal-b", Seed::Article, ErratumKind::Slip, "ALiBi (Attention with Linear Biases)",
       "Attention(Q, K, V) = softmax(QKᵀ/√d_k + sB) V … B = [0 1 2 3 ⋯; −1 0 1 2 ⋯; −2 −1 0 1 ⋯; −3 −2 −1 0 ⋯; ⋮], "
       "in other words, B_{i,j} = j − i.",
       "Rows i of QKᵀ are queries, columns j keys. ALiBi (Press et al.) is a causal model's bias: query i adds "
       "m·(j − i) for its keys j ≤ i only, a penalty that grows with the distance. The printed B also fills the "
       "cells above the diagonal with j − i > 0; the causal mask removes them (−∞ + sB stays −∞), but without it "
       "those entries would reward keys the further they lie ahead, so the formula as printed holds only for "
       "j ≤ i. And it has one scalar s, where ALiBi gives head h of H its own slope 2^{−8h/H}.",
       "position \"alibi\" adds m_h·B with B[t_z, t_x] = −|t_z − t_x| (rows keys t_z, columns queries t_x, as "
       "the paper's S) and m_h = 2^{−8h/H}: under the causal mask that is the article's j − i for j ≤ i, and the "
       "cells above the diagonal stay −∞; under BERT's bidirectional mask it is the symmetric penalty, never a "
       "reward.",
       {{4, 6}}},
  };
  return table;
}

const Erratum* find_erratum(const std::string& id) {
  for (const Erratum& e : errata())
    if (e.id == id) return &e;
  return nullptr;
}

}  // namespace sf
