// The real app under Xvfb for the GUI tests (tests/app/test_gui*.cpp): run_app starts it with
// --frames, --actions, --screenshot and --dump-state in a fresh folder (also its XDG_CONFIG_HOME),
// and returns its exit code, output, state report and screenshot. Files the app should keep must
// be given absolute paths: the folder is removed afterwards.
#pragma once
#include <stb/stb_image.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gui {

namespace fs = std::filesystem;
using json = nlohmann::json;


struct AppRun {
  int exit_code = -1;
  std::string output;  // stdout + stderr
  json state;
  std::vector<unsigned char> rgba;
  int w = 0, h = 0;

  // RGB at (x, y) in screen pixels.
  std::array<int, 3> px(int x, int y) const {
    const size_t i = (static_cast<size_t>(y) * w + x) * 4;
    return {rgba[i], rgba[i + 1], rgba[i + 2]};
  }
};

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a shell command line that starts the app; returns its exit code, output and the state it
// dumped to `state_path` (when it wrote one).
inline AppRun run_command(const std::string& cmd, const std::string& state_path) {
  AppRun r;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[512];
  while (p && fgets(buf, sizeof buf, p)) r.output += buf;
  const int status = p ? pclose(p) : -1;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (fs::exists(state_path)) {
    std::ifstream f(state_path);
    r.state = json::parse(f);
  }
  return r;
}

// The app in a w × h window on an Xvfb screen of that size; without --no-ini in `args`, as on a
// first launch (a fresh settings folder).
// xvfb-run's own clean-up sometimes fails when many servers start and stop at once ("rm -r" of its
// temporary folder): it then exits 5, replacing the app's exit status. That line is xvfb-run's,
// never the app's; such a run is made again in a fresh folder (at most twice more).
inline bool xvfb_cleanup_failed(const AppRun& r) {
  return r.output.find("xvfb-run: error: problem while cleaning up temporary directory") != std::string::npos;
}

inline AppRun run_app_sized(int w, int h, const std::string& args, const std::string& actions = "",
                            bool with_display = true);

inline AppRun run_app_sized_once(int w, int h, const std::string& args, const std::string& actions,
                                 bool with_display) {
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() / ("stepformer-gui-" + std::to_string(::getpid()) + "-" +
                                                    std::to_string(counter++));
  fs::create_directories(dir);
  const std::string png = (dir / "shot.png").string(), state = (dir / "state.json").string();
  const std::string size = std::to_string(w) + "x" + std::to_string(h);
  std::string cmd = std::string(STEPFORMER_APP) + " --size " + size + " --frames 4 --screenshot " + png +
                    " --dump-state " + state + " " + args;
  if (!actions.empty()) cmd += " --actions " + quote(actions);
  if (with_display)
    cmd = std::string(XVFB_RUN) + " -a -s '-screen 0 " + size + "x24' " + cmd;
  else
    cmd = "env -u DISPLAY -u WAYLAND_DISPLAY " + cmd;
  cmd = "cd " + dir.string() + " && XDG_CONFIG_HOME=" + dir.string() + " " + cmd + " 2>&1";
  AppRun r = run_command(cmd, state);
  int comp = 0;
  if (unsigned char* data = stbi_load(png.c_str(), &r.w, &r.h, &comp, 4)) {
    r.rgba.assign(data, data + static_cast<size_t>(r.w) * r.h * 4);
    stbi_image_free(data);
  }
  fs::remove_all(dir);
  return r;
}

inline AppRun run_app_sized(int w, int h, const std::string& args, const std::string& actions, bool with_display) {
  AppRun r = run_app_sized_once(w, h, args, actions, with_display);
  for (int retry = 0; retry < 2 && xvfb_cleanup_failed(r); ++retry) r = run_app_sized_once(w, h, args, actions, with_display);
  return r;
}

inline AppRun run_app(const std::string& args, const std::string& actions = "", bool with_display = true) {
  return run_app_sized(1280, 800, "--no-ini " + args, actions, with_display);
}

// The first widget the last frame drew with this label (--dump-state's "widgets"), null if none.
inline const json* widget(const json& state, const std::string& label) {
  for (const json& w : state["widgets"])
    if (w["label"] == label) return &w;
  return nullptr;
}

// The centre of a rectangle [x, y, w, h] as "X:Y", whole pixels, for click: and mouse: actions.
inline std::string centre(const json& rect) {
  return std::to_string(static_cast<int>(rect[0].get<float>() + rect[2].get<float>() / 2)) + ":" +
         std::to_string(static_cast<int>(rect[1].get<float>() + rect[3].get<float>() / 2));
}

// Standard deviation of the luminance: a blank or single-colour frame is near 0.
inline double luminance_std(const AppRun& r) {
  double s = 0, s2 = 0;
  const size_t n = static_cast<size_t>(r.w) * r.h;
  for (size_t i = 0; i < n; ++i) {
    const double y = 0.3 * r.rgba[i * 4] + 0.59 * r.rgba[i * 4 + 1] + 0.11 * r.rgba[i * 4 + 2];
    s += y;
    s2 += y * y;
  }
  return std::sqrt(std::max(0.0, s2 / n - (s / n) * (s / n)));
}

inline bool inside(const json& rect, const json& outer) {
  return rect[0].get<float>() >= outer[0].get<float>() - 1 && rect[1].get<float>() >= outer[1].get<float>() - 1 &&
         rect[0].get<float>() + rect[2].get<float>() <= outer[0].get<float>() + outer[2].get<float>() + 1 &&
         rect[1].get<float>() + rect[3].get<float>() <= outer[1].get<float>() + outer[3].get<float>() + 1;
}


}  // namespace gui
