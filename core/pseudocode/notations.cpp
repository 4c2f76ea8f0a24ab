// The three notations' mapping (see core/pseudocode/notations.hpp). Carpenter's texts are his
// fifty-line listing's (seed 002), quoted with the function they are in; DYZ's equations are
// the tutorial's (seed 001), in the same sub/superscript notation the app draws.
#include "core/pseudocode/notations.hpp"

#include "core/pseudocode/backward_listings.hpp"
#include "core/pseudocode/flash_listing.hpp"
#include "core/pseudocode/speculative_listing.hpp"
#include "core/pseudocode/rfa_listing.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace sf {

namespace {

NotationText text(std::string s) { return {std::move(s), ""}; }
NotationText none(std::string why) { return {"", std::move(why)}; }

// ---- reasons, shared by many lines ----
const std::string kDecoderOnly =
    "Carpenter writes only a decoder-only (GPT-2) transformer, DECODE: no encoder, no bidirectional attention, no cross-attention";
const std::string kCarpenterNoLoop = "Carpenter's LOG_DENSITY is one pass over the data; the SGD loop around it is described in words";
const std::string kDyzNoTraining = "the tutorial stops at the model's head: no loss, no training or generation loop";
const std::string kEnd = "the end of a loop: nothing is computed";
const std::string kPostLn =
    "Carpenter standardizes after the residual sum (post-LN: y = STANDARDIZE(u + x) in ATTEND, STANDARDIZE(x + y) in FEED_FORWARD)";

// ---- DYZ equations used by several forward lines ----
const std::string kDyzEmbed = "z^{(1)}_{α;t;i} = b^{PE}_{t;i} + z̃_{α;t;i},   z̃_{α;t;i} = Σ_{j=1}^{n_vocab} W^{WE}_{ij} x_{α;t;j}";
const std::string kDyzTokens = "t = 1, …, T";
const std::string kDyzLayers = "z^{(ℓ+1)} from z^{(ℓ)}, ℓ = 1, …, L";
const std::string kDyzNorm =
    "s_{α;t;i} = γ_i [(z_{α;t;i} − (1/n) Σ_{j=1}^{n} z_{α;t;j}) / √((1/n) Σ_{j=1}^{n} (z_{α;t;j})² − ((1/n) Σ_{j=1}^{n} z_{α;t;j})² + ε)] + β_i";
const std::string kDyzAttention = "z^{(ℓ+1)}_{α;t;i} = R^{MHSA}_{t;i}(s^{(ℓ)}_α; θ^{(ℓ+1)}) + z^{(ℓ)}_{α;t;i}";
const std::string kDyzMlp =
    "z^{(ℓ+1)}_{α;t;i} = R^{MLP}_{t;i}(s^{(ℓ)}_α; θ^{(ℓ+1)}) + z^{(ℓ)}_{α;t;i},   r_{α;t;i} = Σ_{j=1}^{Mn} X_{ij} σ(w_{α;t;j}),   w_{α;t;j} = Σ_{i=1}^{n} W_{ji} s_{α;t;i}";
const std::string kDyzHead = "z^{(L)}_{α;t;i} = Σ_{j=1}^{n} W^{WU}_{ij} s^{(L−1)}_{α;t;j}   (logits; the tutorial writes no softmax)";

// The rows of the table for a forward algorithm's lines that only DYZ writes (8 and 9).
std::vector<NotationEntry> dyz_only(int alg, const std::vector<std::pair<int, NotationText>>& dyz) {
  std::vector<NotationEntry> out;
  for (const auto& [line, d] : dyz) out.push_back({alg, line, none(kDecoderOnly), d});
  return out;
}

std::vector<NotationEntry> build_table() {
  std::vector<NotationEntry> t{
      {1, 1, text("DECODE: alpha[tok[n], 1:V]   (row tok[n] of alpha, T × V: the paper's W_eᵀ)"),
       text("z̃_{α;t;i} = Σ_{j=1}^{n_vocab} W^{WE}_{ij} x_{α;t;j} = W^{WE}_{ij*(α;t)}")},
      {2, 1, text("POS(n): u[2 * i - 1] = sin(r), u[2 * i] = cos(r), r = n / N * (2 * i / V)   (fixed; the paper's W_p is learned)"),
       text("b^{PE}_{t;i}   (a learned bias per position t and feature i)")},
      // Algorithm 3: one query, as one iteration n of ATTEND's second loop.
      {3, 1, text("ATTEND: q[n, 1:K] = x[n, 1:V] * beta.query   // optionally add intercept"),
       text("q^h_{α;t;c} ≡ Σ_{i=1}^{n} Q^h_{ci} s_{α;t;i}")},
      {3, 2, text("ATTEND: k[n, 1:K] = x[n, 1:V] * beta.key"), text("k^h_{α;t′;c} ≡ Σ_{i=1}^{n} K^h_{ci} s_{α;t′;i}")},
      {3, 3, text("ATTEND: v[n, 1:V] = x[n, 1:V] * beta.value"), text("v^h_{α;t′;c} ≡ Σ_{i=1}^{n} V^h_{ci} s_{α;t′;i}")},
      {3, 4, text("ATTEND: p[1:N] = SOFTMAX(lp[1:N]),  lp[n′] = q[n] * k[n′]' / sqrt(V)"),
       text("Ω^h_{α;tt′} ≡ exp(Ω̃^h_{α;tt′}) / Σ_{t″=1}^{T} exp(Ω̃^h_{α;tt″}),   Ω̃^h_{α;tt′} ≡ (1/√C) Σ_{c=1}^{C} q^h_{α;t;c} k^h_{α;t′;c}")},
      {3, 5, text("ATTEND: u[n, 1:V] = SUM(n' in 1:N) p[n'] * v[n', 1:V]"), text("Σ_{t′=1}^{T} Ω^h_{α;tt′} v^h_{α;t′;c}")},
      // Algorithm 4: ATTEND, one head; DYZ's head h.
      {4, 1, text("ATTEND: q[n, 1:K] = x[n, 1:V] * beta.query   // optionally add intercept"),
       text("q^h_{α;t;c} ≡ Σ_{i=1}^{n} Q^h_{ci} s_{α;t;i},   c = 1, …, C where C = n/H")},
      {4, 2, text("ATTEND: k[n, 1:K] = x[n, 1:V] * beta.key"), text("k^h_{α;t;c} ≡ Σ_{i=1}^{n} K^h_{ci} s_{α;t;i}")},
      {4, 3, text("ATTEND: v[n, 1:V] = x[n, 1:V] * beta.value"), text("v^h_{α;t;c} ≡ Σ_{i=1}^{n} V^h_{ci} s_{α;t;i}")},
      {4, 4, text("ATTEND: lp[1:n-1] = [q[n] * k[1]', ..., q[n] * k[n-1]'] / sqrt(V)   // dot product log probs"),
       text("Ω̃^h_{α;tt′} ≡ (1/√C) Σ_{c=1}^{C} q^h_{α;t;c} k^h_{α;t′;c}   (scaled here; the paper scales at line 6)")},
      {4, 5, text("ATTEND: lp[n:N] = -inf"), text("Decoder: Ω^h_{α;tt′} ≡ 0 for t′ > t")},
      {4, 6, text("ATTEND: p[1:N] = SOFTMAX(lp[1:N]);  u[n, 1:V] = SUM(n' in 1:N) p[n'] * v[n', 1:V]"),
       text("Ω^h_{α;tt′} ≡ exp(Ω̃^h_{α;tt′}) / Σ_{t″=1}^{t} exp(Ω̃^h_{α;tt″}) for t′ ≤ t;   Σ_{t′=1}^{T} Ω^h_{α;tt′} v^h_{α;t′;c}")},
      // Algorithm 5: MULTI_HEAD_ATTEND.
      {5, 1, text("MULTI_HEAD_ATTEND: for h in 1:H:   // parallel heads"), text("h = 1, …, H")},
      {5, 2, text("MULTI_HEAD_ATTEND: u[h, n, 1:V/H] = SUM(n' in 1:N) p[n'] * v[n', 1:V/H]"),
       text("Σ_{t′=1}^{T} Ω^h_{α;tt′} v^h_{α;t′;c}")},
      {5, 3, text("MULTI_HEAD_ATTEND: z[n, 1:V] = concat(u[1, n, 1:V/H], ..., u[H, n, 1:V/H])"),
       none("the sum over h in r_{α;t;i} (line 4) concatenates and projects in one step")},
      {5, 4, text("MULTI_HEAD_ATTEND: w[1:N, 1:V] = tau * z + rho * [1 ... 1]   // affine transform"),
       text("r_{α;t;i} ≡ Σ_{h=1}^{H} Σ_{c=1}^{C} U^h_{ic} (Σ_{t′=1}^{T} Ω^h_{α;tt′} v^h_{α;t′;c})   (no bias b_o)")},
      // Algorithm 6: STANDARDIZE (no γ, β) and DYZ's LayerNorm with ε.
      {6, 1, text("STANDARDIZE: mean(u)"), text("(1/n) Σ_{j=1}^{n} z_{α;t;j}")},
      {6, 2, text("STANDARDIZE: standard_deviation(u)   (its square is v)"),
       text("(1/n) Σ_{j=1}^{n} (z_{α;t;j})² − ((1/n) Σ_{j=1}^{n} z_{α;t;j})²")},
      {6, 3, text("STANDARDIZE: return (u - mean(u)) / standard_deviation(u)   (no γ, β)"), text(kDyzNorm)},
      {7, 1, text("LOGISTIC_REGRESSION: log_probs[1:T] = delta * x;  return SOFTMAX(log_probs[1:T])"), text(kDyzHead)},
      // Algorithm 10: DECODE (Carpenter's layers are post-LN, the paper's GPT pre-LN).
      {10, 1, text("DECODE: tok: int<lower=1, upper=T>[N]   (N is the length)"), text(kDyzTokens)},
      {10, 2, text("DECODE: xs[n, 1:V] = alpha[tok[n], 1:V] + POS(n)   // embedding of token n"), text(kDyzEmbed)},
      {10, 3, text("DECODE: for n in 1:N:   (the rows xs[n, 1:V] of xs)"), text("z^{(1)}_{α;t;i}, t = 1, …, T")},
      {10, 4, text("DECODE: for a in 1:A:   // A attention layers"), text(kDyzLayers)},
      {10, 5, none(kPostLn), text(kDyzNorm)},
      {10, 6, text("DECODE: xs = ATTEND(xs, betas[a])   // update tokens jointly"), text(kDyzAttention)},
      {10, 7, none(kPostLn), text(kDyzNorm)},
      {10, 8, text("DECODE: xs[n, 1:V] = FEED_FORWARD(xs[n, 1:V], gammas[a]):  u = gamma.1 + gamma.2 * x, w = GELU(u), y = gamma.3 + gamma.4 * w"),
       text(kDyzMlp)},
      {10, 9, none(kEnd), none(kEnd)},
      {10, 10, none("no final norm: Carpenter's last STANDARDIZE is inside FEED_FORWARD"), text(kDyzNorm)},
      {10, 11, text("DECODE: return LOGISTIC_REGRESSION(xs[N, 1:V], delta)   (only the last row, n = N)"), text(kDyzHead)},
      // Algorithm 13: LOG_DENSITY (one pass; the paper's SGD step is in words only).
      {13, 1, none(kCarpenterNoLoop), none(kDyzNoTraining)},
      {13, 2, text("LOG_DENSITY: for i in 1:I:"), none(kDyzNoTraining)},
      {13, 3, text("LOG_DENSITY: for j in 1:J[i]:   (J[i] is the length)"), none(kDyzNoTraining)},
      {13, 4, text("LOG_DENSITY: probs = DECODE(history_toks, ...decoder params...)"), none(kDyzNoTraining)},
      {13, 5, text("LOG_DENSITY: log_density += log(probs[next_tok])   (the loss is −log_density)"), none(kDyzNoTraining)},
      {13, 6, none("\"SGD … using momentum as in the Adam optimizer\", in words; automatic differentiation gives the gradient"),
       none(kDyzNoTraining)},
      {13, 7, none(kEnd), none(kEnd)},
      {13, 8, none(kEnd), none(kEnd)},
      {13, 9, none("LOG_DENSITY returns log_density, not θ"), none(kDyzNoTraining)},
      // Algorithm 14: COMPLETE_TEXT.
      {14, 1, text("COMPLETE_TEXT: toks: int<low=1, up=T>[N']"), none(kDyzNoTraining)},
      {14, 2, text("COMPLETE_TEXT: while (True):   (until END_TOKEN or max_tokens)"), none(kDyzNoTraining)},
      {14, 3, text("COMPLETE_TEXT: prob = DECODE(tok, ...decoder params...)   // next token probs"), none(kDyzNoTraining)},
      {14, 4, none("DECODE already returns only the last row's probabilities"), none(kDyzNoTraining)},
      {14, 5, text("COMPLETE_TEXT: next_tok = categorical_rng(prob)   (τ = 1)"), none(kDyzNoTraining)},
      {14, 6, text("COMPLETE_TEXT: toks.push_last(next_tok)   // add next token to end"), none(kDyzNoTraining)},
      {14, 7, none(kEnd), none(kEnd)},
      {14, 8, text("COMPLETE_TEXT: return toks_out"), none(kDyzNoTraining)},
  };
  // Algorithm 9 (BERT) and 8 (encoder-decoder): the tutorial's encoder attention sums over
  // every t″; Carpenter has no counterpart for any line.
  const NotationText norm = text(kDyzNorm), mlp = text(kDyzMlp), attn = text(kDyzAttention);
  const NotationText encoder_attn = text(kDyzAttention + "   (Encoder: Ω^h_{α;tt′} normalised over every t″ = 1, …, T)");
  for (const NotationEntry& e :
       dyz_only(9, {{1, text(kDyzTokens)}, {2, text(kDyzEmbed)}, {3, text("z^{(1)}_{α;t;i}, t = 1, …, T")}, {4, text(kDyzLayers)},
                    {5, encoder_attn}, {6, norm}, {7, mlp}, {8, norm}, {9, none(kEnd)},
                    {10, none("the tutorial's head has no final projection W_f")}, {11, norm}, {12, text(kDyzHead)}}))
    t.push_back(e);
  for (const NotationEntry& e :
       dyz_only(8, {{1, text(kDyzTokens)}, {2, text(kDyzEmbed)}, {3, text("z^{(1)}_{α;t;i}, t = 1, …, T")}, {4, text(kDyzLayers)},
                    {5, encoder_attn}, {6, norm}, {7, text(kDyzMlp + "   (σ = ReLU)")}, {8, norm}, {9, none(kEnd)},
                    {10, text(kDyzTokens)}, {11, text(kDyzEmbed)}, {12, text("z^{(1)}_{α;t;i}, t = 1, …, T")}, {13, text(kDyzLayers)},
                    {14, attn}, {15, norm}, {16, none("the tutorial's attention is self-attention only: no cross-attention")}, {17, norm},
                    {18, text(kDyzMlp + "   (σ = ReLU)")}, {19, norm}, {20, none(kEnd)}, {21, text(kDyzHead)}}))
    t.push_back(e);
  // Training and inference of the other architectures: neither seed has them.
  const std::vector<std::pair<int, int>> others{{11, 9}, {12, 13}, {15, 9}};
  for (const auto& [alg, lines] : others)
    for (int l = 1; l <= lines; ++l) t.push_back({alg, l, none(kDecoderOnly), none(kDyzNoTraining)});
  return t;
}

struct Named {
  int alg;  // 0: any algorithm
  const char* paper;
  NotationName name;
};

const std::vector<Named>& names() {
  static const std::vector<Named> n{
      {0, "X", {"xs[n, 1:V]", "z", "t;i"}},
      {0, "X̃", {"", "s", "t;i"}},
      {0, "Z", {"", "z", "t;i"}},
      {1, "e", {"alpha[tok[n], 1:V]", "z̃", "t;i"}},
      {0, "e_t", {"xs[n, 1:V]", "z^{(1)}", "t;i"}},
      {2, "e_p", {"POS(n)", "b^{PE}", "t;i"}},
      {4, "Q", {"q[n, 1:K]", "q^h", "t;c"}},
      {4, "K", {"k[n, 1:K]", "k^h", "t;c"}},
      {4, "V", {"v[n, 1:V]", "v^h", "t;c"}},
      {4, "softmax(S/√d_attn)", {"p[n′] of query n", "Ω^h", "tt′"}},
      {4, "Ṽ", {"u[n, 1:V]", "", ""}},
      {5, "Y", {"z[n, 1:V]", "", ""}},
      {5, "Ṽ", {"w[n, 1:V]", "r", "t;i"}},
      {6, "m", {"mean(u)", "", ""}},
      {0, "P", {"SOFTMAX(log_probs)[n, 1:T]", "", ""}},
      {0, "W_u X", {"log_probs[n, 1:T]", "z^{(L)}", "t;i"}},
      {0, "W_mlp1 X̃ + b_mlp1 1ᵀ", {"u[1:L] of row n", "w", "t;j"}},
      {0, "W_mlp1 X + b_mlp1 1ᵀ", {"u[1:L] of row n", "w", "t;j"}},
  };
  return n;
}

}  // namespace

const char* to_string(Notation n) {
  switch (n) {
    case Notation::PhuongHutter: return "Phuong & Hutter";
    case Notation::Carpenter: return "Carpenter";
    case Notation::DinanYaidaZhang: return "Dinan–Yaida–Zhang";
  }
  return "";
}

const char* notation_key(Notation n) {
  switch (n) {
    case Notation::PhuongHutter: return "paper";
    case Notation::Carpenter: return "carpenter";
    case Notation::DinanYaidaZhang: return "dyz";
  }
  return "";
}

bool notation_from_key(const std::string& key, Notation& out) {
  for (Notation n : {Notation::PhuongHutter, Notation::Carpenter, Notation::DinanYaidaZhang})
    if (key == notation_key(n)) {
      out = n;
      return true;
    }
  return false;
}

const std::vector<NotationEntry>& notation_entries() {
  static const std::vector<NotationEntry> table = [] {
    std::vector<NotationEntry> t = build_table();
    const std::vector<NotationEntry> flash = flash_notation_entries();  // Algorithm 4-F, not in the paper
    t.insert(t.end(), flash.begin(), flash.end());
    const std::vector<NotationEntry> spec = speculative_notation_entries();  // Algorithm 14-S, not in the paper
    t.insert(t.end(), spec.begin(), spec.end());
    const std::vector<NotationEntry> rfa = rfa_notation_entries();  // Algorithm 4-R, not in the paper
    t.insert(t.end(), rfa.begin(), rfa.end());
    return t;
  }();
  return table;
}

const NotationEntry* notation_entry(int alg, int line) {
  for (const NotationEntry& e : notation_entries())
    if (e.alg == alg && e.line == line) return &e;
  return nullptr;
}

NotationText notation_text(Notation n, int alg, int line) {
  const PseudoLine* paper = pseudocode_line(alg, line);
  if (!paper) return none("Algorithm " + std::to_string(alg) + " has no line " + std::to_string(line));
  if (n == Notation::PhuongHutter) return text(paper->text);
  const NotationEntry* e = notation_entry(alg, line);
  if (!e) return none("no mapping is written for Algorithm " + std::to_string(alg) + " line " + std::to_string(line));
  return n == Notation::Carpenter ? e->carpenter : e->dyz;
}

const NotationEntry* notation_entry(LineRef r) {
  if (r.pass == Pass::Forward) return notation_entry(r.alg, r.line);
  for (const NotationEntry& e : backward_notation_entries())
    if (e.alg == r.alg && e.line == r.line) return &e;
  return nullptr;
}

NotationText notation_text(Notation n, LineRef r) {
  if (r.pass == Pass::Forward) return notation_text(n, r.alg, r.line);
  const PseudoLine* listing = backward_line(r.alg, r.line);
  if (!listing)
    return none("Algorithm " + std::to_string(r.alg) + "'s backward listing has no " + adjoint_name(r.line));
  if (n == Notation::PhuongHutter) {
    std::string t = listing->text;
    for (const std::string& step : listing->steps) t += "\n  " + step;
    return text(t);
  }
  const NotationEntry* e = notation_entry(r);
  if (!e) return none("no mapping is written for Algorithm " + std::to_string(r.alg) + "'s " + adjoint_name(r.line));
  return n == Notation::Carpenter ? e->carpenter : e->dyz;
}

NotationText notation_text(Notation n, LineRef r, const ModelConfig& c) {
  if (n == Notation::DinanYaidaZhang && r.pass == Pass::Backward)
    if (const std::optional<NotationText> t = norm_ordered_dyz(r.alg, r.line, backward_listing_pre_ln(r.alg, c))) return *t;
  return notation_text(n, r);
}

NotationName notation_name(int alg, const std::string& paper_name) {
  for (const Named& n : names())
    if ((n.alg == 0 || n.alg == alg) && paper_name == n.paper) return n.name;
  // Algorithm 5 binds each head's result as Y^1, Y^2, …: Carpenter's u[h, n, 1:V/H].
  if (alg == 5 && paper_name.rfind("Y^", 0) == 0) return {"u[h, n, 1:V/H]", "", ""};
  // A backward value ∇Q (Stepformer's backward listing): DYZ writes the derivative of the loss with
  // respect to its symbol, ∂ℒ/∂q^h, with the same indices; Carpenter writes no gradients.
  const std::string nabla = "∇";
  if (paper_name.rfind(nabla, 0) == 0) {
    const NotationName forward = notation_name(alg, paper_name.substr(nabla.size()));
    return {"", forward.dyz.empty() ? "" : "∂ℒ/∂" + forward.dyz, forward.dyz_indices};
  }
  return {};
}

std::string dyz_entry(const NotationName& n, int t, int k, int h) {
  std::string base = n.dyz;
  if (base.size() >= 2 && base.compare(base.size() - 2, 2, "^h") == 0) base.replace(base.size() - 1, 1, h > 0 ? std::to_string(h) : "h");
  const std::string sep = n.dyz_indices == "tt′" ? "," : ";";
  return base + "_{1;" + std::to_string(t) + sep + std::to_string(k) + "}";
}

}  // namespace sf
