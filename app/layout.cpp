// The window layout (App::layout_windows): the tiles, the Inspector's tabs, the floating windows.
#include <algorithm>
#include <cmath>

#include "app/app.hpp"
#include "app/classroom/lesson_feature.hpp"
#include "app/classroom/presentation_feature.hpp"
#include "app/feature.hpp"
#include "app/panels/all_panels.hpp"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {

const std::vector<std::pair<const char*, const char*>>& inspector_tabs() {
  static const std::vector<std::pair<const char*, const char*>> t{
      {"Tensor", "tensor"},     {"Attention", "attention"},     {"LayerNorm", "layernorm"}, {"Sampling", "sampling"},
      {"Fill-in", "fillin"},    {"Translation", "translation"}, {"Tokenizer", "tokenizer"}, {"Notations", "notation"},
      {"Training", "training"}, {"GPU", "gpu"}};
  return t;
}

namespace {

struct Rect {
  float x = 0, y = 0, w = 0, h = 0;
};

// Where each tiled window goes; a window with w == 0 is not shown.
struct Tiles {
  Rect pseudocode, callstack, variables, inspector;
};

// The normal layout: pseudocode and call stack on the left, variables in the middle, the
// inspector on the right.
Tiles normal_tiles(float top, float width, float body_h) {
  const float left_w = width * 0.38f, mid_w = width * 0.24f, right_w = width - left_w - mid_w;
  return {{0, top, left_w, body_h * 0.68f},
          {0, top + body_h * 0.68f, left_w, body_h * 0.32f},
          {left_w, top, mid_w, body_h},
          {left_w + mid_w, top, right_w, body_h}};
}

// Presentation mode: the shown panels only, large. The pseudocode on the left (44%), the
// variables and call stack (when the stop names them) above the inspector on the right; the
// body stops above the lesson's caption box.
Tiles presentation_tiles(const std::vector<std::string>& shown, float top, float width, float body_h) {
  auto has = [&](const char* n) { return std::find(shown.begin(), shown.end(), n) != shown.end(); };
  const bool inspector = std::any_of(shown.begin(), shown.end(), [&](const std::string& n) {
    return n != "pseudocode" && n != "callstack" && n != "variables";
  });
  Tiles t;
  const bool right = inspector || has("variables") || has("callstack");
  const float left_w = has("pseudocode") ? (right ? width * 0.44f : width) : 0.0f;
  if (left_w > 0) t.pseudocode = {0, top, left_w, body_h};
  const float rw = width - left_w;
  float y = top;
  // The side panels' heights: what is left goes to the inspector.
  const float var_h = has("variables") ? body_h * (inspector ? 0.34f : has("callstack") ? 0.6f : 1.0f) : 0.0f;
  const float call_h = has("callstack") ? (inspector ? body_h * 0.22f : body_h - var_h) : 0.0f;
  if (var_h > 0) t.variables = {left_w, y, rw, var_h}, y += var_h;
  if (call_h > 0) t.callstack = {left_w, y, rw, call_h}, y += call_h;
  if (inspector) t.inspector = {left_w, y, rw, top + body_h - y};
  return t;
}

}  // namespace

// The fixed, projector-friendly layout (ImGui 1.86 has no docking): toolbar on top, the tiles
// below (normal_tiles, or presentation_tiles in presentation mode).
void App::layout_windows() {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const ImVec2 o = vp->WorkPos, sz = vp->WorkSize;
  const float fs = ImGui::GetFontSize();
  const float status_h = fs * 1.9f;
  const int errors = !session.prompt_error().empty() + !session.context_error().empty();
  const float top_h = fs * (4.6f + 1.4f * static_cast<float>(errors));
  const std::vector<std::string> shown = ui.presentation ? presentation_panels(*this) : std::vector<std::string>{};
  const LessonFeature* lesson = feature<LessonFeature>();
  const float caption_h = ui.presentation && lesson ? lesson->caption_height() : 0.0f;
  const float body_h = std::max(fs * 6, sz.y - top_h - status_h - caption_h);
  const Tiles tiles = ui.presentation ? presentation_tiles(shown, top_h, sz.x, body_h) : normal_tiles(top_h, sz.x, body_h);
  // In presentation mode only the shown panels; the user may still close one.
  auto visible = [&](const std::string& name, bool open) {
    return open && (!ui.presentation || std::find(shown.begin(), shown.end(), name) != shown.end());
  };
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

  auto tile = [&](const char* title, const char* name, const Rect& r, bool& open, auto&& body) {
    if (r.w <= 0 || !visible(name, open)) return;
    const ImGuiWindowFlags f = place(title, r.x, r.y, r.w, r.h);
    if (ImGui::Begin(title, &open, f)) body();
    ImGui::End();
  };
  tile("Pseudocode", "pseudocode", tiles.pseudocode, ui.show.pseudocode, [&] { panels->pseudocode.draw(*this); });
  tile("Call stack", "callstack", tiles.callstack, ui.show.callstack, [&] { panels->callstack.draw(*this); });
  // Variables panel (middle column). [panel registration: variables]
  tile("Variables", "variables", tiles.variables, ui.show.variables, [&] { panels->variables.draw(*this); });
  // Inspector (right column): one window, a tab per view, so that a projector shows one
  // large view at a time (in presentation mode only the shown panels' tabs).
  // [panel registration: inspector tabs]
  const Rect& ir = tiles.inspector;
  if (ir.w > 0 && ImGui::Begin("Inspector", nullptr, place("Inspector", ir.x, ir.y, ir.w, ir.h))) {
    if (ImGui::BeginTabBar("views")) {
      auto tab = [&](const char* label, bool& open, auto&& body) {
        std::string name;  // its PanelVisibility name
        for (const auto& [title, n] : inspector_tabs())
          if (std::string(title) == label) name = n;
        for (const auto& f : features)
          if (f->tab_title() && std::string(f->tab_title()) == label) name = f->tab_panel();
        if (ui.presentation && !visible(name, true)) return void(open = false);
        if (ImGui::BeginTabItem(label, nullptr, open ? ImGuiTabItemFlags_SetSelected : 0)) {
          ui.tab_drawn[label] = ui.frame_index;
          body();
          ImGui::EndTabItem();
        }
        open = false;  // "open:NAME" selects the tab once; the user's clicks decide after that
      };
      tab("Tensor", ui.show.tensor, [&] { panels->tensor.draw(*this); });
      tab("Attention", ui.show.attention, [&] { panels->attention.draw(*this); });
      tab("LayerNorm", ui.show.layernorm, [&] { panels->layernorm.draw(*this); });
      // The output tab the model's architecture has (never its name: its OutputKind).
      switch (session.arch().output()) {
        case OutputKind::Continuation:
          tab("Sampling", ui.show.sampling, [&] { panels->sampling.draw(*this); });
          break;
        case OutputKind::FillIn:
          tab("Fill-in", ui.show.fillin, [&] { panels->fillin.draw(*this); });
          break;
        case OutputKind::Translation:
          tab("Translation", ui.show.translation, [&] { panels->translation.draw(*this); });
          break;
      }
      tab("Tokenizer", ui.show.tokenizer, [&] { panels->tokenizer.draw(*this); });
      tab("Notations", ui.show.notation, [&] { panels->notation.draw(*this); });
      tab("Training", ui.show.training, [&] { panels->training.draw(*this); });
      tab("GPU", ui.show.gpu, [&] { panels->gpu.draw(*this); });
      for (auto& f : features)
        if (const char* title = f->tab_title())
          if (bool* open = ui.show.by_name(f->tab_panel())) tab(title, *open, [&] { f->draw_tab(*this); });
      ImGui::EndTabBar();
    }
  }
  if (ir.w > 0) ImGui::End();
  // Floating windows, on top of the layout.
  if (ui.show.files) panels->files.draw(*this);
  if (ui.show.about) panels->about.draw(*this);
  if (ui.show.builder) panels->builder.draw(*this);
  if (ui.show.errata) panels->errata.draw(*this);
  panels->welcome.draw(*this);  // first launch and Help › Welcome (it knows whether it is open)
  ui.reset_layout = false;
}

}  // namespace sf
