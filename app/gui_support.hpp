// Window-level support for the app: settings persistence, fonts, style, screenshots and
// the scripted-actions runner used by tests (--actions).
#pragma once
#include <string>
#include <vector>

#include "app/app.hpp"

namespace sf {

// imgui.ini under $XDG_CONFIG_HOME/stepformer (or ~/.config/stepformer), holding the window
// layout and a [Stepformer][Settings] section (font size, theme, recent files). Opens the welcome
// when there is no such file yet (a first launch) or its "Show at start" is ticked.
void install_settings(App& app, bool no_ini);
// The text size on screen: settings.font_px at the window's content scale.
float font_px_on_screen(const App& app);
// (Re)builds the font atlas at font_px_on_screen; `rebuild` also recreates the GL texture.
void build_fonts(App& app, bool rebuild);
// The theme, and ImGui's paddings and spacings scaled with the text (ScaleAllSizes).
void apply_style(App& app);
// Reads the back buffer and writes a PNG.
bool save_screenshot(const std::string& path, int w, int h, std::string& error);

// Applies --actions one by one, a frame apart; key:KEY presses a key through the GLFW
// backend's own callback on one frame and releases it on the next.
class ScriptRunner {
 public:
  ScriptRunner(App& app, std::vector<std::string> actions) : app_(app), actions_(std::move(actions)) {}
  void step(int frame);
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  App& app_;
  std::vector<std::string> actions_;
  std::vector<std::string> errors_;
  std::vector<int> held_keys_;
};

}  // namespace sf
