// Window-level support for the app: settings persistence, fonts, style and screenshots
// (the scripted actions of --actions are app/script_runner.hpp).
#pragma once
#include <string>

#include "app/app.hpp"

namespace sf {

// imgui.ini under $XDG_CONFIG_HOME/stepformer (or ~/.config/stepformer), holding the window
// layout and a [Stepformer][Settings] section (font size, theme, recent files).
void install_settings(App& app, bool no_ini);
// (Re)builds the font atlas at settings.font_px; `rebuild` also recreates the GL texture.
void build_fonts(App& app, bool rebuild);
void apply_style(App& app);
// Reads the back buffer and writes a PNG.
bool save_screenshot(const std::string& path, int w, int h, std::string& error);

}  // namespace sf
