// The monkey (--monkey SEED:N[:K]): drives the app with random actions drawn deterministically
// from SEED, out of the --actions vocabulary (stepping, prompt edits, training, generation,
// models, panels, themes, lessons, experiments, exports, keys), plus pointer clicks that have no
// action of their own. K actions a frame (default 1). It must never crash;
// an action that fails with a message is counted by verb. At the end it prints a summary:
// actions applied, failures by verb, frames, and RSS (after the first 1,000 actions, at the end,
// peak). SEED:forever runs until SIGINT or SIGTERM (scripts/soak.sh). With STEPFORMER_MONKEY_ECHO
// set in the environment it prints each action before applying it.
//
// Settled memory (scripts/soak.sh, docs/soak.md): with STEPFORMER_MONKEY_SETTLE=FILE set, the
// monkey saves the start state to the session FILE before its first action; on each SIGUSR1 it
// then stops drawing actions, goes back to that state (the Training tab's run let go, lesson and presentation
// mode ended, experiments reset, FILE opened again, its trace awaited), draws frames with no action
// until the app's timed caches have let go of what the state before drew (a heatmap texture lives
// kHeatmapTextureLifeFrames frames), asks ImGui to compact the windows not drawn (what its
// io.ConfigMemoryCompactTimer does after 60 s unused), returns the allocator's free pages to the
// system (malloc_trim) and prints
// "monkey: settled after N actions: VmRSS R KiB, heap in use H KiB" (mallinfo2's uordblks + hblkhd) — RSS
// in the same state each time, so that growth means memory kept, not what happens to be open.
// With STEPFORMER_MONKEY_STOP_SETTLED set too, the process then stops itself (SIGSTOP), so that a heap
// profiler's record ends at the settled state when the process is killed (docs/soak.md).
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "app/app.hpp"
#include "app/script_runner.hpp"
#include "app/options.hpp"
#include "app/widgets/heatmap.hpp"

namespace sf {

// Resident set sizes of this process in KiB from /proc/self/status (VmRSS, VmHWM); 0 if unknown.
int64_t rss_kib();
int64_t peak_rss_kib();

class Monkey {
 public:
  // Installs SIGINT/SIGTERM handlers that end a run (done()), and crash handlers that name the
  // action being applied before the process dies.
  Monkey(App& app, MonkeyOptions opt);
  // Before the frame: releases what the last frame pressed, then applies K actions.
  void step();
  bool done() const;
  // The summary; false when an exception escaped an action (the exit code then says so).
  bool report() const;

 private:
  std::string next_action();
  void apply(const std::string& action);
  std::string random_text(size_t max_len);
  void click();
  // Steps the running gesture, if any; true when one ran this frame (then no new action starts).
  bool step_gesture();
  void settle();  // back to the start state (see above)

  // Frames drawn with no action before settled RSS is read: the heatmap textures' life and a few more.
  static constexpr int kSettleFrames = kHeatmapTextureLifeFrames + 5;

  App& app_;
  MonkeyOptions opt_;
  std::mt19937_64 rng_;
  bool echo_;  // STEPFORMER_MONKEY_ECHO set: print each action before applying it (to reproduce a crash)
  int64_t applied_ = 0, failed_ = 0, frames_ = 0;
  std::map<std::string, int64_t> failed_by_verb_;
  std::vector<std::string> exceptions_;
  std::vector<std::unique_ptr<ScriptRunner>> held_;  // key actions of the last frame, released next
  // A gesture of several frames (right-click:, drag:, click-item:): no other action until it ends.
  std::unique_ptr<ScriptRunner> gesture_;
  int gesture_frame_ = 0;
  bool mouse_down_ = false;
  int64_t rss_at_1000_ = 0;
  std::string settle_file_;  // STEPFORMER_MONKEY_SETTLE: the start state's session ("" = no settling)
  int settle_wait_ = -1;     // frames left before the settled RSS is read (−1: not settling)
  std::chrono::steady_clock::time_point start_;
};

}  // namespace sf
