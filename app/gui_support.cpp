#include "app/gui_support.hpp"

#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <stb/stb_image_write.h>

#include <cmath>
#include <filesystem>

#include "app/classroom/themes.hpp"
#include "app/panels/welcome_panel.hpp"
#include "backends/imgui_impl_opengl3.h"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {

namespace {

std::string config_dir() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/stepformer";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.config/stepformer";
  return ".";
}

App* settings_app = nullptr;
std::string ini_path;

void* settings_open(ImGuiContext*, ImGuiSettingsHandler*, const char* name) {
  return std::string(name) == "Settings" ? settings_app : nullptr;
}

void settings_read_line(ImGuiContext*, ImGuiSettingsHandler*, void* entry, const char* line) {
  App* app = static_cast<App*>(entry);
  float f;
  int i;
  char buf[4096];
  if (std::sscanf(line, "FontPx=%f", &f) == 1 && f >= 8 && f <= 64) app->settings.font_px = f;
  else if (std::sscanf(line, "Dark=%d", &i) == 1) app->settings.dark = i != 0;
  else if (std::sscanf(line, "Recent=%4095[^\n]", buf) == 1 && app->settings.recent_files.size() < 10)
    app->settings.recent_files.push_back(buf);
  else if (std::sscanf(line, "HighContrast=%d", &i) == 1) app->settings.high_contrast = i != 0;
  else if (std::sscanf(line, "Colorblind=%d", &i) == 1) app->settings.colorblind = i != 0;
  else if (std::sscanf(line, "RecentSession=%4095[^\n]", buf) == 1 && app->settings.recent_sessions.size() < 10)
    app->settings.recent_sessions.push_back(buf);
  else if (std::sscanf(line, "WelcomeAtStart=%d", &i) == 1) app->settings.welcome_at_start = i != 0;
}

void settings_write_all(ImGuiContext*, ImGuiSettingsHandler* h, ImGuiTextBuffer* out) {
  const Settings& s = settings_app->settings;
  out->appendf("[%s][Settings]\n", h->TypeName);
  out->appendf("FontPx=%.0f\n", s.font_px);
  out->appendf("Dark=%d\n", s.dark ? 1 : 0);
  for (const auto& r : s.recent_files) out->appendf("Recent=%s\n", r.c_str());
  out->appendf("HighContrast=%d\nColorblind=%d\n", s.high_contrast ? 1 : 0, s.colorblind ? 1 : 0);
  for (const auto& r : s.recent_sessions) out->appendf("RecentSession=%s\n", r.c_str());
  out->appendf("WelcomeAtStart=%d\n", s.welcome_at_start ? 1 : 0);
  out->append("\n");
}

// Greek, math and arrows as the pseudocode needs them, and the scripts tokenizer pieces are most
// often in (DejaVu Sans covers all of these). A character outside them (CJK, emoji) is drawn as
// U+FFFD "�", ImGui's fallback; the tooltips give its bytes and ids.
const ImWchar kTextRanges[] = {
    0x0020, 0x00FF,  // Basic Latin, Latin-1 (× ·)
    0x0100, 0x017F,  // Latin Extended-A (GPT-2's byte markers Ġ Ċ)
    0x0180, 0x024F,  // Latin Extended-B
    0x0250, 0x02FF,  // IPA, spacing modifiers
    0x0300, 0x036F,  // combining marks (X̃)
    0x0370, 0x03FF,  // Greek (α β γ ε η θ τ)
    0x1D00, 0x1DBF,  // phonetic extensions (ᵀ ᵢ)
    0x1E00, 0x1EFF,  // Latin Extended Additional (Ṽ ẽ)
    0x2000, 0x206F,  // punctuation (…, ‖)
    0x2070, 0x209F,  // super- and subscripts (¹ ² ³ ⁴ ⁵)
    0x2100, 0x214F,  // letterlike (ℝ ℓ ℕ ℙ)
    0x2190, 0x21FF,  // arrows (← → ↑, ↵ newline, ⇥ tab)
    0x2200, 0x22FF,  // math operators (∀ ∈ √ ∞ ≤ ⊙ Σ)
    0x2300, 0x23FF,  // misc technical (⌈ ⌉)
    0x2400, 0x243F,  // control pictures (␣ space)
    0x2C60, 0x2C7F,  // Latin Extended-C (ⱼ)
    0x25A0, 0x25FF,  // shapes (▶ ● ■)
    0x27E6, 0x27FF,  // brackets and arrows (⟦ ⟧ ⟲)
    0x0400, 0x04FF,  // Cyrillic
    0xFFFD, 0xFFFD,  // the replacement character, ImGui's fallback glyph
    0,
};

}  // namespace

void install_settings(App& app, bool no_ini) {
  settings_app = &app;
  ImGuiIO& io = ImGui::GetIO();
  if (no_ini) {
    io.IniFilename = nullptr;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(config_dir(), ec);
    ini_path = config_dir() + "/imgui.ini";
    io.IniFilename = ini_path.c_str();
  }
  ImGuiSettingsHandler h;
  h.TypeName = "Stepformer";
  h.TypeHash = ImHashStr("Stepformer");
  h.ReadOpenFn = settings_open;
  h.ReadLineFn = settings_read_line;
  h.WriteAllFn = settings_write_all;
  ImGui::GetCurrentContext()->SettingsHandlers.push_back(h);
  if (!io.IniFilename) return;  // --no-ini: no welcome unless asked (welcome:show, Help › Welcome)
  std::error_code ec;
  const bool first_launch = !std::filesystem::exists(ini_path, ec);  // no settings written yet
  ImGui::LoadIniSettingsFromDisk(io.IniFilename);
  welcome_panel(app).show(first_launch || app.settings.welcome_at_start);
}

float font_px_on_screen(const App& app) { return std::round(app.settings.font_px * app.ui.content_scale); }

void build_fonts(App& app, bool rebuild) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  const float px = font_px_on_screen(app);
  const std::string dir = "/usr/share/fonts/truetype/dejavu/";
  const std::string sans = dir + "DejaVuSans.ttf", mono = dir + "DejaVuSansMono.ttf";
  app.fonts = {};
  if (std::filesystem::exists(sans) && std::filesystem::exists(mono)) {
    app.fonts.text = io.Fonts->AddFontFromFileTTF(sans.c_str(), px, nullptr, kTextRanges);
    app.fonts.small = io.Fonts->AddFontFromFileTTF(sans.c_str(), std::round(px * 0.72f), nullptr, kTextRanges);
    app.fonts.mono = io.Fonts->AddFontFromFileTTF(mono.c_str(), px, nullptr, kTextRanges);
    app.fonts.from_ttf = app.fonts.text && app.fonts.small && app.fonts.mono;
  }
  if (!app.fonts.from_ttf) {
    io.Fonts->Clear();
    app.fonts.text = app.fonts.small = app.fonts.mono = io.Fonts->AddFontDefault();
    app.notify("DejaVu fonts not found (install fonts-dejavu-core): math symbols will show as boxes", true);
  }
  io.Fonts->Build();
  if (rebuild) {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  app.ui.font_dirty = false;
}

void apply_style(App& app) {
  ImGuiStyle& style = ImGui::GetStyle();
  style = ImGuiStyle();
  if (app.settings.dark) ImGui::StyleColorsDark();
  else ImGui::StyleColorsLight();
  if (app.settings.high_contrast || app.ui.presentation) apply_high_contrast(style);
  style.WindowRounding = 3.0f;
  style.FrameRounding = 2.0f;
  const float px = font_px_on_screen(app);
  style.ScaleAllSizes(px / 15.0f);
  // ScaleAllSizes makes the smallest window 32 × 32 px at 15 px text; the one-line status bar is
  // 1.9 lines high, so that minimum (2.1 lines) would push it past the bottom of the screen.
  style.WindowMinSize = ImVec2(std::round(px * 2.0f), std::round(px));
}

bool save_screenshot(const std::string& path, int w, int h, std::string& error) {
  std::vector<unsigned char> px(static_cast<size_t>(w) * h * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  stbi_flip_vertically_on_write(1);
  if (!stbi_write_png(path.c_str(), w, h, 4, px.data(), w * 4)) {
    error = "cannot write the screenshot " + path;
    return false;
  }
  return true;
}

namespace {

DrawListBytes bytes_of(const ImDrawList& d) {
  return {d.VtxBuffer.Capacity * sizeof(ImDrawVert) + d.IdxBuffer.Capacity * sizeof(ImDrawIdx) +
              d.CmdBuffer.Capacity * sizeof(ImDrawCmd),
          d.VtxBuffer.Size * sizeof(ImDrawVert) + d.IdxBuffer.Size * sizeof(ImDrawIdx) + d.CmdBuffer.Size * sizeof(ImDrawCmd)};
}

DrawListBytes bytes_of(const ImDrawListSplitter& s) {
  DrawListBytes b;
  for (const ImDrawChannel& c : s._Channels) {
    b.capacity += c._CmdBuffer.Capacity * sizeof(ImDrawCmd) + c._IdxBuffer.Capacity * sizeof(ImDrawIdx);
    b.used += c._CmdBuffer.Size * sizeof(ImDrawCmd) + c._IdxBuffer.Size * sizeof(ImDrawIdx);
  }
  return b;
}

bool oversized(const DrawListBytes& b) { return b.capacity > kDrawListSlackBytes && b.capacity > kDrawListSlack * b.used; }

}  // namespace

void trim_draw_lists() {
  ImGuiContext& g = *ImGui::GetCurrentContext();
  for (ImGuiWindow* w : g.Windows)
    if (oversized(bytes_of(*w->DrawList))) w->DrawList->_ClearFreeMemory();  // the next Begin starts it afresh
  for (ImGuiTableTempData& t : g.TablesTempData)
    if (oversized(bytes_of(t.DrawSplitter))) t.DrawSplitter.ClearFreeMemory();  // between frames: no table is open
}

DrawListBytes draw_list_bytes() {
  ImGuiContext& g = *ImGui::GetCurrentContext();
  DrawListBytes total;
  auto add = [&total](const DrawListBytes& b) { total.capacity += b.capacity, total.used += b.used; };
  for (const ImGuiWindow* w : g.Windows) {
    const DrawListBytes b = bytes_of(*w->DrawList);
    add(b);
    if (b.capacity > total.largest_capacity)
      total.largest = w->Name, total.largest_capacity = b.capacity, total.largest_used = b.used;
  }
  for (const ImGuiTableTempData& t : g.TablesTempData) add(bytes_of(t.DrawSplitter));
  return total;
}

}  // namespace sf
