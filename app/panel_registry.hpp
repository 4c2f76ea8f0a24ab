// The panel registry: one declaration per panel. Everything that lists panels reads this table:
// PanelVisibility::names / by_name (--actions open:/close:, session files, lesson stops), the View
// menu, the tiles and the Inspector's tabs (App::layout_windows), the floating windows, and
// presentation mode's default panels.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "app/app.hpp"

namespace sf {

// Where a panel is drawn.
enum class Dock {
  Tile,       // a tiled window of the layout (pseudocode, call stack, variables)
  Inspector,  // a tab of the Inspector
  Floating,   // a window of its own, over the layout, while its flag is set
  Feature,    // a window its classroom feature draws itself (the lesson editor)
};

struct PanelDecl {
  const char* name;   // PanelVisibility name: open:/close:, session files, lesson stops, --dump-state
  const char* title;  // the window's or the Inspector tab's title
  Dock dock;
  bool in_view_menu;  // a View menu item (the others are opened from File, Help or Lesson)
  // The model output an Inspector tab needs (Sampling, Fill-in, Translation); none: always shown.
  std::optional<OutputKind> output;
  bool in_presentation;  // shown by presentation mode when no lesson stop chooses the panels
  bool focus_replaces;   // presentation mode's focal value view stands in for it (a heatmap view)
  bool PanelVisibility::*open;  // its flag (for an Inspector tab: select it once)
  // Draws it (called with its own declaration); nullptr for Dock::Feature.
  void (*draw)(App&, const PanelDecl&);
};

// Every panel, the Inspector's tabs in the order they are drawn.
const std::vector<PanelDecl>& panel_registry();
// The panel with that PanelVisibility name, or nullptr.
const PanelDecl* find_panel(const std::string& name);

}  // namespace sf
