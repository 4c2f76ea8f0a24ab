// Lessons without a window: a lesson (a SessionFile with stops, core/io/session_file.hpp) played
// on a Session, recorded stop by stop, reordered and saved. The app (app/classroom/lesson_feature)
// adds what needs a window: the panels a stop names, its selected value and the caption box.
//
// Stop n's setup is the lesson's own (its state: model, prompt, context, run, settings) with the
// changes of stops 1 … n applied in order, so that going straight to a stop (PageUp, lesson-go:N)
// shows what playing up to it shows.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/io/session_file.hpp"

namespace sf {

class Session;

// What a stop sets up before its cursor moves (the lesson's state with the stops' changes).
struct StopSetup {
  SessionModel model;
  std::string prompt, context;
  SessionRun run;
  std::optional<SessionImage> image;  // a vit's input (absent: as it is)
};

// Traces the run kind "training" (Algorithm 13's traced update: the app's Training tab); false
// with `error`. Headless callers have none: a training stop then fails with a clear message.
using TrainingTracer = std::function<bool(std::string& error)>;

class LessonPlayer {
 public:
  // Reads the lesson at `path` (stop 1 not yet shown: go(…, 0, …) shows it). False with `error`
  // when the file cannot be read, is malformed or has no stops; the lesson playing stays.
  bool open(const std::string& path, std::string& error);
  // Starts a new lesson from `start` (the session as it is now), with no stops and no file yet.
  void record(SessionState start, std::string title);
  // Writes the lesson (atomically) to `path`, which it then plays from. False with `error`.
  bool save(const std::string& path, std::string& error);
  void close();

  bool active() const { return active_; }
  const SessionFile& lesson() const { return lesson_; }
  const std::string& path() const { return path_; }
  size_t size() const { return lesson_.stops.size(); }
  // The stop shown (0-based), or SIZE_MAX before the first go().
  size_t current() const { return current_; }
  const LessonStop* current_stop() const { return current_ < size() ? &lesson_.stops[current_] : nullptr; }
  // The last go()'s outcome: whether the stop's cursor resolved, and why not.
  bool resolved() const { return resolved_; }
  const std::string& error() const { return error_; }

  // Shows stop n (0-based) on `s`: its setup (a model it names loaded, prompt, context, the run
  // traced again, τ of the run), then its cursor. False with `error` naming the stop ("Stop 3 of
  // 7 (“Masking”): …") when the setup fails or the cursor is not in the run; the stop is still
  // the current one, so next/previous go on from it.
  bool go(Session& s, size_t n, const TrainingTracer& training, std::string& error);
  // The setup stop n shows (the lesson's state with the changes of stops 1 … n).
  StopSetup setup_for(size_t n) const;
  // The model file a setup names ("" : keep the session's), resolved against the lesson's folder.
  std::string model_file(const SessionModel& m) const;

  // Editing (the stop editor, lesson-add-stop / -move / -delete). Positions are 0-based.
  // Adds `stop` after the current stop (at the end when none) and makes it current.
  void add(LessonStop stop);
  bool move(size_t from, size_t to, std::string& error);
  bool remove(size_t n, std::string& error);
  LessonStop* stop(size_t n) { return n < size() ? &lesson_.stops[n] : nullptr; }
  // Title and description of the lesson (the stop editor edits them).
  SessionFile& file() { return lesson_; }

 private:
  SessionFile lesson_;
  std::string path_;
  bool active_ = false;
  size_t current_ = SIZE_MAX;
  bool resolved_ = false;
  std::string error_;
};

// "Stop 3 of 7 — Masking": the caption's heading and the stop list's labels.
std::string stop_heading(const LessonPlayer& p, size_t n);
// "Algorithm 4 line 6 (l=1, h=1)": where a stop's cursor points, for messages.
std::string describe_cursor(const CursorRef& c);

// A lesson file in assets/lessons/ by its name ("02-one-attention-head", with or without
// ".stepformer"), or `name` itself when it is a path to a file. "" when nothing matches.
std::string find_lesson(const std::string& name);
// The shipped lessons (assets/lessons/*.stepformer), sorted by file name.
std::vector<std::string> shipped_lessons();

}  // namespace sf
