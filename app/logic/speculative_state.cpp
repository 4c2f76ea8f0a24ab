#include "app/logic/speculative_state.hpp"

#include "app/session.hpp"

namespace sf {

namespace {

nlohmann::ordered_json round_state(const Session& s, const SpeculativeRound& r) {
  const Tokenizer& tok = s.tokenizer();
  nlohmann::ordered_json j;
  j["K"] = r.K;
  j["fed"] = r.fed;
  nlohmann::ordered_json proposals = nlohmann::ordered_json::array(), q = proposals, p = proposals;
  for (int i = 0; i < r.K; ++i) {
    const int t = r.proposals[static_cast<size_t>(i)];
    proposals.push_back(tok.label(t));
    q.push_back(r.q[static_cast<size_t>(i)](t - 1));
    p.push_back(r.p[static_cast<size_t>(i)](t - 1));
  }
  j["proposals"] = proposals;
  j["q"] = q;
  j["p"] = p;
  j["r"] = r.ratio;
  j["u"] = r.u;
  j["accepted"] = r.accepted;
  j["y"] = tok.label(r.y);
  nlohmann::ordered_json residual = nlohmann::ordered_json::object();
  for (Eigen::Index v = 0; v < r.residual.size(); ++v)
    if (r.residual(v) > 0) residual[tok.label(static_cast<int>(v) + 1)] = r.residual(v);
  j["residual"] = residual;
  return j;
}

}  // namespace

nlohmann::ordered_json speculative_state(const Session& s) {
  const Speculation& sp = s.speculation();
  nlohmann::ordered_json j;
  j["draft"] = sp.draft_name();
  j["K"] = sp.settings.K;
  j["tau"] = sp.settings.tau;
  j["l_gen"] = sp.settings.l_gen;
  j["seed"] = sp.settings.seed;
  j["error"] = sp.error();
  j["traced"] = s.run_kind() == RunKind::Speculate;
  if (s.run_kind() != RunKind::Speculate) return j;
  const SpeculativeResult& r = sp.result();
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  for (int id : r.y) tokens.push_back(s.tokenizer().label(id));
  j["tokens"] = tokens;
  j["target_passes"] = r.target_passes;
  j["plain_passes"] = r.plain_passes();
  j["draft_passes"] = r.draft_passes;
  j["proposed"] = r.proposed();
  j["accepted"] = r.accepted();
  j["stopped"] = r.stopped;
  nlohmann::ordered_json rounds = nlohmann::ordered_json::array();
  for (const SpeculativeRound& round : r.rounds) rounds.push_back(round_state(s, round));
  j["rounds"] = rounds;
  return j;
}

}  // namespace sf
