// Lessons: the Lesson menu (the shipped lessons, Open lesson…, Add stop here…, Edit stops…, Save),
// playback with PageDown / PageUp (each stop: its setup, cursor, panels and selected value) and
// the caption box with the stop's note. The headless part is app/logic/lesson_player.hpp.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/classroom/focus_view.hpp"
#include "app/feature.hpp"
#include "app/logic/lesson_player.hpp"

namespace sf {

class LessonFeature : public Feature {
 public:
  void top_menu(App& app) override;
  void shortcuts(App& app) override;
  void overlay(App& app) override;
  ActionResult action(App& app, const std::string& verb, const std::string& arg, std::string& error) override;
  void dump(const App& app, nlohmann::ordered_json& j) const override;

  const LessonPlayer& player() const { return player_; }
  // The stop on screen (nullptr: no lesson is playing, or none of its stops is shown yet).
  const LessonStop* current_stop() const { return player_.active() ? player_.current_stop() : nullptr; }
  // The caption box's height last frame (0: none shown), which the layout keeps free.
  float caption_height() const { return caption_h_; }
  // The caption shows its heading only (F7, its button, caption:collapse|expand).
  void set_caption_collapsed(bool on) { caption_collapsed_ = on; }
  bool caption_collapsed() const { return caption_collapsed_; }

  // The current stop's focal value (LessonStop::focus, else what its step bound) in scope at the
  // shown event; nullptr when no stop is shown or the value is not in scope.
  const Value* focal_value(const App& app) const;
  // Presentation mode's view of it, filling the current window (app/layout.cpp's "Focus" tile).
  void draw_focus(App& app);

  // Opens a lesson (a path or a shipped lesson's name) and shows its first stop.
  bool open(App& app, const std::string& name, std::string& error);
  // Shows stop n (0-based): its setup and cursor, exactly its panels, its selected value.
  bool go(App& app, size_t n, std::string& error);
  // Adds a stop at the cursor with the panels open now and the selected value (a new lesson
  // from the session as it is when none is being played or recorded).
  void add_stop_here(App& app, std::string title, std::string note);
  bool save(App& app, const std::string& path, std::string& error);

 private:
  void draw_editor(App& app);
  void draw_dialogs(App& app);
  // The panels open now, by PanelVisibility name: the tiles and the Inspector's shown tab.
  std::vector<std::string> open_panels(const App& app) const;

  LessonPlayer player_;
  float caption_h_ = 0;
  bool caption_collapsed_ = false;
  FocusView focus_;
  size_t focus_frame_ = SIZE_MAX;  // the frame the focal value was last drawn in
  // Dialogs: Add stop here…, Open lesson…, Save lesson as….
  bool add_open_ = false, open_open_ = false, save_open_ = false;
  std::string add_title_, add_note_, path_buf_;
  size_t selected_ = 0;  // the stop selected in the editor
  std::vector<std::pair<std::string, std::string>> shipped_;  // (path, title) of assets/lessons/*
  bool shipped_read_ = false;
};

std::unique_ptr<Feature> make_lesson_feature();

}  // namespace sf
