// The window layout (App::layout_windows): the tiles, the Inspector's tabs, the floating windows.
#include <cmath>

#include "app/app.hpp"
#include "app/feature.hpp"
#include "app/panels/all_panels.hpp"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {

// The fixed, projector-friendly layout (ImGui 1.86 has no docking): toolbar on top,
// pseudocode and call stack on the left, variables in the middle, the inspector on the right.
void App::layout_windows() {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const ImVec2 o = vp->WorkPos, sz = vp->WorkSize;
  const float fs = ImGui::GetFontSize();
  const float status_h = fs * 1.9f;
  const int errors = !session.prompt_error().empty() + !session.context_error().empty();
  const float top_h = fs * (4.6f + 1.4f * static_cast<float>(errors));
  const float body_h = sz.y - top_h - status_h;
  const float left_w = sz.x * 0.38f, mid_w = sz.x * 0.24f, right_w = sz.x - left_w - mid_w;
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

  if (ui.show.pseudocode) {
    const ImGuiWindowFlags f = place("Pseudocode", 0, top_h, left_w, body_h * 0.68f);
    if (ImGui::Begin("Pseudocode", &ui.show.pseudocode, f)) panels->pseudocode.draw(*this);
    ImGui::End();
  }
  if (ui.show.callstack) {
    const ImGuiWindowFlags f = place("Call stack", 0, top_h + body_h * 0.68f, left_w, body_h * 0.32f);
    if (ImGui::Begin("Call stack", &ui.show.callstack, f)) panels->callstack.draw(*this);
    ImGui::End();
  }
  // Variables panel (middle column). [panel registration: variables]
  if (ui.show.variables) {
    const ImGuiWindowFlags f = place("Variables", left_w, top_h, mid_w, body_h);
    if (ImGui::Begin("Variables", &ui.show.variables, f)) panels->variables.draw(*this);
    ImGui::End();
  }
  // Inspector (right column): one window, a tab per view, so that a projector shows one
  // large view at a time. [panel registration: inspector tabs]
  const ImGuiWindowFlags inspector_flags = place("Inspector", left_w + mid_w, top_h, right_w, body_h);
  if (ImGui::Begin("Inspector", nullptr, inspector_flags)) {
    if (ImGui::BeginTabBar("views")) {
      auto tab = [&](const char* label, bool& open, auto&& body) {
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
  ImGui::End();
  // Floating windows, on top of the layout.
  if (ui.show.files) panels->files.draw(*this);
  if (ui.show.about) panels->about.draw(*this);
  if (ui.show.builder) panels->builder.draw(*this);
  if (ui.show.errata) panels->errata.draw(*this);
  ui.reset_layout = false;
}

}  // namespace sf
