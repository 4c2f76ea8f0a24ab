// The --actions verbs of Algorithm 14-S (speculative decoding, not in the paper): draft:NAME,
// speculate:K, spec-tau:T, spec-seed:S, spec-gen:N (README.md lists them).
#pragma once
#include <string>

#include "app/feature.hpp"  // ActionResult

namespace sf {

class Session;

// VERB:ARG on the session's speculation(): Done, Failed (with `error`) or NotMine.
ActionResult apply_speculative_action(Session& s, const std::string& verb, const std::string& arg, std::string& error);

}  // namespace sf
