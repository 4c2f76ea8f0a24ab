// Algorithm 14-S: y ← SpeculativeDecoding(x, θ_target, θ_draft; K, τ, ℓ_gen). NOT IN THE PAPER
// (Leviathan et al. 2023, Chen et al. 2023; the encyclopedia article, seed 004). Listing:
// core/pseudocode/speculative_listing.cpp; line refs: lines::speculative_decoding (vocabulary.hpp).
//
// τ = 0 needs no rule of its own: p_i and q_i are then one-hots (temperature()), so r = p_i(x̃_i) is
// 1 when the target's argmax agrees and 0 otherwise, and the residual max(0, p_i − q_i) is the one-hot
// of the target's argmax. Accept-while-agreeing and replace-the-first-disagreement fall out of the
// stochastic rule; only the draws are skipped (u is not needed to compare with 0 or 1).
#include <algorithm>

#include "core/algorithms/sampling.hpp"
#include "core/algorithms/speculative.hpp"
#include "core/arch/architecture.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

namespace L = lines::speculative_decoding;

// "the draft's …" / "the target's …": the first difference between two vocabularies, or "".
std::string vocabulary_difference(const ModelConfig& t, const ModelConfig& d) {
  const auto differ = [](const std::string& what, const std::string& target, const std::string& draft) {
    return what + " differs: the target's is " + target + ", the draft's " + draft;
  };
  if (t.N_V() != d.N_V()) return differ("N_V", std::to_string(t.N_V()), std::to_string(d.N_V()));
  if (t.tokenizer != d.tokenizer) return "the tokenizer kind differs (char, word, BPE, GPT-2 or WordPiece)";
  if (t.vocab != d.vocab) {
    for (size_t k = 0; k < t.vocab.size(); ++k)
      if (t.vocab[k] != d.vocab[k])
        return differ("token " + std::to_string(k + 1), "\"" + t.vocab[k] + "\"", "\"" + d.vocab[k] + "\"");
  }
  if (t.merges != d.merges) return "the BPE merges differ";
  if (t.bos_token() != d.bos_token() || t.eos_token() != d.eos_token() || t.mask_token() != d.mask_token())
    return "the special tokens' ids differ (bos_token, eos_token or mask_token)";
  return "";
}

// The model's distribution after τ over the token after the last one of `x` (one untraced pass).
VecF next_distribution(const Tokens& x, const Model& m, double tau) {
  const MatF P = dtransformer<float>(x, m.config, m.weights());  // (N_V, length(x))
  return temperature(P.col(P.cols() - 1), tau);
}

// A token from the distribution d: its argmax at τ = 0 (d is then a one-hot), else a draw.
int draw(const VecF& d, double tau, Rng& rng) { return tau <= 0.0 ? sample_argmax(d) : sample_mult(d, rng.uniform()); }

void check_options(const Tokens& x, const ModelConfig& c, const SpeculativeOptions& opt) {
  if (x.empty()) throw Error("the prompt is empty: speculative decoding needs at least one token (e.g. bos_token)");
  if (opt.K < 1 || opt.K > 64) throw Error("K, the draft's proposals per round, must be between 1 and 64");
  if (!(opt.tau >= 0.0) || opt.tau > 1e6) throw Error("τ must be a number between 0 and 1e6");
  if (opt.l_gen < 0) throw Error("ℓ_gen must be ≥ 0");
  if (static_cast<int>(x.size()) > c.l_max)
    throw Error("the prompt has " + std::to_string(x.size()) + " tokens but the target's ℓ_max is " +
                std::to_string(c.l_max) + ": shorten it");
}

// Line 3: K′ = min(K, tokens still wanted − 1, room in the target's and the draft's context). The
// round adds at most K′ + 1 tokens; the target reads length(x) + K′ tokens and the draft, for its
// last proposal, length(x) + K′ − 1.
int proposals_this_round(int K, int wanted, int len, const ModelConfig& target, const ModelConfig& draft) {
  return std::max(0, std::min({K, wanted - 1, target.l_max - len, draft.l_max - len + 1}));
}

}  // namespace

int SpeculativeResult::proposed() const {
  int n = 0;
  for (const SpeculativeRound& r : rounds) n += r.K;
  return n;
}

int SpeculativeResult::accepted() const {
  int n = 0;
  for (const SpeculativeRound& r : rounds) n += r.accepted;
  return n;
}

void check_draft_model(const Model& target, const Model& draft) {
  for (const Model* m : {&target, &draft})
    if (architecture(m->config).output() != OutputKind::Continuation)
      throw Error(std::string("the ") + (m == &target ? "target" : "draft") +
                  " model is not decoder-only (Algorithm 10): speculative decoding continues a prompt with two GPT "
                  "models");
  const std::string diff = vocabulary_difference(target.config, draft.config);
  if (!diff.empty())
    throw Error("the draft model's vocabulary is not the target's (" + diff +
                "): pick a draft trained with the same vocabulary");
}

VecF residual_distribution(const VecF& p, const VecF& q) {
  const Eigen::ArrayXd d = (p.cast<double>() - q.cast<double>()).array().max(0.0);
  const double s = d.sum();
  return s > 0.0 ? VecF((d / s).cast<float>().matrix()) : p;
}

SpeculativeResult speculative_decoding(const Tokens& x_in, const Model& target, const Model& draft,
                                       const SpeculativeOptions& opt, Tracer* tr) {
  check_draft_model(target, draft);
  const ModelConfig& c = target.config;
  check_options(x_in, c, opt);
  Rng rng(opt.seed);
  Tokens x = x_in;
  SpeculativeResult out;
  TraceFrame frame(tr, algs::speculative_decoding,
                   tr ? std::vector<Value>{ttokens("x", x), tscalar("K", opt.K), tscalar("τ", opt.tau),
                                           tscalar("ℓ_gen", opt.l_gen)}
                      : std::vector<Value>{});
  // L1: ℓ ← length(x)
  const int l = static_cast<int>(x.size());
  if (tr) tr->line(L::l, {tscalar("ℓ", l)});
  // L2: while length(x) < ℓ + ℓ_gen do
  while (static_cast<int>(x.size()) < l + opt.l_gen) {
    const int len = static_cast<int>(x.size());
    if (len > c.l_max) {
      out.stopped = "stopped after " + std::to_string(len - l) + " tokens: x reached the target's ℓ_max = " +
                    std::to_string(c.l_max) + " (Algorithm 14 without context trimming stops there too)";
      break;
    }
    SpeculativeRound round;
    round.fed = len;
    TraceIndex ii(tr, &Indices::i, static_cast<int>(out.rounds.size()) + 1);
    if (tr)
      tr->line(L::round, {tscalar("round", static_cast<double>(out.rounds.size() + 1)),
                          tscalar("target passes", out.target_passes),
                          tscalar("Algorithm 14's passes", len - l)});
    // L3: K′ ← min(K, ℓ + ℓ_gen − length(x) − 1, ℓ_max − length(x))
    round.K = proposals_this_round(opt.K, l + opt.l_gen - len, len, c, draft.config);
    if (tr) tr->line(L::K_round, {tscalar("K′", round.K)});
    // L4–L7: the draft proposes x̃_1 … x̃_K′ autoregressively
    Tokens seq = x;
    for (int i = 1; i <= round.K; ++i) {
      // L5: q_i ∝ P_draft[:, last]^{1/τ}, P_draft ← DTransformer([x, x̃_1 … x̃_{i−1}] | θ_draft)
      round.q.push_back(next_distribution(seq, draft, opt.tau));
      ++out.draft_passes;
      if (tr) tr->line(L::draft, {tscalar("i", i), tv("q_i", round.q.back(), Axis::Vocab)});
      // L6: sample x̃_i from q_i
      const int proposal = draw(round.q.back(), opt.tau, rng);
      round.proposals.push_back(proposal);
      seq.push_back(proposal);
      if (tr) tr->line(L::propose, {tscalar("x̃_i", proposal), ttokens("x̃", round.proposals)});
    }
    // L8: P ← DTransformer([x, x̃_1 … x̃_K′] | θ_target); p_i ∝ P[:, length(x) + i − 1]^{1/τ}, i = 1 … K′+1
    const MatF P = dtransformer<float>(seq, c, target.weights());  // (N_V, len + K′)
    ++out.target_passes;
    MatF p_all(P.rows(), round.K + 1);
    for (int i = 1; i <= round.K + 1; ++i) {
      round.p.push_back(temperature(P.col(len + i - 2), opt.tau));
      p_all.col(i - 1) = round.p.back();
    }
    if (tr)
      tr->line(L::target, {with_note(tv("p", p_all, Axis::Vocab, Axis::TokenX),
                                     "column i is p_i, the target's distribution after τ for the token after x̃_{i−1} "
                                     "(the last column follows x̃_K′): one forward pass of " +
                                         std::to_string(seq.size()) + " tokens"),
                           tscalar("target passes", out.target_passes)});
    // L9–L15: accept while u_i < min(1, p_i(x̃_i)/q_i(x̃_i)); stop at the first rejection
    bool rejected = false;
    for (int i = 1; i <= round.K && !rejected; ++i) {
      const int t = round.proposals[i - 1] - 1;  // 0-based
      const VecF& p = round.p[i - 1];
      const VecF& q = round.q[i - 1];
      // L10: r ← p_i(x̃_i)/q_i(x̃_i); u ~ U[0, 1). q_i(x̃_i) > 0: x̃_i was drawn from q_i.
      const double r = static_cast<double>(p(t)) / static_cast<double>(q(t));
      round.ratio.push_back(r);
      const bool drawn = opt.tau > 0.0;
      if (drawn) round.u.push_back(rng.uniform());
      if (tr) {
        std::vector<Value> vals{tscalar("i", i), tscalar("p_i(x̃_i)", p(t)), tscalar("q_i(x̃_i)", q(t)), tscalar("r", r)};
        if (drawn) vals.push_back(tscalar("u", round.u.back()));
        tr->line(L::ratio, std::move(vals));
      }
      // L11: if u < min(1, r) then x ← [x, x̃_i]   (τ = 0: r is 0 or 1, accept iff r = 1)
      const bool accept = drawn ? round.u.back() < std::min(1.0, r) : r >= 1.0;
      if (accept) {
        x.push_back(round.proposals[i - 1]);
        ++round.accepted;
        if (tr) tr->line(L::accept, {tscalar("accepted", 1), ttokens("x", x)});
        continue;
      }
      if (tr) tr->line(L::accept, {tscalar("accepted", 0)});
      // L13: p′ ← norm(max(0, p_i − q_i))
      round.residual = residual_distribution(p, q);
      if (tr) tr->line(L::residual, {tv("p′", round.residual, Axis::Vocab), tv("p_i", p, Axis::Vocab), tv("q_i", q, Axis::Vocab)});
      // L14: sample y from p′; x ← [x, y]; end the round
      round.y = draw(round.residual, opt.tau, rng);
      x.push_back(round.y);
      if (tr) tr->line(L::replace, {tscalar("y", round.y), ttokens("x", x)});
      rejected = true;
    }
    if (!rejected) {
      // L16: all K′ accepted: sample y from p_{K′+1}; x ← [x, y]
      round.y = draw(round.p.back(), opt.tau, rng);
      x.push_back(round.y);
      if (tr) tr->line(L::bonus, {tv("p_{K′+1}", round.p.back(), Axis::Vocab), tscalar("y", round.y), ttokens("x", x)});
    }
    out.rounds.push_back(std::move(round));
  }
  // L18: return y = x[ℓ+1 : ℓ+ℓ_gen]
  out.y.assign(x.begin() + l, x.end());
  if (tr) {
    tr->trace().tokens_x = x;
    tr->line(L::result, {ttokens("y", out.y), tscalar("target passes", out.target_passes),
                         tscalar("Algorithm 14's passes", out.plain_passes()),
                         tscalar("draft passes", out.draft_passes)});
  }
  return out;
}

}  // namespace sf
