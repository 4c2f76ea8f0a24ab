#include "app/widgets/heatmap_report.hpp"

#include <algorithm>

#include "imgui_internal.h"

namespace sf {

namespace {

struct Registry {
  int frame = -1;
  std::vector<HeatmapRecord> records;
};

Registry& registry() {
  static Registry r;
  return r;
}

bool contains(const ImRect& outer, const ImVec4& r) {
  return r.x >= outer.Min.x && r.y >= outer.Min.y && r.x + r.z <= outer.Max.x && r.y + r.w <= outer.Max.y;
}

bool overlaps(const ImRect& a, const ImVec4& r) {
  return r.x < a.Max.x && a.Min.x < r.x + r.z && r.y < a.Max.y && a.Min.y < r.y + r.w;
}

// Whether `w` is `of` or one of its parents (a window never covers what is drawn inside it).
bool is_ancestor(const ImGuiWindow* w, const ImGuiWindow* of) {
  for (; of; of = of->ParentWindow)
    if (of == w) return true;
  return false;
}

}  // namespace

void record_heatmap(HeatmapRecord r) {
  Registry& reg = registry();
  const int frame = ImGui::GetFrameCount();
  if (reg.frame != frame) {
    reg.records.clear();
    reg.frame = frame;
  }
  reg.records.push_back(std::move(r));
}

std::vector<HeatmapRecord> heatmaps_drawn() {
  const Registry& reg = registry();
  return reg.frame == ImGui::GetFrameCount() ? reg.records : std::vector<HeatmapRecord>{};
}

bool fully_visible(const HeatmapRecord& r) {
  if (r.clipped || !r.window) return false;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  if (!contains(ImRect(vp->Pos, ImVec2(vp->Pos.x + vp->Size.x, vp->Pos.y + vp->Size.y)), r.rect)) return false;
  // After Render, g.Windows runs from the back to the front: any window after r's that is shown
  // and overlaps it is drawn over it.
  const ImVector<ImGuiWindow*>& windows = ImGui::GetCurrentContext()->Windows;
  const auto at = std::find(windows.begin(), windows.end(), r.window);
  if (at == windows.end()) return false;
  for (auto it = at + 1; it != windows.end(); ++it) {
    const ImGuiWindow* w = *it;
    if (!w->Active || w->Hidden || (w->Flags & ImGuiWindowFlags_Tooltip) || is_ancestor(w, r.window)) continue;
    if (overlaps(ImRect(w->Pos, ImVec2(w->Pos.x + w->Size.x, w->Pos.y + w->Size.y)), r.rect)) return false;
  }
  return true;
}

}  // namespace sf
