// Command-line options of the desktop app.
#pragma once
#include <string>
#include <vector>

namespace sf {

struct AppOptions {
  int frames = -1;                   // --frames N: run N frames, then exit (-1: until closed)
  std::vector<std::string> actions;  // --actions a,b,c: applied in order, one per frame
  std::string screenshot;            // --screenshot FILE.png: saved after the last frame
  std::string model;                 // --model FILE.safetensors
  std::string prompt;                // --prompt TEXT
  int width = 1600, height = 1000;   // --size WxH
  bool no_ini = false;               // --no-ini: neither read nor write imgui.ini (tests)
  bool gl33 = false;                 // --gl33: ask for OpenGL 3.3 only (tests the no-4.3 fallback)
  int bench = 0;                     // --bench N: time N frames and prompt edits, print, exit
  std::string dump_state;            // --dump-state FILE.json: cursor, windows, highlight (tests)
  std::string session;               // FILE.stepformer (or --session FILE): a session or lesson to open
  bool help = false;
};

// Parses argv; on a bad option returns false with a one-line `error`.
bool parse_app_options(int argc, char** argv, AppOptions& out, std::string& error);
const char* app_usage();

}  // namespace sf
