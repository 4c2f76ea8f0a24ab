// Widgets whose labels are shown whole at any panel width. ImGui draws a checkbox's, radio
// button's or slider's label on one line to the right of the widget and cuts it at the window's
// edge; these helpers wrap the label instead, or move it above the widget when it does not fit
// beside it.
#pragma once
#include <algorithm>
#include <initializer_list>
#include <string>

#include "app/mathtext.hpp"
#include "app/widgets/flow.hpp"
#include "imgui.h"

namespace sf {

// The label ImGui shows for `label`: the text before a "##id" suffix.
inline std::string shown_label(const char* label) {
  const std::string s(label);
  return s.substr(0, s.find("##"));
}

// The width of a checkbox or radio button with `label` on one line: its box, the gap, the text.
inline float toggle_width(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}

// The label of a toggle, after its box, wrapped at the window's edge; clicking it counts as
// clicking the box. Returns whether it was clicked.
inline bool toggle_text(const char* label) {
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(shown_label(label).c_str());
  ImGui::PopTextWrapPos();
  return ImGui::IsItemClicked();
}

// A checkbox whose label wraps at the window's edge. `label` may end in "##id".
inline bool wrapped_checkbox(const char* label, bool* v) {
  bool changed = ImGui::Checkbox(("##" + std::string(label)).c_str(), v);
  if (toggle_text(label)) *v = !*v, changed = true;
  return changed;
}

// A radio button whose label wraps at the window's edge; `id` is its ImGui ID ("##…").
inline bool wrapped_radio(const char* id, const std::string& label, bool active) {
  const bool clicked = ImGui::RadioButton(id, active);
  return toggle_text(label.c_str()) || clicked;
}

// A radio button that goes on the current line when it fits there whole, else on the next.
inline bool radio_in_row(const char* label, int* v, int value, bool first) {
  if (!first) same_line_if_fits(toggle_width(label));
  return ImGui::RadioButton(label, v, value);
}

// The width of a `w`-wide slider or input field with `label` beside it.
inline float field_width(const char* label, float w) {
  return w + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}

// Prepares the next slider or input field, `w` wide, labelled `label` (maybe with "##id"): when
// the field and its label fit on the line, ImGui draws the label beside it as usual; else the
// label goes above it, wrapped, and the field takes at most the line's width. Returns the label to
// give the widget.
inline std::string fitted_label(const char* label, float w) {
  const float avail = ImGui::GetContentRegionAvail().x;
  if (field_width(label, w) <= avail) {
    ImGui::SetNextItemWidth(w);
    return label;
  }
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(shown_label(label).c_str());
  ImGui::PopTextWrapPos();
  ImGui::SetNextItemWidth(std::min(w, ImGui::GetContentRegionAvail().x));
  return "##" + std::string(label);
}

// A line of paper notation in phrases, each on the current line when it fits there whole, else
// on the next: a long caption wraps between phrases instead of being cut at the window's edge.
inline void math_phrases(const Fonts& f, std::initializer_list<std::string> phrases, ImU32 color) {
  bool first = true;
  for (const std::string& p : phrases) {
    if (!first) same_line_if_fits(math_text_size(f, p).x);
    math_text(f, p, color);
    first = false;
  }
}

}  // namespace sf
