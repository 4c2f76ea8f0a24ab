// What ImGui drew in a frame, for the tests that look at the app the way a user does: the texts
// that lost pixels to clipping (--dump-state's "clipped_text") and the labelled widgets with their
// rectangles (the click-item:LABEL action), plus whether a rectangle is fully visible on screen.
//
// Debian's ImGui 1.86 is built without IMGUI_ENABLE_TEST_ENGINE, so it has no hooks to tell which
// widget is where. app/CMakeLists.txt links the app with the linker's --wrap on ImGui's
// text-drawing functions (ImDrawList::AddText, ImGui::RenderText, RenderTextClipped,
// RenderTextEllipsis): every text any widget or panel draws passes through ui_probe.cpp, which
// records it (when enabled) and then draws it unchanged.
#pragma once
#include <string>
#include <vector>

#include "imgui.h"
#include "imgui_internal.h"

namespace sf::ui_probe {

// A text drawn in the frame that does not show whole.
struct ClippedText {
  std::string window;  // the ImGui window it was drawn in
  std::string text;
  ImRect rect;         // where the whole text would be, in screen pixels
  ImRect clip;         // the clip rectangle it was drawn with
  bool ellipsis;       // ImGui shortened it with "…" (tab labels, table headers); else cut at `clip`
};

// A widget that drew a visible label (a button, menu item, menu, tab, checkbox, selectable…).
struct LabelledItem {
  ImGuiID window;      // its window's ImGuiWindow::ID
  std::string label;   // the label as shown: without a "##id" suffix
  ImRect rect;         // the widget's rectangle
  ImRect visible;      // the part of it inside its window's clip rectangle (empty: scrolled away)
};

// Off (the default), the wrappers only draw: a normal run and --bench pay one branch per text.
void set_enabled(bool on);
bool is_enabled();
// Forgets the records: call before each ImGui::NewFrame, so that they are one frame's.
void begin_frame();
const std::vector<ClippedText>& clipped_texts();
const std::vector<LabelledItem>& labelled_items();

// True when `r` (screen pixels, drawn in `window`) shows whole: inside the window's inner clip
// rectangle (its scrolling region, its parent's for a child window) and the main viewport, and
// no window in front of it overlaps it. Tooltips do not count: they follow the pointer.
bool fully_visible(const ImGuiWindow* window, const ImRect& r);

}  // namespace sf::ui_probe
