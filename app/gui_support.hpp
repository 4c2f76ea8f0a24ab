// Window-level support for the app: settings persistence, fonts, style and screenshots
// (the scripted actions of --actions are app/script_runner.hpp).
#pragma once
#include <string>

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

}  // namespace sf
