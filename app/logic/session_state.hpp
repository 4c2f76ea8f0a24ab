// A Session and its saved form (core/io/session_file.hpp): what File › Save session captures of
// the Session itself and what File › Open session puts back. The model (its path, checksum and
// the dialogs when it is missing or changed), the training settings and the view are the app's
// (app/classroom/session_feature.cpp).
#pragma once
#include <string>
#include <vector>

#include "app/session.hpp"
#include "core/io/session_file.hpp"

namespace sf {

// The Session part of a saved state: model.path (what was opened, "" when the model was made in
// the app), prompt, context, the run (session_run.hpp: current_run), the cursor (cursor_ref),
// the breakpoints and the sampling / fill / translation settings. The rest keeps its defaults.
SessionState capture_session(const Session& s);

// Puts `st` back into s, whose model the caller has already opened: the settings, the
// breakpoints, the context and prompt, then the run traced anew (trace_run; a "training" run is
// left to the app: the forward pass is traced) and the cursor (place_cursor). Returns what did
// not come back as saved, one sentence each (a prompt the model cannot encode, a run that failed,
// a step that is not in the run any more: the cursor is then on line 1); empty when all did.
std::vector<std::string> restore_session(Session& s, const SessionState& st);

// The image of a vit session (its pixels and, for a test digit, its 1-based index).
SessionImage capture_image(const Session& s);
// Shows a saved image: the test digit it names when that digit's pixels are the saved ones (the
// true class is then known), else the saved pixels as a drawn image. False with `error` when s's
// model reads no image or the pixels are not 64 intensities 0 … 16.
bool restore_image(Session& s, const SessionImage& im, std::string& error);

}  // namespace sf
