// The --actions runner: applies scripted actions one by one, for tests and screenshots.
//
// Most actions are App::apply_action's, one frame each with a frame after it for the UI to show
// the result. The input verbs are real input, fed to ImGui through the GLFW backend's callbacks
// as the keyboard and the mouse would be, and span the frames ImGui needs to see each event:
//   key:KEY                  press on one frame, release on the next
//   click:X:Y, right-click:X:Y   move the pointer there; press; release (three frames)
//   drag:X1:Y1:X2:Y2         move to X1:Y1; press; move to X2:Y2 over four frames, held; release
//   click-item:A/B/…         find the widget labelled A where it was last drawn, click it, then B
//                            (menus: click-item:View/Presentation), each level a click
// and two verbs write what a test checks, at the end of the frame they are applied on:
//   dump-state:FILE (as --dump-state), screenshot:FILE (as --screenshot).
#pragma once
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "app/app.hpp"

namespace sf {

class ScriptRunner {
 public:
  ScriptRunner(App& app, std::vector<std::string> actions) : app_(app), actions_(std::move(actions)) {}
  // Called once a frame, before ImGui's new frame; `frame` counts from 0. The first action is
  // applied on frame 1.
  void step(int frame);
  // Writes what a dump-state: or screenshot: action asked for; call once the frame is rendered
  // into the back buffer (w × h pixels).
  void after_render(int w, int h);
  // An action is still to be applied or a gesture to be finished: the run must not end yet.
  bool busy() const { return next_ < actions_.size() || !stages_.empty(); }
  const std::vector<std::string>& errors() const { return errors_; }

  // One frame's part of a gesture: Done moves on to the next part on the next frame; Wait runs
  // this part again on the next frame (a widget not drawn yet); Failed ends the action.
  enum class Stage { Done, Wait, Failed };
  using StageFn = std::function<Stage(std::string& error)>;

 private:
  void start(const std::string& action);
  bool queue_pointer_verb(const std::string& verb, const std::string& arg, std::string& error);
  void run_stage();
  void fail(const std::string& action, const std::string& error);

  App& app_;
  std::vector<std::string> actions_;
  std::vector<std::string> errors_;
  std::vector<int> held_keys_;
  size_t next_ = 0;         // the next action to apply
  int next_frame_ = 1;      // the first frame it may be applied on
  std::string current_;     // the action the queued stages belong to
  std::deque<StageFn> stages_;
  int waited_ = 0;          // frames the front stage has waited
  std::string dump_path_, screenshot_path_;
};

}  // namespace sf
