// Algorithm 14-S's part of --dump-state: the draft, the settings and, when traced, every round.
#pragma once
#include <nlohmann/json.hpp>

namespace sf {

class Session;

// {"draft", "K", "tau", "l_gen", "seed", "error", "traced"} and, when the trace is Algorithm 14-S,
// "tokens" (labels), "target_passes", "plain_passes", "draft_passes", "proposed", "accepted",
// "stopped" and "rounds": per round K′, the proposals (labels), q_i(x̃_i), p_i(x̃_i), r, u, accepted,
// y (label) and the residual's nonzero entries as {token: p′}.
nlohmann::ordered_json speculative_state(const Session& s);

}  // namespace sf
