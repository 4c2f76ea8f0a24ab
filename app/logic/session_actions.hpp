// The --actions verbs that act on the Session alone: stepping, the prompt and the context z, [MASK],
// translation, generation and the sampling settings, a vision transformer's image (vision-digit,
// vision-pixel, vision-clear). App::apply_action (app/app.cpp) tries these first and then shows
// what they changed; fuzz/fuzz_actions.cpp applies the same to a headless Session.
#pragma once
#include <string>
#include <vector>

#include "app/feature.hpp"  // ActionResult

namespace sf {

class Session;

// The argument split at ':' into whole numbers ("1:2:3" → {1, 2, 3}); false if one is not.
bool action_ints(const std::string& arg, std::vector<int>& out);

// VERB:ARG on the session: Done, Failed (with the message in `error`) or NotMine (not a Session verb).
ActionResult apply_session_action(Session& s, const std::string& verb, const std::string& arg, std::string& error);

}  // namespace sf
