// A classroom feature of the app (sessions, lessons, presentation mode, experiments, study mode,
// export): what it adds to the menus, the keys, the scripted actions, the Inspector and
// --dump-state. App holds one of each (App::features); app.cpp calls every hook in order, so a
// feature lives in its own files and touches no other.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sf {

class App;
struct HeatmapMenuRequest;

// What a feature made of a scripted action (--actions VERB:ARG).
enum class ActionResult { NotMine, Done, Failed };

class Feature {
 public:
  virtual ~Feature() = default;
  virtual void file_menu(App&) {}   // items in File (after Open recent)
  virtual void run_menu(App&) {}    // items at the end of Run
  virtual void view_menu(App&) {}   // items in View (after the panels)
  virtual void top_menu(App&) {}    // a menu of its own on the menu bar (Lesson, Experiment)
  virtual void shortcuts(App&) {}   // keys, when no text field has the keyboard
  virtual void overlay(App&) {}     // after the layout: its own windows, captions, the pointer
  // After the frame is rendered into the back buffer (w × h pixels), before it is shown: reads
  // of the frame (exporting the window or a panel as PNG).
  virtual void after_render(App&, int w, int h) { (void)w, (void)h; }
  // An Inspector tab of its own: its PanelVisibility name (nullptr: none); its title is the
  // panel registry's (app/panel_registry.cpp).
  virtual const char* tab_panel() const { return nullptr; }
  virtual void draw_tab(App&) {}
  // Items in a heatmap's right-click menu (the request says which matrix and cell).
  virtual void heatmap_menu(App&, const HeatmapMenuRequest&) {}
  virtual ActionResult action(App&, const std::string& verb, const std::string& arg, std::string& error) {
    (void)verb, (void)arg, (void)error;
    return ActionResult::NotMine;
  }
  // Its state for tests (--dump-state), under its own key.
  virtual void dump(const App&, nlohmann::ordered_json&) const {}
};

}  // namespace sf
