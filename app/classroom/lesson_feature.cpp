#include "app/classroom/lesson_feature.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/app.hpp"
#include "app/panel_registry.hpp"
#include "app/classroom/caption.hpp"
#include "app/logic/session_state.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/training_panel.hpp"
#include "app/panels/welcome_panel.hpp"
#include "imgui.h"

namespace sf {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// A panel name no PanelVisibility knows, in any stop of f: the message naming the stop, or "".
std::string unknown_panel(const LessonPlayer& p) {
  const auto& names = PanelVisibility::names();
  for (size_t n = 0; n < p.size(); ++n)
    for (const auto& name : p.lesson().stops[n].panels)
      if (!contains(names, name)) {
        std::string known;
        for (const auto& k : names) known += (known.empty() ? "" : ", ") + k;
        return stop_heading(p, n) + ": there is no panel \"" + name + "\" (the panels: " + known + ")";
      }
  return "";
}

// The session as it is now, as a recorded lesson's starting state (the model by absolute path:
// the lesson is saved elsewhere later).
SessionState state_now(const App& app) {
  SessionState st = capture_session(app.session);
  if (!st.model.path.empty()) st.model.path = std::filesystem::absolute(st.model.path).string();
  return st;
}

size_t stop_number(const std::string& arg, size_t count, std::string& error) {
  try {
    const long n = std::stol(arg);
    if (n >= 1 && static_cast<size_t>(n) <= count) return static_cast<size_t>(n - 1);
  } catch (...) {
  }
  error = "the lesson's stops are numbered 1 to " + std::to_string(count) + " (got \"" + arg + "\")";
  return SIZE_MAX;
}

}  // namespace

std::vector<std::string> LessonFeature::open_panels(const App& app) const {
  std::vector<std::string> out;
  for (const PanelDecl& d : panel_registry())
    if (d.dock == Dock::Tile && app.ui.show.*d.open) out.push_back(d.name);
  auto shown = [&](const std::string& title) {
    auto it = app.ui.tab_drawn.find(title);
    return it != app.ui.tab_drawn.end() && it->second + 1 >= app.ui.frame_index;
  };
  for (const PanelDecl& d : panel_registry())
    if (d.dock == Dock::Inspector && shown(d.title)) out.push_back(d.name);
  return out;
}

bool LessonFeature::open(App& app, const std::string& name, std::string& error) {
  const std::string path = find_lesson(name);
  if (path.empty()) {
    error = "no lesson \"" + name + "\": give a .stepformer file's path or a shipped lesson's name (";
    for (const auto& p : shipped_lessons()) error += std::filesystem::path(p).stem().string() + " ";
    error.back() = ')';
    return false;
  }
  LessonPlayer next;
  if (!next.open(path, error)) return false;
  if (std::string bad = unknown_panel(next); !bad.empty()) return error = bad, false;
  player_ = std::move(next);
  selected_ = 0;
  welcome_panel(app).show(false);  // the lesson takes the screen (also when it opens at a first launch)
  go(app, 0, error);  // a stop that does not resolve still opens the lesson (its message shows)
  error.clear();
  return true;
}

bool LessonFeature::go(App& app, size_t n, std::string& error) {
  // A training stop: the Training tab traces one update of Algorithm 13; its padding view shows
  // the minibatch of the last practical update, so the tab takes one first if it has none.
  const TrainingTracer training = [&app](std::string& e) {
    if (training_panel(app).last_minibatch().B == 0 && !app.apply_action("train-step:1", e)) return false;
    return app.trace_training_update(e);
  };
  const bool ok = player_.go(app.session, n, training, error);
  if (const LessonStop* st = player_.current_stop()) {
    for (const auto& name : PanelVisibility::names())
      if (name != "lesson") *app.ui.show.by_name(name) = contains(st->panels, name);
    if (!st->selected_value.empty()) app.ui.selected_value = st->selected_value;
  }
  app.ui.viewed_event = SIZE_MAX;
  if (app.ui.presentation) app.ui.reset_layout = true;
  selected_ = n;
  // The caption's first line is the stop's heading; in presentation mode the status bar does not
  // repeat it (a second line there would take the height the focal value needs).
  if (ok) app.notify(app.ui.presentation ? "" : stop_heading(player_, n));
  else app.notify(error, true);
  return ok;
}

void LessonFeature::add_stop_here(App& app, std::string title, std::string note) {
  if (!player_.active()) player_.record(state_now(app), "Untitled lesson");
  const Session& s = app.session;
  LessonStop st;
  st.cursor = cursor_ref(s.trace(), s.cursor());
  st.title = title.empty() ? describe_event(s.current()) : std::move(title);
  st.note = std::move(note);
  st.panels = open_panels(app);
  st.selected_value = app.ui.selected_value;
  // What changed since the stop before it (model, prompt, context, run) goes into the stop.
  const SessionState now = state_now(app);
  const StopSetup before = player_.size() ? player_.setup_for(player_.current() < player_.size() ? player_.current() : player_.size() - 1)
                                          : StopSetup{now.model, now.prompt, now.context, now.run, now.image};
  if (now.model.path != player_.model_file(before.model)) st.model = now.model;
  if (now.prompt != before.prompt) st.prompt = now.prompt;
  if (now.context != before.context) st.context = now.context;
  if (now.image && (!before.image || now.image->pixels != before.image->pixels)) st.image = now.image;
  if (now.run.kind != before.run.kind || now.run.generate != before.run.generate ||
      now.run.translate != before.run.translate)
    st.run = now.run;
  player_.add(std::move(st));
  selected_ = player_.current();
  app.notify("Added " + stop_heading(player_, player_.current()));
}

bool LessonFeature::save(App& app, const std::string& path, std::string& error) {
  if (!player_.active()) return error = "no lesson to save: Lesson › Add stop here… starts one", false;
  if (!player_.save(path, error)) return false;
  app.notify("Saved the lesson (" + std::to_string(player_.size()) + " stops) to " + path);
  return true;
}

void LessonFeature::top_menu(App& app) {
  if (!ImGui::BeginMenu("Lesson")) return;
  if (!shipped_read_) {
    shipped_read_ = true;
    for (const auto& p : shipped_lessons()) {
      std::string title = std::filesystem::path(p).stem().string();
      try {
        title = load_session(p).title;
      } catch (const std::exception&) {
        title += " (unreadable)";
      }
      shipped_.emplace_back(p, title);
    }
  }
  std::string error;
  if (ImGui::BeginMenu("Shipped lessons", !shipped_.empty())) {
    for (size_t i = 0; i < shipped_.size(); ++i)
      if (ImGui::MenuItem((std::to_string(i + 1) + ". " + shipped_[i].second).c_str()) &&
          !open(app, shipped_[i].first, error))
        app.notify(error, true);
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Open lesson…")) open_open_ = true;
  ImGui::Separator();
  const bool playing = player_.active() && player_.size() > 0;
  const size_t cur = player_.current();
  if (ImGui::MenuItem("Next stop", "PageDown", false, playing && (cur >= player_.size() || cur + 1 < player_.size())))
    go(app, cur >= player_.size() ? 0 : cur + 1, error);
  if (ImGui::MenuItem("Previous stop", "PageUp", false, playing && cur < player_.size() && cur > 0)) go(app, cur - 1, error);
  ImGui::Separator();
  if (ImGui::MenuItem("Add stop here…")) {
    add_open_ = true;
    add_title_ = describe_event(app.session.current());
    add_note_.clear();
  }
  ImGui::MenuItem("Edit stops…", nullptr, &app.ui.show.lesson, player_.active());
  if (ImGui::MenuItem("Save lesson", nullptr, false, playing && !player_.path().empty()) &&
      !save(app, player_.path(), error))
    app.notify(error, true);
  if (ImGui::MenuItem("Save lesson as…", nullptr, false, playing)) {
    save_open_ = true;
    path_buf_ = player_.path().empty() ? (std::filesystem::current_path() / "lesson.stepformer").string() : player_.path();
  }
  ImGui::Separator();
  if (ImGui::MenuItem("Stop playing", nullptr, false, player_.active())) player_.close();
  ImGui::EndMenu();
}

const Value* LessonFeature::focal_value(const App& app) const {
  const LessonStop* st = current_stop();
  if (!st) return nullptr;
  const size_t k = app.shown_event();
  return find_in_scope(app, k, focal_value_name(app, st->focus, k));
}

void LessonFeature::draw_focus(App& app) {
  if (const Value* v = focal_value(app)) {
    focus_.draw(app, app.shown_event(), *v);
    focus_frame_ = app.ui.frame_index;
  }
}

void LessonFeature::shortcuts(App& app) {
  if (!player_.active() || player_.size() == 0) return;
  if (current_stop() && ImGui::IsKeyPressed(GLFW_KEY_F7, false)) caption_collapsed_ = !caption_collapsed_;
  const size_t cur = player_.current();
  std::string error;
  if (ImGui::IsKeyPressed(GLFW_KEY_PAGE_DOWN, false)) {
    if (cur >= player_.size()) go(app, 0, error);
    else if (cur + 1 < player_.size()) go(app, cur + 1, error);
    else app.notify("The last stop of the lesson (PageUp goes back)");
  }
  if (ImGui::IsKeyPressed(GLFW_KEY_PAGE_UP, false)) {
    if (cur < player_.size() && cur > 0) go(app, cur - 1, error);
    else app.notify("The first stop of the lesson (PageDown goes on)");
  }
}

void LessonFeature::overlay(App& app) {
  draw_dialogs(app);
  draw_editor(app);
  caption_h_ = 0;
  if (const LessonStop* st = current_stop())
    caption_h_ = draw_caption(app, {stop_heading(player_, player_.current()), st->note, player_.error()}, caption_collapsed_);
}

ActionResult LessonFeature::action(App& app, const std::string& verb, const std::string& arg, std::string& error) {
  auto result = [](bool ok) { return ok ? ActionResult::Done : ActionResult::Failed; };
  const size_t count = player_.size();
  if (verb == "lesson-open") return result(open(app, arg, error));
  if (verb == "lesson-next" || verb == "lesson-prev") {
    if (!player_.active() || count == 0) return error = "no lesson is playing (lesson-open:NAME first)", ActionResult::Failed;
    const size_t cur = player_.current();
    const size_t to = verb == "lesson-next" ? (cur >= count ? 0 : std::min(cur + 1, count - 1)) : (cur < count && cur > 0 ? cur - 1 : 0);
    return result(go(app, to, error));
  }
  if (verb == "lesson-go") {
    const size_t n = stop_number(arg, count, error);
    return n == SIZE_MAX ? ActionResult::Failed : result(go(app, n, error));
  }
  if (verb == "lesson-add-stop") {
    add_stop_here(app, "", arg);
    return ActionResult::Done;
  }
  if (verb == "lesson-save") return result(save(app, arg, error));
  if (verb == "lesson-move") {
    const size_t colon = arg.find(':');
    if (colon == std::string::npos) return error = "lesson-move needs FROM:TO (stop numbers, 1-based)", ActionResult::Failed;
    const size_t from = stop_number(arg.substr(0, colon), count, error);
    const size_t to = from == SIZE_MAX ? SIZE_MAX : stop_number(arg.substr(colon + 1), count, error);
    return to == SIZE_MAX ? ActionResult::Failed : result(player_.move(from, to, error));
  }
  if (verb == "lesson-delete") {
    const size_t n = stop_number(arg, count, error);
    return n == SIZE_MAX ? ActionResult::Failed : result(player_.remove(n, error));
  }
  if (verb == "caption") {
    if (arg != "collapse" && arg != "expand") return error = "caption takes collapse or expand", ActionResult::Failed;
    caption_collapsed_ = arg == "collapse";
    return ActionResult::Done;
  }
  if (verb == "lesson-stop") {
    player_.close();
    return ActionResult::Done;
  }
  return ActionResult::NotMine;
}

void LessonFeature::dump(const App& app, nlohmann::ordered_json& j) const {
  const LessonStop* st = current_stop();
  const Value* focal = focal_value(app);
  const bool focus_drawn = focus_frame_ == app.ui.frame_index;
  const ImVec4& fr = focus_.rect();
  j["lesson"] = {{"active", player_.active()},
                 {"title", player_.lesson().title},
                 {"path", player_.path()},
                 {"stop", st ? player_.current() + 1 : 0},
                 {"stops", player_.size()},
                 {"stop_title", st ? st->title : ""},
                 {"note", st ? st->note : ""},
                 {"stop_panels", st ? st->panels : std::vector<std::string>{}},
                 {"resolved", st && player_.resolved()},
                 {"error", player_.error()},
                 {"caption_height", caption_h_},
                 {"caption_collapsed", caption_collapsed_},
                 // The focal value (its name; "" : none in scope) and, in presentation mode, its view.
                 {"focal_value", focal ? focal->name : ""},
                 {"focal_view", {{"drawn", focus_drawn},
                                 {"rect", {fr.x, fr.y, fr.z, fr.w}},
                                 {"whole", focus_drawn && focus_.whole()}}}};
}

std::unique_ptr<Feature> make_lesson_feature() { return std::make_unique<LessonFeature>(); }

}  // namespace sf
