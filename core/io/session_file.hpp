// Sessions and lessons (*.stepformer, JSON; docs/sessions.md).
//
// A SESSION is what a learner or a teacher had on screen: the model (by path, with a checksum so
// that a changed file is noticed), the prompt and context, the traced run, the cursor, the
// breakpoints, the sampling / fill / translation / training settings, the open panels and the
// theme. A LESSON is a session plus an ordered list of stops: a cursor position, the panels to
// show and a short Markdown note. A stop may also change the setup first (another model, prompt,
// context or run), so that one lesson can visit a causal, a bidirectional and a cross mask.
//
// Everything here is plain data with a JSON form; the app turns it into a Session and back
// (app/classroom/). Reading never trusts the file: every field is type-checked and range-checked,
// and a malformed file is an sf::Error naming the field.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/trace/trace.hpp"

namespace sf {

// One step of a trace, saved so that it can be found again after the run is traced anew.
// A hand-written lesson may leave out event, depth, caller and label (JSON keys absent): they
// then match any value. "kind" absent means a Line event.
struct CursorRef {
  size_t event = SIZE_MAX;  // the event's index when saved, a hint (SIZE_MAX: none)
  int alg = 0;              // the paper's algorithm (1–15)
  int line = 0;             // its line (0: the algorithm's Enter event)
  Pass pass = Pass::Forward;  // the backward listing's "adjoint of line n"; in the file "pass": "backward", absent: forward
  EventKind kind = EventKind::Line;
  int depth = -1;               // −1: any
  Indices idx;                  // l, h, t, i, n in force (0: not in force; −1: any, a JSON key left out)
  // Trace::caller_ref: the calling line (none at top level); absent: any. In the file: its
  // session_code (alg*1000 + line, 0 at top level; core/trace/vocabulary.hpp), absent: any.
  std::optional<LineRef> caller;
  std::optional<std::string> label;  // a SubStep's label; absent: any
};
// The reference of event k of t.
CursorRef cursor_ref(const Trace& t, size_t k);
// The event of t that `c` names: the saved index when that event still has the same algorithm,
// line, kind, depth, indices, caller and label (those given); else the first event that has them
// all; else SIZE_MAX (the step does not exist in this run).
size_t resolve_cursor(const Trace& t, const CursorRef& c);

// The traced run, enough to trace it again.
struct SessionRun {
  std::string kind = "forward";  // forward | generate | translate | fill | training
  int generate = 0;              // generate: tokens the traced run of Algorithm 14 generates
  int translate = 0;             // translate: steps of x̂ shown (0: until eos_token)
  // τ for this run (generate, translate, fill), replacing the session's setting; absent: as it is.
  // A lesson's stops use it to show one prompt at two temperatures (JSON key "tau", ≥ 0).
  std::optional<double> tau;
};

struct SessionSampling {  // Algorithm 14 (the app's SamplingSettings)
  double tau = 0.8;
  int l_gen = 12;
  uint64_t seed = 1;
  bool trim_context = true;
  bool kv_cache = false;
  bool stop_at_eos = true;  // stop once eos_token is drawn (not in the paper's Algorithm 14)
  int top_k = 0;            // not in the paper: top-k after τ (0: off)
  double top_p = 1.0;       // not in the paper: top-p after τ (1: off)
  bool paged = false;       // not in the paper: the KV cache in blocks (PagedAttention)
  int kv_block = 4;         // its block size B
};
struct SessionFill {  // filling in [MASK] (FillSettings)
  double tau = 0.0;
  uint64_t seed = 1;
  int top_k = 5;
};
struct SessionTranslation {  // Algorithm 15 (TranslationSettings)
  double tau = 0.0;
  uint64_t seed = 1;
  bool reuse_encoding = false;
  bool kv_cache = false;
  int top_k = 0;       // not in the paper: top-k after τ (0: off)
  double top_p = 1.0;  // not in the paper: top-p after τ (1: off)
};
struct SessionTraining {  // the Training tab
  std::string task = "sort";       // a built-in task, or a text file's path
  std::string mode = "practical";  // practical | paper
  double eta = 3e-3;
  int batch = 16;
  uint64_t seed = 1;
};
struct SessionView {
  std::vector<std::string> panels;  // open panels and Inspector tabs, by name (PanelVisibility::names)
  std::string selected_value;       // the value in the Tensor view ("" : the line's first)
  std::string theme = "dark";       // dark | light | high-contrast
  bool colorblind = false;          // the colour-blind-safe palette on every heatmap
  float font_px = 17;
  std::string notation = "paper";   // paper | carpenter | dyz
};

// The model a session uses. `path` is absolute, relative to the session file's folder, or
// "@assets/NAME" (a model shipped in assets/, e.g. "@assets/default.safetensors").
// `checksum` is "fnv1a64:<16 hex digits>" of the checkpoint file (model_checksum); "" = unchecked.
struct SessionModel {
  std::string path;
  std::string checksum;
};

// The image x of a vision transformer (arch "vit", not in the paper). In the file
// "image": {"pixels": [64 integers 0–16, row by row], "test_digit": n}; test_digit 1–360 names the
// held-out test digit the pixels were (its true class is shown), 0 or absent: drawn by hand.
struct SessionImage {
  std::vector<int> pixels;
  int test_digit = 0;
};

struct SessionState {
  SessionModel model;
  std::string prompt;
  std::string context;  // architectures with a context z
  std::optional<SessionImage> image;  // a vit's input (absent: the model reads text)
  SessionRun run;
  CursorRef cursor;
  std::vector<LineRef> breakpoints;  // in the file: {"alg": …, "line": …} each
  SessionSampling sampling;
  SessionFill fill;
  SessionTranslation translation;
  SessionTraining training;
  SessionView view;
};

// A lesson stop. The optional fields change the setup before the cursor moves (absent: as it is).
struct LessonStop {
  std::string title;                  // shown in the stop list and the caption's heading
  CursorRef cursor;
  std::vector<std::string> panels;    // the panels shown at this stop (presentation mode shows only these)
  std::string note;                   // Markdown (**bold**, *italic*, `code`, "- " items); the paper's glyphs welcome
  std::string selected_value;         // the value in the Tensor view ("" keeps the line's first)
  // The focal value, the one the note talks about ("softmax(S/√d_attn)"): presentation mode lays
  // its view out large. "" : the value the stop's step bound.
  std::string focus;
  std::optional<SessionModel> model;  // another model
  std::optional<std::string> prompt, context;
  std::optional<SessionImage> image;  // another image (a vit)
  std::optional<SessionRun> run;
};

struct SessionFile {
  int version = 1;
  std::string title;        // lessons: the lesson's title
  std::string description;  // lessons: a sentence for the Lesson menu
  SessionState state;
  std::vector<LessonStop> stops;  // empty: a plain session
  bool is_lesson() const { return !stops.empty(); }
};

// JSON text (2-space indented) and back. Reading throws sf::Error ("session file: stops[3].cursor.alg
// must be an integer 1–15") for anything malformed; unknown keys are ignored.
std::string session_to_json(const SessionFile& s);
SessionFile session_from_json(const std::string& text);
// Atomic write (fileio.hpp) and a bounded read (sessions are small: at most 16 MiB).
void save_session(const std::string& path, const SessionFile& s);
SessionFile load_session(const std::string& path);

// The file a session's model path names: "@assets/…" under assets_dir, a relative path under the
// session file's folder, an absolute path as it is ("" stays "": the built-in default model).
std::string resolve_model_path(const std::string& session_path, const std::string& model_path,
                               const std::string& assets_dir);
// The reverse, for saving: "@assets/NAME" for a file under assets_dir, a path relative to the
// session's folder for a file in it or below it, else the absolute path.
std::string model_path_for(const std::string& session_path, const std::string& model_file,
                           const std::string& assets_dir);
// "fnv1a64:<hex>" of the checkpoint file at path (a folder: its model.safetensors, as open_model
// reads it). Throws sf::Error when it cannot be read.
std::string model_checksum(const std::string& path);

}  // namespace sf
