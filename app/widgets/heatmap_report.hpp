// The heatmaps drawn in the last frame, for --dump-state's "heatmaps" (app/state_dump.cpp): each
// heatmap() records itself here; the registry starts afresh with each frame.
#pragma once
#include <string>
#include <vector>

#include "imgui.h"

struct ImGuiWindow;

namespace sf {

struct HeatmapRecord {
  std::string value;         // the value's name (a thumbnail's: its variable's)
  ImVec4 rect;               // the whole heatmap on screen: x, y, w, h
  bool thumbnail = false;
  bool clipped = false;      // cut by its window's clip rectangle (scrolled out, a narrow column)
  ImGuiWindow* window = nullptr;  // the window it was drawn in (valid until the next frame)
  // The colour scale it used, and where the legend wrote its ends (full heatmaps only).
  float lo = 0, hi = 0;
  bool diverging = false;
  std::string lo_text, hi_text;
  ImVec4 lo_rect, hi_rect;
  // The token labels drawn on each axis ("" where an index has none or it was thinned out).
  std::vector<std::string> row_labels, col_labels;
  // Where token images were drawn in place of labels (x, y, w, h; all 0 where none), per index shown.
  std::vector<ImVec4> row_images, col_images;
};

// Records a heatmap drawn in this frame (dropping those of earlier frames).
void record_heatmap(HeatmapRecord r);
// The heatmaps drawn in the current frame (ImGui::GetFrameCount()).
std::vector<HeatmapRecord> heatmaps_drawn();
// Whether r is fully visible once the frame is drawn: not clipped, inside the main viewport and
// under no window drawn above its own (menus and the status bar included; tooltips not).
// Call after ImGui::Render, when the windows are in display order.
bool fully_visible(const HeatmapRecord& r);

}  // namespace sf
