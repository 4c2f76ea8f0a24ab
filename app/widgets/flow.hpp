// Laying items out in a row that wraps: the next item goes on the current line when it fits
// there, else on a new one (a long row is never cut at the window's edge).
#pragma once
#include "imgui.h"

namespace sf {

// Puts the next item (`w` wide) on the current line when it fits there, else on a new line.
inline void same_line_if_fits(float w) {
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w <= right) ImGui::SameLine();
}

// The width of a button labelled `label`.
inline float button_width(const char* label) {
  return ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2.0f;
}

}  // namespace sf
