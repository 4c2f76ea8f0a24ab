// Help › Welcome, and what a first launch shows: what Stepformer is in three sentences, three
// starting points of one click each (lesson 1; the first attention head with the Attention tab;
// training a model to sort), the five keys a newcomer needs, and "Show at start"
// (Settings::welcome_at_start).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "app/app.hpp"
#include "imgui.h"

namespace sf {

class WelcomePanel {
 public:
  // A starting point: its name in the action welcome:NAME, its button's label, a line that says
  // what the button does, and what it does (false with an error that says why not).
  struct Start {
    const char* name;
    const char* label;
    const char* what;
    bool (*run)(App& app, std::string& error);
  };
  // lesson, attention, train: the buttons for a model of architecture `arch`, in the order they are drawn.
  static const std::vector<Start>& starts(const std::string& arch);

  void draw(App& app);
  bool is_open() const { return open_; }
  // Opens the welcome in front of the other windows (or closes it).
  void show(bool on);
  // welcome:show, welcome:hide, or welcome:NAME of a starting point (its button); false with `error`.
  bool action(App& app, const std::string& arg, std::string& error);
  // Does what the starting point `name` says and closes the welcome; false with `error` (the
  // welcome stays open).
  bool start(App& app, const std::string& name, std::string& error);
  // Each button's rectangle (x, y, w, h) where it was last drawn, by the starting point's name.
  const std::map<std::string, ImVec4>& button_rects() const { return rects_; }
  // Whether everything it says was on screen when last drawn, with no scrolling.
  bool fits() const { return fits_; }

 private:
  void draw_starts(App& app);
  void draw_keys(const App& app) const;

  bool open_ = false;
  bool focus_ = false;  // bring the window to the front on its next frame
  std::map<std::string, ImVec4> rects_;
  bool fits_ = false;
};

// The App's welcome panel (defined in welcome_panel.cpp, where App::Panels is complete).
WelcomePanel& welcome_panel(App& app);
const WelcomePanel& welcome_panel(const App& app);

}  // namespace sf
