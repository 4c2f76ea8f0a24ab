// Command-line options of the desktop app.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sf {

// --monkey SEED:N[:K] (app/monkey.hpp): N random actions drawn from SEED, K a frame.
struct MonkeyOptions {
  uint64_t seed = 0;
  int64_t actions = 0;  // 0: no monkey; -1: until SIGINT or SIGTERM (SEED:forever)
  int per_frame = 1;
  bool active() const { return actions != 0; }
};

struct AppOptions {
  int frames = -1;                   // --frames N: run N frames, then exit (-1: until closed)
  std::vector<std::string> actions;  // --actions a,b,c: applied in order, one per frame
  std::string screenshot;            // --screenshot FILE.png: saved after the last frame
  std::string model;                 // --model FILE.safetensors
  std::string prompt;                // --prompt TEXT
  int width = 1600, height = 1000;   // --size WxH
  float scale = 0;                   // --scale S: the content scale (0: the monitor's, glfwGetWindowContentScale)
  bool no_ini = false;               // --no-ini: neither read nor write imgui.ini (tests)
  bool gl33 = false;                 // --gl33: ask for OpenGL 3.3 only (tests the no-4.3 fallback)
  int bench = 0;                     // --bench N: time N frames and prompt edits, print, exit
  std::string dump_state;            // --dump-state FILE.json: cursor, windows, highlight (tests)
  std::string session;               // FILE.stepformer (or --session FILE): a session or lesson to open
  MonkeyOptions monkey;               // --monkey SEED:N[:K]
  bool help = false;
  bool version = false;              // --version: the version, the build's options and the data folder
};

// Parses argv; on a bad option returns false with a one-line `error`.
bool parse_app_options(int argc, char** argv, AppOptions& out, std::string& error);
const char* app_usage();
// Parses "SEED:N[:K]" or "SEED:forever[:K]"; false with `error`.
bool parse_monkey(const std::string& spec, MonkeyOptions& out, std::string& error);

}  // namespace sf
