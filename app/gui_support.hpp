// Window-level support for the app: settings persistence, fonts, style and screenshots
// (the scripted actions of --actions are app/script_runner.hpp).
#pragma once
#include <cstddef>
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

// Dear ImGui keeps each window's vertex, index and command buffers (and the tables' draw channels) at the
// largest frame they ever drew: a window that once showed a 600-token prompt's matrices keeps megabytes
// for the rest of the day. Called after a frame is rendered, this frees a window's buffers when they
// hold over kDrawListSlackBytes and more than kDrawListSlack times what its last frame used; the next
// frame allocates what it needs again (docs/soak.md, session 21).
inline constexpr size_t kDrawListSlackBytes = 64 * 1024;
inline constexpr size_t kDrawListSlack = 4;
void trim_draw_lists();
// The bytes those buffers hold now, and the bytes their last frames used (--dump-state's "draw_lists").
struct DrawListBytes {
  size_t capacity = 0, used = 0;
  std::string largest;               // the window whose buffers hold the most
  size_t largest_capacity = 0, largest_used = 0;
};
DrawListBytes draw_list_bytes();

}  // namespace sf
