// Laying items out in a row that wraps: the next item goes on the current line when it fits
// there, else on a new one (a long row is never cut at the window's edge).
#pragma once
#include <initializer_list>
#include <string>

#include "imgui.h"

namespace sf {

// Puts the next item (`w` wide) on the current line when it fits there, `spacing` after the last
// one (the style's item spacing when negative), else on a new line.
inline void same_line_if_fits(float w, float spacing = -1.0f) {
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  const float gap = spacing < 0 ? ImGui::GetStyle().ItemSpacing.x : spacing;
  if (ImGui::GetItemRectMax().x + gap + w <= right) ImGui::SameLine(0, gap);
}

// A side remark after the last item, dimmed: on its line when it fits, else on the next, wrapped
// at the window's edge.
inline void aside(const char* text) {
  same_line_if_fits(ImGui::CalcTextSize(text).x);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", text);
  ImGui::PopTextWrapPos();
}

// Status figures ("step 300", "loss 1.8151", …) after the last item, joined by " · ": each on the
// current line when it fits there, else on the next, so that no figure is split across lines.
inline void flow_figures(std::initializer_list<std::string> figures) {
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  bool first = true;
  for (const std::string& f : figures) {
    const std::string joined = first ? f : "· " + f;  // a figure that starts a line has no "· "
    const bool fits = ImGui::GetItemRectMax().x + gap + ImGui::CalcTextSize(joined.c_str()).x <= right;
    if (fits) ImGui::SameLine(0, gap);
    ImGui::TextUnformatted(fits ? joined.c_str() : f.c_str());
    first = false;
  }
}

// A dimmed line on its own, wrapped at the window's edge (e.g. what a section below a short header shows).
inline void wrapped_note(const char* text) {
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", text);
  ImGui::PopTextWrapPos();
}

// Text in `color`, wrapped at the window's edge.
inline void wrapped_colored(ImU32 color, const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, color);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

// The width of a button labelled `label`.
inline float button_width(const char* label) {
  return ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2.0f;
}

}  // namespace sf
