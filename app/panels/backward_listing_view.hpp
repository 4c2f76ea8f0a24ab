// The pieces of the pseudocode panel that belong to Stepformer's backward listings (not in the
// paper; core/pseudocode/backward_listings.hpp): the label above a listing, a backward line's
// number in the gutter (n̄, "adjoint of line n"), its sub-steps under it with the current one
// highlighted, and the note under the listing.
#pragma once
#include <string>

#include "app/app.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace sf::backward_view {

// "not in the paper: Stepformer's backward listing", drawn as a banner with its tooltip.
void draw_label(const App& app);
// A backward line's number with a bar over it, n̄ ("adjoint of line n"), at `at` in the gutter.
void draw_gutter_number(const App& app, ImVec2 at, int line, ImU32 color);
// The 0-based sub-step of its line that SubStep event k is (count_substeps: how many of the same
// line ran before it); −1 for an event that is not a SubStep.
int substep_index(const Trace& t, size_t k);
// The sub-steps of `pl` under its line, from x (the line's text column), in order; `current` (0-based,
// −1 none) highlighted. `active`: the line ran or is current (full colour, else dimmed).
void draw_steps(const App& app, const PseudoLine& pl, float x, int current, bool active);
// What to read under a backward listing: how it relates to the paper.
const char* note();

}  // namespace sf::backward_view
