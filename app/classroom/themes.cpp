#include "app/classroom/themes.hpp"

#include "imgui.h"

namespace sf {

void apply_high_contrast(ImGuiStyle& style) {
  const ImVec4 black(0, 0, 0, 1), white(1, 1, 1, 1), yellow(1, 0.92f, 0, 1), dim_yellow(0.55f, 0.5f, 0, 1),
      grey(0.6f, 0.6f, 0.6f, 1), dark(0.12f, 0.12f, 0.12f, 1);
  ImVec4* c = style.Colors;
  for (int i = 0; i < ImGuiCol_COUNT; ++i) c[i] = black;
  c[ImGuiCol_Text] = white;
  c[ImGuiCol_TextDisabled] = grey;
  c[ImGuiCol_Border] = white;
  c[ImGuiCol_BorderShadow] = ImVec4(0, 0, 0, 0);
  c[ImGuiCol_FrameBg] = dark;
  c[ImGuiCol_FrameBgHovered] = dim_yellow;
  c[ImGuiCol_FrameBgActive] = dim_yellow;
  c[ImGuiCol_TitleBgActive] = dark;
  c[ImGuiCol_MenuBarBg] = black;
  c[ImGuiCol_ScrollbarBg] = black;
  c[ImGuiCol_ScrollbarGrab] = grey;
  c[ImGuiCol_ScrollbarGrabHovered] = yellow;
  c[ImGuiCol_ScrollbarGrabActive] = yellow;
  c[ImGuiCol_CheckMark] = yellow;
  c[ImGuiCol_SliderGrab] = yellow;
  c[ImGuiCol_SliderGrabActive] = white;
  c[ImGuiCol_Button] = dark;
  c[ImGuiCol_ButtonHovered] = dim_yellow;
  c[ImGuiCol_ButtonActive] = yellow;
  c[ImGuiCol_Header] = dim_yellow;
  c[ImGuiCol_HeaderHovered] = dim_yellow;
  c[ImGuiCol_HeaderActive] = yellow;
  c[ImGuiCol_Separator] = white;
  c[ImGuiCol_SeparatorHovered] = yellow;
  c[ImGuiCol_SeparatorActive] = yellow;
  c[ImGuiCol_ResizeGrip] = grey;
  c[ImGuiCol_ResizeGripHovered] = yellow;
  c[ImGuiCol_ResizeGripActive] = yellow;
  c[ImGuiCol_Tab] = dark;
  c[ImGuiCol_TabHovered] = dim_yellow;
  c[ImGuiCol_TabActive] = dim_yellow;
  c[ImGuiCol_TabUnfocused] = dark;
  c[ImGuiCol_TabUnfocusedActive] = dim_yellow;
  c[ImGuiCol_PlotLines] = yellow;
  c[ImGuiCol_PlotLinesHovered] = white;
  c[ImGuiCol_PlotHistogram] = yellow;
  c[ImGuiCol_PlotHistogramHovered] = white;
  c[ImGuiCol_TableHeaderBg] = dark;
  c[ImGuiCol_TableBorderStrong] = white;
  c[ImGuiCol_TableBorderLight] = grey;
  c[ImGuiCol_TableRowBgAlt] = ImVec4(1, 1, 1, 0.08f);
  c[ImGuiCol_TextSelectedBg] = ImVec4(1, 0.92f, 0, 0.45f);
  c[ImGuiCol_DragDropTarget] = yellow;
  c[ImGuiCol_NavHighlight] = yellow;
  c[ImGuiCol_NavWindowingHighlight] = yellow;
  c[ImGuiCol_NavWindowingDimBg] = ImVec4(0, 0, 0, 0.6f);
  c[ImGuiCol_ModalWindowDimBg] = ImVec4(0, 0, 0, 0.6f);
  style.WindowBorderSize = 2.0f;
  style.ChildBorderSize = 2.0f;
  style.PopupBorderSize = 2.0f;
  style.FrameBorderSize = 1.5f;
  style.TabBorderSize = 1.5f;
}

}  // namespace sf
