// Tracing a saved run again and finding a saved cursor in it: what opening a session and moving
// to a lesson stop share (core/io/session_file.hpp holds the saved form).
#pragma once
#include <string>

#include "app/session.hpp"
#include "core/io/session_file.hpp"

namespace sf {

// The run s shows now, in the saved form ("forward", "generate" with the tokens it generated,
// "translate" with the steps of x̂ shown, 0 when all are, or "training").
SessionRun current_run(const Session& s);

// Traces `run` on s's model, prompt and context with s's settings, and waits for the trace.
// "forward": the model's forward algorithm (10, 9 or 8); "generate": Algorithm 14 generating
// run.generate tokens (a fresh run, seeded by s.generation().settings.seed); "translate": Algorithm 15, its
// first run.translate steps shown (0: all); "fill": the forward pass with the cursor on its last
// line (what the fill reads). False with `error` (nothing traced) when the model has no such run
// (generate needs a model that continues text, fill one that fills in [MASK], translate an
// encoder-decoder) or for "training" (the app's Training tab traces it); false with the run's
// own error when it failed (s then shows the forward pass).
bool trace_run(Session& s, const SessionRun& run, std::string& error);

// Moves the cursor to the event `c` names in s's trace (resolve_cursor; ungated: no
// predict-then-reveal question holds it), after waiting for a running trace. c.alg == 0 (no
// cursor saved): the run's first line, true. False when the run has no such step: the cursor is
// then on the run's first line too.
bool place_cursor(Session& s, const CursorRef& c);

}  // namespace sf
