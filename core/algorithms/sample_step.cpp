#include "core/algorithms/sample_step.hpp"

#include <cstdio>
#include <string>

namespace sf {

namespace {

constexpr const char* kNotInPaper = " — not in the paper: top-k / top-p (encyclopedia article, seed 004)";

std::string cut_label(const TopKTopP& cut, const TokenCut& c) {
  std::string rule;
  if (cut.k > 0) rule = "top-k = " + std::to_string(cut.k);
  if (cut.p < 1.0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "top-p = %.3g", cut.p);
    rule += (rule.empty() ? "" : ", ") + std::string(buf);
  }
  char mass[64];
  std::snprintf(mass, sizeof mass, " keep n = %d tokens, mass Σ q = %.4f", c.kept, c.mass);
  return "the cut (" + rule + "):" + mass;
}

void trace_cut(Tracer& tr, LineRef line, const TopKTopP& cut, const TokenCut& c) {
  Tokens ids(c.order.begin(), c.order.end());
  for (int& v : ids) ++v;  // 1-based token ids, as the trace binds tokens
  tr.substep(line, std::string("sort by decreasing p") + kNotInPaper,
             {with_note(tv("p (sorted)", c.p_sorted, Axis::Feature), "Row r is the token of rank r by p (equal p: "
                                                                      "the smaller id first)."),
              tv("q (sorted)", c.q_sorted, Axis::Feature), ttokens("order", ids)});
  tr.substep(line, cut_label(cut, c) + kNotInPaper,
             {tscalar("k", cut.k), tscalar("p", cut.p), tscalar("n", c.kept), tscalar("Σ q kept", c.mass)});
  tr.substep(line, std::string("renormalise: q ← q / Σ q kept on the kept tokens, 0 on the cut ones") + kNotInPaper,
             {tv("q", c.q, Axis::Vocab)});
}

}  // namespace

void sample_token(InferenceStep& step, double tau, const TopKTopP& cut, Rng& rng, Tracer* tr, LineRef line) {
  step.q_tau = temperature(step.p, tau);  // (N_V)
  const TokenCut c = cut_top_k_top_p(step.p, step.q_tau, cut);
  step.q = c.q;
  step.kept = c.kept;
  step.kept_mass = c.mass;
  if (tr && cut.active()) trace_cut(*tr, line, cut, c);
  // The cut never removes the argmax, so τ = 0 draws it as without a cut.
  step.y = tau <= 0.0 ? sample_argmax(step.p) : sample_mult(step.q, rng.uniform());
  if (tr) tr->line(line, {tv("q", step.q, Axis::Vocab), tscalar("y", step.y)});
}

}  // namespace sf
