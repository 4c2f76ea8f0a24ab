// A table of two narrow label columns and two wide columns of bars (layer norm's m and v per token,
// Algorithm 14's p and q per token): scrolled, its header row kept in view.
#pragma once
#include "imgui.h"

namespace sf {

struct BarTableColumns {
  const char* label1;
  float width1;  // pixels
  const char* label2;
  float width2;
  const char* bars1;
  const char* bars2;
};

// Begins the table `id` of height `height` and draws its header row; false when it is not shown
// (then nothing is to be drawn and EndTable is not called).
inline bool begin_bar_table(const char* id, const BarTableColumns& c, float height) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable(id, 4, flags, ImVec2(0, height))) return false;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn(c.label1, ImGuiTableColumnFlags_WidthFixed, c.width1);
  ImGui::TableSetupColumn(c.label2, ImGuiTableColumnFlags_WidthFixed, c.width2);
  ImGui::TableSetupColumn(c.bars1, ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn(c.bars2, ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  return true;
}

}  // namespace sf
