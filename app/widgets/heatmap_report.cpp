#include "app/widgets/heatmap_report.hpp"

#include "app/ui_probe.hpp"
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

// Clipped by its table column or window (r.clipped), or not whole on screen and in front
// (ui_probe::fully_visible: the window's scrolling region, the viewport, the windows above it).
bool fully_visible(const HeatmapRecord& r) {
  if (r.clipped || !r.window) return false;
  return ui_probe::fully_visible(r.window, ImRect(r.rect.x, r.rect.y, r.rect.x + r.rect.z, r.rect.y + r.rect.w));
}

}  // namespace sf
