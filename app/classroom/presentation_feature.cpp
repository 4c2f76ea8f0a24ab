#include "app/classroom/presentation_feature.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "app/app.hpp"
#include "app/classroom/lesson_feature.hpp"
#include "app/panel_registry.hpp"
#include "imgui.h"

namespace sf {

std::vector<std::string> presentation_panels(const App& app) {
  if (const auto* lesson = app.feature<LessonFeature>())
    if (const LessonStop* st = lesson->current_stop()) return st->panels;
  std::vector<std::string> out;
  for (const PanelDecl& d : panel_registry())
    if (d.in_presentation) out.emplace_back(d.name);
  return out;
}

void PresentationFeature::set(App& app, bool on) {
  if (on == app.ui.presentation) return;
  Settings& s = app.settings;
  if (on) {
    font_px_ = s.font_px, high_contrast_ = s.high_contrast, colorblind_ = s.colorblind;
    s.font_px = std::clamp(std::round(font_px_ * 1.65f), 28.0f, 64.0f);  // 17 px → 28 px
    s.high_contrast = s.colorblind = true;
    // No lesson stop: the registry's presentation panels (the stop's panels are already open).
    if (!app.feature<LessonFeature>() || !app.feature<LessonFeature>()->current_stop())
      for (const std::string& n : presentation_panels(app)) *app.ui.show.by_name(n) = true;
  } else {
    s.font_px = font_px_, s.high_contrast = high_contrast_, s.colorblind = colorblind_;
  }
  app.ui.presentation = on;
  app.ui.font_dirty = true;
  app.ui.reset_layout = true;
  app.notify(on ? "Presentation mode (F6 or Esc leaves it)" : "Presentation mode off");
}

void PresentationFeature::view_menu(App& app) {
  ImGui::Separator();
  if (ImGui::MenuItem("Presentation", "F6", app.ui.presentation)) set(app, !app.ui.presentation);
}

void PresentationFeature::shortcuts(App& app) {
  if (ImGui::IsKeyPressed(GLFW_KEY_F6, false)) set(app, !app.ui.presentation);
  else if (app.ui.presentation && ImGui::IsKeyPressed(GLFW_KEY_ESCAPE, false) && !ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId))
    set(app, false);
}

// The pointer, ringed so that the back of the room sees where the teacher points.
void PresentationFeature::overlay(App& app) {
  if (!app.ui.presentation) return;
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (!ImGui::IsMousePosValid(&m)) return;
  const float r = ImGui::GetFontSize() * 1.1f;
  ImDrawList* dl = ImGui::GetForegroundDrawList();
  dl->AddCircleFilled(m, r, IM_COL32(255, 220, 0, 70), 40);
  dl->AddCircle(m, r, IM_COL32(255, 220, 0, 230), 40, 4.0f);
}

ActionResult PresentationFeature::action(App& app, const std::string& verb, const std::string& arg, std::string& error) {
  if (verb != "presentation") return ActionResult::NotMine;
  if (arg != "on" && arg != "off") return error = "presentation takes on or off", ActionResult::Failed;
  set(app, arg == "on");
  return ActionResult::Done;
}

void PresentationFeature::dump(const App& app, nlohmann::ordered_json& j) const {
  j["presentation"] = {{"on", app.ui.presentation},
                       {"font_px", app.settings.font_px},
                       {"high_contrast", app.settings.high_contrast},
                       {"colorblind", app.settings.colorblind},
                       {"panels_shown", app.ui.presentation ? presentation_panels(app) : std::vector<std::string>{}}};
}

std::unique_ptr<Feature> make_presentation_feature() { return std::make_unique<PresentationFeature>(); }

}  // namespace sf
