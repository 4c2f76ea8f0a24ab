// The window layout (App::layout_windows): the tiles, the Inspector's tabs, the floating windows.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "app/app.hpp"
#include "app/classroom/lesson_feature.hpp"
#include "app/classroom/presentation_feature.hpp"
#include "app/feature.hpp"
#include "app/panel_registry.hpp"
#include "app/panels/all_panels.hpp"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {

namespace {

struct Rect {
  float x = 0, y = 0, w = 0, h = 0;
};

// Where each tiled window goes: the Dock::Tile panels by name, the Inspector, the focal value's
// view; a window with w == 0 (or no rectangle) is not shown.
struct Tiles {
  std::map<std::string, Rect> panel;
  Rect inspector, focus;
};

// Splits `width` among the columns that are shown, in proportion to their weights (a hidden
// column's weight is 0: its share goes to the others); returns each column's width.
std::vector<float> split(float width, const std::vector<float>& weights) {
  float total = 0;
  for (float w : weights) total += w;
  std::vector<float> out;
  for (float w : weights) out.push_back(total > 0 ? width * w / total : 0.0f);
  return out;
}

// The normal layout: pseudocode above the call stack on the left, the variables in the middle,
// the inspector on the right. A closed panel gives its space to the others: the pseudocode or
// the call stack alone takes the left column's height, and a column with nothing in it its width.
Tiles normal_tiles(const PanelVisibility& show, float top, float width, float body_h) {
  const bool left = show.pseudocode || show.callstack;
  const std::vector<float> w = split(width, {left ? 0.38f : 0.0f, show.variables ? 0.24f : 0.0f, 0.38f});
  const float code_h = !show.callstack ? body_h : !show.pseudocode ? 0.0f : body_h * 0.68f;
  Tiles t;
  if (show.pseudocode) t.panel["pseudocode"] = {0, top, w[0], code_h};
  if (show.callstack) t.panel["callstack"] = {0, top + code_h, w[0], body_h - code_h};
  if (show.variables) t.panel["variables"] = {w[0], top, w[1], body_h};
  t.inspector = {w[0] + w[1], top, w[2], body_h};
  return t;
}

// Presentation mode: the shown panels only, large. The pseudocode on the left, with the variables
// and the call stack (when the stop names them) under it; on the right the focal value's view
// (`focus`) beside the Inspector's other shown tabs (`inspector`). The body stops above the caption.
Tiles presentation_tiles(const std::vector<std::string>& shown, bool focus, bool inspector, float top, float width,
                         float body_h) {
  auto has = [&](const char* n) { return std::find(shown.begin(), shown.end(), n) != shown.end(); };
  const bool code = has("pseudocode"), vars = has("variables"), calls = has("callstack");
  const bool left = code || vars || calls;
  // Beside another tab, the focal value's view takes the narrower share: most focal values are a
  // few columns (tokens) or one (a distribution p).
  const std::vector<float> w =
      split(width, {left ? 0.42f : 0.0f, focus ? (inspector ? 0.36f : 0.58f) : 0.0f, inspector ? 0.34f : 0.0f});
  Tiles t;
  // The left column: the pseudocode takes 60% when side panels share it, the side panels the rest.
  const float code_h = code ? (vars || calls ? body_h * 0.6f : body_h) : 0.0f;
  const float side_h = body_h - code_h;
  const float var_h = vars ? (calls ? side_h * 0.6f : side_h) : 0.0f;
  if (code) t.panel["pseudocode"] = {0, top, w[0], code_h};
  if (vars) t.panel["variables"] = {0, top + code_h, w[0], var_h};
  if (calls) t.panel["callstack"] = {0, top + code_h + var_h, w[0], side_h - var_h};
  if (focus) t.focus = {w[0], top, w[1], body_h};
  if (inspector) t.inspector = {w[0] + w[1], top, w[2], body_h};
  return t;
}

// One of the Inspector's tabs now shown: its declaration and its "select me once" flag.
struct InspectorTab {
  const char* title;
  const PanelDecl* decl;
  bool* open;
};

// The rows the tab buttons take in `width` (each button whole, wrapped as draw_tab_buttons does).
int tab_rows(const std::vector<InspectorTab>& tabs, float width) {
  const ImGuiStyle& st = ImGui::GetStyle();
  int rows = tabs.empty() ? 0 : 1;
  float x = 0;
  for (const InspectorTab& t : tabs) {
    const float w = ImGui::CalcTextSize(t.title).x + 2 * st.FramePadding.x;
    if (x > 0 && x + st.ItemInnerSpacing.x + w > width) ++rows, x = 0;
    x += (x > 0 ? st.ItemInnerSpacing.x : 0.0f) + w;
  }
  return rows;
}

// Records the last item as a tab label for --dump-state: its rectangle and whether all of it lies
// inside the window's visible region.
void record_tab(std::vector<UiState::TabItem>& items, const char* label, bool selected) {
  const ImGuiWindow* win = ImGui::GetCurrentWindow();
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  const ImRect& clip = win->InnerClipRect;
  const bool whole = a.x >= clip.Min.x && b.x <= clip.Max.x && a.y >= clip.Min.y && b.y <= clip.Max.y;
  items.push_back({label, ImVec4(a.x, a.y, b.x - a.x, b.y - a.y), whole, selected});
}

// Every title whole on a button, wrapping onto another row when the next one does not fit (ten
// titles never fit one row of a projector's Inspector). Returns the selected title.
std::string draw_tab_buttons(const std::vector<InspectorTab>& tabs, const std::string& selected,
                             std::vector<UiState::TabItem>& items) {
  std::string chosen = selected;
  const ImGuiStyle& st = ImGui::GetStyle();
  const float right = ImGui::GetCurrentWindow()->WorkRect.Max.x;
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, st.ItemInnerSpacing);
  for (size_t i = 0; i < tabs.size(); ++i) {
    const float w = ImGui::CalcTextSize(tabs[i].title).x + 2 * st.FramePadding.x;
    if (i > 0) {
      ImGui::SameLine();
      if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();  // the next row
    }
    const bool on = tabs[i].title == selected;
    ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(on ? ImGuiCol_TabActive : ImGuiCol_Tab));
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ImGui::GetStyleColorVec4(ImGuiCol_TabHovered));
    if (ImGui::Button(tabs[i].title)) chosen = tabs[i].title;
    ImGui::PopStyleColor(2);
    record_tab(items, tabs[i].title, on);
  }
  ImGui::PopStyleVar();
  return chosen;
}

// The selected title alone, whole, on a menu button that lists the others (a narrow Inspector
// with large text, where the buttons would take a third of its height).
std::string draw_tab_menu(const std::vector<InspectorTab>& tabs, const std::string& selected,
                          std::vector<UiState::TabItem>& items) {
  std::string chosen = selected;
  const std::string label = "View: " + selected + " ▾";
  if (ImGui::Button(label.c_str())) ImGui::OpenPopup("##views");
  record_tab(items, selected.c_str(), true);
  if (ImGui::BeginPopup("##views")) {
    for (const InspectorTab& t : tabs)
      if (ImGui::Selectable(t.title, t.title == selected)) chosen = t.title;
    ImGui::EndPopup();
  }
  return chosen;
}

// The Inspector's tab selector: the buttons, or the menu where the buttons would take more than
// a third of the window's height. Returns the selected title; records what it drew.
std::string draw_tab_selector(const std::vector<InspectorTab>& tabs, const std::string& selected,
                              std::vector<UiState::TabItem>& items, bool& as_menu) {
  items.clear();
  const ImGuiStyle& st = ImGui::GetStyle();
  const float rows_h =
      static_cast<float>(tab_rows(tabs, ImGui::GetContentRegionAvail().x)) * (ImGui::GetFrameHeight() + st.ItemInnerSpacing.y);
  as_menu = rows_h > ImGui::GetWindowHeight() / 3;
  const std::string chosen = as_menu ? draw_tab_menu(tabs, selected, items) : draw_tab_buttons(tabs, selected, items);
  ImGui::Separator();
  return chosen;
}

// Floating windows (About, Files, the model builder, Errata, the lesson editor, dialogs) are
// kept inside the viewport: one that was last drawn past an edge, or larger than the screen,
// is moved and shrunk into it. The tiles, bars, menus, popups and tooltips place themselves.
void clamp_floating_windows(const UiState& ui) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const ImVec2 lo = vp->WorkPos, hi(vp->WorkPos.x + vp->WorkSize.x, vp->WorkPos.y + vp->WorkSize.y);
  const ImGuiWindowFlags placed = ImGuiWindowFlags_ChildWindow | ImGuiWindowFlags_Tooltip | ImGuiWindowFlags_ChildMenu |
                                  ImGuiWindowFlags_NoMove;
  for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows) {
    if (!w->WasActive || w->Hidden || (w->Flags & placed) || ui.tiles.count(w->Name)) continue;
    if ((w->Flags & ImGuiWindowFlags_Popup) && !(w->Flags & ImGuiWindowFlags_Modal)) continue;
    const ImVec2 size(std::min(w->Size.x, vp->WorkSize.x), std::min(w->Size.y, vp->WorkSize.y));
    const ImVec2 pos(std::clamp(w->Pos.x, lo.x, hi.x - size.x), std::clamp(w->Pos.y, lo.y, hi.y - size.y));
    if (size.x != w->Size.x || size.y != w->Size.y) ImGui::SetWindowSize(w, size);
    if (pos.x != w->Pos.x || pos.y != w->Pos.y) ImGui::SetWindowPos(w, pos);
  }
}

}  // namespace

// The fixed, projector-friendly layout (ImGui 1.86 has no docking): toolbar on top, the tiles
// below (normal_tiles, or presentation_tiles in presentation mode), above the lesson's caption
// box when one is shown.
void App::layout_windows() {
  clamp_floating_windows(ui);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const ImVec2 o = vp->WorkPos, sz = vp->WorkSize;
  const float fs = ImGui::GetFontSize();
  const float status_h = status_bar_height();  // a long notice's lines included: tiles end above it
  const float top_h = ToolbarPanel::height(*this, sz.x);
  const std::vector<std::string> shown = ui.presentation ? presentation_panels(*this) : std::vector<std::string>{};
  LessonFeature* lesson = feature<LessonFeature>();
  const float caption_h = lesson ? lesson->caption_height() : 0.0f;
  const float body_h = std::max(fs * 6, sz.y - top_h - status_h - caption_h);
  // In presentation mode only the shown panels; the user may still close one.
  auto visible = [&](const std::string& name, bool open) {
    return open && (!ui.presentation || std::find(shown.begin(), shown.end(), name) != shown.end());
  };
  // Presentation mode: the focal value's view stands in for the stop's Tensor, Attention and
  // LayerNorm tabs; the Inspector keeps the stop's other tabs (Sampling, Training, …).
  const bool focus = ui.presentation && lesson && lesson->focal_value(*this) != nullptr;
  auto in_inspector = [&](const PanelDecl& d) {
    return d.dock == Dock::Inspector && (!ui.presentation || visible(d.name, true)) && !(focus && d.focus_replaces);
  };
  const bool inspector_shown =
      !ui.presentation || std::any_of(shown.begin(), shown.end(), [&](const std::string& n) {
        const PanelDecl* d = find_panel(n);
        return d && in_inspector(*d);
      });
  const Tiles tiles = ui.presentation ? presentation_tiles(shown, focus, inspector_shown, top_h, sz.x, body_h)
                                      : normal_tiles(ui.show, top_h, sz.x, body_h);
  // Places a tiled window. A window still on the tile it was given last frame follows its
  // tile (the viewport, the font size or the toolbar's height may have changed) and draws no
  // background: the clear colour is its background, and on Mesa's software renderer every
  // full-screen layer costs ~13 ms a frame. A window the user moved or resized stays where the
  // user put it, with its own background, until View › Reset layout.
  auto place = [&](const char* name, float x, float y, float w, float h) -> ImGuiWindowFlags {
    const ImVec4 tile(o.x + x, o.y + y, w, h);
    const ImGuiWindow* win = ImGui::FindWindowByName(name);
    auto it = ui.tiles.find(name);
    const bool on_tile = ui.reset_layout || !win || it == ui.tiles.end() ||
                         (std::abs(win->Pos.x - it->second.x) < 1 && std::abs(win->Pos.y - it->second.y) < 1 &&
                          std::abs(win->Size.x - it->second.z) < 1 && std::abs(win->Size.y - it->second.w) < 1);
    if (!on_tile) return ImGuiWindowFlags_None;
    ImGui::SetNextWindowPos(ImVec2(tile.x, tile.y), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(tile.z, tile.w), ImGuiCond_Always);
    ui.tiles[name] = tile;
    return ImGuiWindowFlags_NoBackground;
  };
  // The toolbar always spans the top.
  ImGui::SetNextWindowPos(o, ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(sz.x, top_h), ImGuiCond_Always);
  ImGui::Begin("Toolbar", nullptr,
               ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoBackground);
  panels->toolbar.draw(*this);
  ImGui::End();

  // Presentation mode's tiles have no title bar: their height goes to what they show.
  const ImGuiWindowFlags bare = ui.presentation ? ImGuiWindowFlags_NoTitleBar : ImGuiWindowFlags_None;
  for (const PanelDecl& d : panel_registry()) {
    bool& open = ui.show.*d.open;
    auto it = tiles.panel.find(d.name);
    if (d.dock != Dock::Tile || it == tiles.panel.end() || it->second.w <= 0 || !visible(d.name, open)) continue;
    const Rect& r = it->second;
    if (ImGui::Begin(d.title, &open, place(d.title, r.x, r.y, r.w, r.h) | bare)) d.draw(*this, d);
    ImGui::End();
  }
  // The focal value of the lesson stop (presentation mode), large, beside the pseudocode.
  if (const Rect& fr = tiles.focus; fr.w > 0) {
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(fs * 0.4f, fs * 0.3f));
    ImGui::Begin("Focus", nullptr, place("Focus", fr.x, fr.y, fr.w, fr.h) | bare);
    lesson->draw_focus(*this);
    ImGui::End();
    ImGui::PopStyleVar();
  }
  // Inspector (right column): one window, a tab per view, so that a projector shows one
  // large view at a time (in presentation mode only the shown panels' tabs).
  // The tabs the model's output has (Sampling, Fill-in or Translation: its OutputKind, never its name).
  std::vector<InspectorTab> tabs;
  for (const PanelDecl& d : panel_registry()) {
    if (d.dock != Dock::Inspector || (d.output && *d.output != session.arch().output())) continue;
    bool& open = ui.show.*d.open;
    if (in_inspector(d)) tabs.push_back({d.title, &d, &open});
    else open = false;
  }
  // "open:NAME" selects a tab once (the last one asked for); the user's clicks decide after that.
  for (InspectorTab& t : tabs)
    if (std::exchange(*t.open, false)) ui.inspector_tab = t.title;
  if (std::none_of(tabs.begin(), tabs.end(), [&](const InspectorTab& t) { return t.title == ui.inspector_tab; }))
    ui.inspector_tab = tabs.empty() ? "" : tabs.front().title;
  ui.inspector_tab_items.clear();
  const Rect& ir = tiles.inspector;
  if (ir.w > 0 && inspector_shown && !tabs.empty()) {
    if (ImGui::Begin("Inspector", nullptr, place("Inspector", ir.x, ir.y, ir.w, ir.h) | bare)) {
      ui.inspector_tab = draw_tab_selector(tabs, ui.inspector_tab, ui.inspector_tab_items, ui.inspector_tab_menu);
      for (const InspectorTab& t : tabs)
        if (t.title == ui.inspector_tab) {
          ui.tab_drawn[t.title] = ui.frame_index;
          t.decl->draw(*this, *t.decl);
        }
    }
    ImGui::End();
  }
  // Floating windows, on top of the layout.
  for (const PanelDecl& d : panel_registry())
    if (d.dock == Dock::Floating && ui.show.*d.open) d.draw(*this, d);
  panels->welcome.draw(*this);  // first launch and Help › Welcome (it knows whether it is open)
  ui.reset_layout = false;
}

}  // namespace sf
