#include "app/classroom/session_feature.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/app.hpp"
#include "app/panel_registry.hpp"
#include "app/classroom/lesson_feature.hpp"
#include "app/logic/session_run.hpp"
#include "app/logic/session_state.hpp"
#include "app/panels/all_panels.hpp"
#include "app/widgets/colormap.hpp"
#include "core/io/checkpoint.hpp"
#include "core/model/error.hpp"
#include "imgui.h"
#include "imgui_stdlib.h"

namespace sf {

namespace fs = std::filesystem;

namespace {

std::string theme_of(const Settings& s) { return s.high_contrast ? "high-contrast" : s.dark ? "dark" : "light"; }

// The file the open model was read from ("" : made in the app).
std::string model_file(const App& app) { return app.session.origin().path; }

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : sep) + p;
  return s;
}

// The open panels by PanelVisibility name: the tiles and windows open now, and the Inspector's
// shown tab (its flags only select a tab once: the tab drawn last is the one on screen).
std::vector<std::string> open_panels(const App& app) {
  std::string shown;
  size_t latest = 0;
  for (const PanelDecl& d : panel_registry())
    if (auto it = app.ui.tab_drawn.find(d.title);
        d.dock == Dock::Inspector && it != app.ui.tab_drawn.end() && it->second >= latest)
      latest = it->second, shown = d.name;
  std::vector<std::string> out;
  for (const PanelDecl& d : panel_registry())
    if (d.dock == Dock::Inspector ? d.name == shown : app.ui.show.*d.open) out.push_back(d.name);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Saving

SessionFile SessionFeature::capture(const App& app, const std::string& path, bool with_checksum) const {
  SessionFile f;
  SessionState& st = f.state;
  st = capture_session(app.session);
  const std::string model = model_file(app).empty() ? path + ".safetensors" : model_file(app);
  st.model.path = model_path_for(path, model, assets_dir());
  if (with_checksum) st.model.checksum = model_checksum(model);
  const TrainingPanel& tp = app.panels->training;
  st.training = {tp.task(), tp.mode() == TrainMode::Paper ? "paper" : "practical", static_cast<double>(tp.eta()),
                 tp.batch(), static_cast<uint64_t>(std::max(0, tp.seed()))};
  st.view.panels = open_panels(app);
  st.view.selected_value = app.ui.selected_value;
  st.view.theme = theme_of(app.settings);
  st.view.colorblind = app.settings.colorblind;
  st.view.font_px = app.settings.font_px;
  st.view.notation = notation_key(app.panels->notation.notation);
  return f;
}

std::string SessionFeature::unsaved_form(const App& app) const {
  SessionFile f = capture(app, path_, false);
  f.state.view.panels.clear();  // the layout selects a restored Inspector tab a frame later
  try {
    return session_to_json(f);
  } catch (const std::exception& ex) {  // a text that is not UTF-8 (a context typed by a script, a path)
    return std::string("(cannot be saved: ") + ex.what() + ")";
  }
}

bool SessionFeature::save(App& app, const std::string& path, std::string& error) {
  if (path.empty()) return error = "Save session needs a file name (e.g. ~/attention.stepformer)", false;
  try {
    std::string note;
    if (model_file(app).empty()) {  // made in the builder or trained here: the session needs its file
      const std::string beside = path + ".safetensors";
      save_checkpoint(beside, app.session.model(), {{"saved_with_session", fs::path(path).filename().string()}});
      note = "; the model, made in the app, is saved beside it as " + fs::path(beside).filename().string();
    }
    const SessionFile f = capture(app, path, true);
    save_session(path, f);
    path_ = path;
    saved_json_ = unsaved_form(app);
    last_error_.clear();
    remember(app, path);
    app.notify("Saved the session as " + path + note);
    return true;
  } catch (const std::exception& ex) {
    error = last_error_ = ex.what();
    app.notify("Could not save the session: " + error, true);
    return false;
  }
}

void SessionFeature::remember(App& app, const std::string& path) {
  std::error_code ec;
  const std::string p = fs::absolute(path, ec).lexically_normal().string();
  auto& r = app.settings.recent_sessions;
  r.erase(std::remove(r.begin(), r.end(), p), r.end());
  r.insert(r.begin(), p);
  if (r.size() > 8) r.resize(8);
}

// ---------------------------------------------------------------------------------------------
// Opening

bool SessionFeature::open(App& app, const std::string& path, std::string& error) {
  SessionFile f;
  try {
    f = load_session(path);
  } catch (const std::exception& ex) {
    error = last_error_ = ex.what();
    app.notify("Could not open the session: " + error + " (nothing changed)", true);
    return false;
  }
  if (f.is_lesson()) {
    LessonFeature* lessons = app.feature<LessonFeature>();
    if (lessons && lessons->open(app, path, error)) return remember(app, path), true;
    last_error_ = error;
    return false;
  }
  pending_ = std::move(f);
  pending_path_ = path;
  const std::string& named = pending_.state.model.path;
  pending_model_ = named.empty() ? assets_dir() + "/default.safetensors" : resolve_model_path(path, named, assets_dir());
  std::error_code ec;
  dialog_error_.clear();
  locate_buf_ = pending_model_;
  if (!fs::exists(pending_model_, ec)) {
    dialog_ = Dialog::Missing;
    app.notify("The model " + pending_model_ + " is missing: locate it, or cancel to keep what is open", true);
    return true;
  }
  const std::string& want = pending_.state.model.checksum;
  try {
    if (!want.empty() && model_checksum(pending_model_) != want) {
      dialog_ = Dialog::Changed;
      app.notify("The model " + pending_model_ + " has changed since the session was saved", true);
      return true;
    }
  } catch (const std::exception& ex) {
    error = last_error_ = ex.what();
    app.notify("Could not open the session: " + error, true);
    return false;
  }
  return apply(app, pending_model_, error);
}

bool SessionFeature::locate(App& app, const std::string& model, std::string& error) {
  if (dialog_ == Dialog::None) return error = "no session is waiting for its model (session-open first)", false;
  std::error_code ec;
  if (!fs::exists(model, ec)) return error = dialog_error_ = model + " does not exist", false;
  try {
    pending_.state.model = {model_path_for(pending_path_, model, assets_dir()), model_checksum(model)};
  } catch (const std::exception& ex) {
    return error = dialog_error_ = ex.what(), false;
  }
  return apply(app, model, error);
}

bool SessionFeature::open_anyway(App& app, std::string& error) {
  if (dialog_ != Dialog::Changed) return error = "no session is waiting with a changed model", false;
  try {
    pending_.state.model.checksum = model_checksum(pending_model_);
  } catch (const std::exception& ex) {
    return error = dialog_error_ = ex.what(), false;
  }
  return apply(app, pending_model_, error);
}

void SessionFeature::cancel(App& app) {
  if (dialog_ == Dialog::None) return;
  dialog_ = Dialog::None;
  pending_ = {};
  app.notify("Kept what was open; the session " + pending_path_ + " was not opened");
}

bool SessionFeature::apply(App& app, const std::string& file, std::string& error) {
  Session& s = app.session;
  std::error_code ec;
  const bool same_model = !model_file(app).empty() && fs::equivalent(model_file(app), file, ec);
  if (!same_model && !s.load_model(file, error)) {
    error = last_error_ = "could not open its model " + file + ": " + error;
    dialog_error_ = error;
    app.notify("Could not open the session: " + error + " (nothing changed)", true);
    return false;
  }
  dialog_ = Dialog::None;
  const SessionState& st = pending_.state;
  std::vector<std::string> notes = restore_session(s, st);
  // The Training tab's settings, only where they differ (configuring it builds the task's data).
  TrainingPanel& tp = app.panels->training;
  if (st.training.task != tp.task() && !tp.set_task(app, st.training.task, error))
    notes.push_back("The training task \"" + st.training.task + "\": " + error);
  const TrainMode mode = st.training.mode == "paper" ? TrainMode::Paper : TrainMode::Practical;
  if (mode != tp.mode()) tp.set_mode(app, mode);
  tp.set_rates(static_cast<float>(st.training.eta), st.training.batch, static_cast<int>(st.training.seed));
  if (st.run.kind == "training") {
    if (!app.trace_training_update(error)) notes.push_back("The training update could not be traced: " + error);
    else if (!place_cursor(s, st.cursor)) notes.push_back("The saved step is not in the traced update; the cursor is on line 1");
  }
  // The view.
  for (const std::string& n : PanelVisibility::names()) *app.ui.show.by_name(n) = false;
  for (const std::string& n : st.view.panels) {
    if (bool* p = app.ui.show.by_name(n)) *p = true;
    else notes.push_back("Unknown panel \"" + n + "\" ignored");
  }
  app.ui.selected_value = st.view.selected_value;
  app.settings.dark = st.view.theme != "light";
  app.settings.high_contrast = st.view.theme == "high-contrast";
  app.settings.colorblind = st.view.colorblind;
  app.settings.font_px = std::clamp(st.view.font_px, 10.0f, 48.0f);
  notation_from_key(st.view.notation, app.panels->notation.notation);
  app.ui.font_dirty = true;
  app.ui.reset_layout = true;
  app.ui.viewed_event = SIZE_MAX;
  path_ = pending_path_;
  saved_json_ = unsaved_form(app);  // as opened: not dirty
  last_error_.clear();
  remember(app, path_);
  pending_ = {};
  app.notify("Opened the session " + fs::path(path_).filename().string() +
                 (notes.empty() ? "" : ": " + join(notes, "; ")),
             !notes.empty());
  return true;
}

// ---------------------------------------------------------------------------------------------
// Menus, keys, dialogs

void SessionFeature::file_menu(App& app) {
  ImGui::Separator();
  std::string error;
  if (ImGui::MenuItem("Save session", "Ctrl+S")) {
    if (path_.empty()) path_dialog_ = PathDialog::Save;
    else save(app, path_, error);
  }
  if (ImGui::MenuItem("Save session as…")) path_dialog_ = PathDialog::Save;
  if (ImGui::MenuItem("Open session…", "Ctrl+Shift+O")) path_dialog_ = PathDialog::Open;
  if (ImGui::BeginMenu("Open recent session", !app.settings.recent_sessions.empty())) {
    for (const std::string& r : std::vector<std::string>(app.settings.recent_sessions))
      if (ImGui::MenuItem(r.c_str())) open(app, r, error);
    ImGui::EndMenu();
  }
  if (path_dialog_ != PathDialog::None && path_buf_.empty())
    path_buf_ = path_.empty() ? (fs::current_path() / "session.stepformer").string() : path_;
}

void SessionFeature::view_menu(App& app) {
  ImGui::Separator();
  if (ImGui::MenuItem("High-contrast theme", nullptr, app.settings.high_contrast)) {
    app.settings.high_contrast = !app.settings.high_contrast;
    app.ui.font_dirty = true;  // the style is applied again with the fonts
  }
  ImGui::MenuItem("Colour-blind palette", nullptr, &app.settings.colorblind);
}

void SessionFeature::shortcuts(App& app) {
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.KeyCtrl) return;
  std::string error;
  if (ImGui::IsKeyPressed(GLFW_KEY_S, false)) {
    if (path_.empty()) path_dialog_ = PathDialog::Save;
    else save(app, path_, error);
  }
  if (io.KeyShift && ImGui::IsKeyPressed(GLFW_KEY_O, false)) path_dialog_ = PathDialog::Open;
  if (path_dialog_ != PathDialog::None && path_buf_.empty())
    path_buf_ = path_.empty() ? (fs::current_path() / "session.stepformer").string() : path_;
}

void SessionFeature::overlay(App& app) {
  draw_path_dialog(app);
  draw_model_dialog(app);
}

// Save session as… / Open session…: a path, and the *.stepformer files in its folder.
void SessionFeature::draw_path_dialog(App& app) {
  const char* id = path_dialog_ == PathDialog::Save ? "Save session as##session" : "Open session##session";
  if (path_dialog_ != PathDialog::None && !ImGui::IsPopupOpen(id)) ImGui::OpenPopup(id);
  if (!ImGui::BeginPopupModal(id, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  const float F = ImGui::GetFontSize();
  ImGui::TextUnformatted("A *.stepformer file (JSON: the model, prompt, run, cursor, panels and theme):");
  ImGui::SetNextItemWidth(F * 36);
  const bool enter = ImGui::InputText("##path", &path_buf_, ImGuiInputTextFlags_EnterReturnsTrue);
  std::error_code ec;
  const fs::path folder = fs::path(path_buf_).parent_path();
  if (ImGui::BeginListBox("##files", ImVec2(F * 36, F * 8))) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(folder.empty() ? "." : folder, ec))
      if (e.path().extension() == ".stepformer") files.push_back(e.path().filename().string());
    std::sort(files.begin(), files.end());
    for (const std::string& name : files)
      if (ImGui::Selectable(name.c_str(), fs::path(path_buf_).filename() == name)) path_buf_ = (folder / name).string();
    if (files.empty()) ImGui::TextDisabled("no .stepformer file in %s", folder.string().c_str());
    ImGui::EndListBox();
  }
  if (path_dialog_ == PathDialog::Save && model_file(app).empty())
    ImGui::TextWrapped("The model was made in the app and has no file: it is saved beside the session as %s.safetensors.",
                       fs::path(path_buf_).filename().string().c_str());
  if (!dialog_error_.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.35f, 1), "%s", dialog_error_.c_str());
  std::string error;
  bool close = false;
  if (ImGui::Button(path_dialog_ == PathDialog::Save ? "Save" : "Open") || enter) {
    const bool ok = path_dialog_ == PathDialog::Save ? save(app, path_buf_, error) : open(app, path_buf_, error);
    dialog_error_ = ok ? "" : error;
    close = ok;
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) close = true;
  if (close) {
    path_dialog_ = PathDialog::None;
    path_buf_.clear();
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

// The model of the session being opened is missing or has changed.
void SessionFeature::draw_model_dialog(App& app) {
  const char* id = "The session's model##session-model";
  if (dialog_ != Dialog::None && !ImGui::IsPopupOpen(id)) ImGui::OpenPopup(id);
  if (!ImGui::BeginPopupModal(id, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  const float F = ImGui::GetFontSize();
  if (dialog_ == Dialog::Missing)
    ImGui::Text("The model %s is missing.", pending_model_.c_str());
  else
    ImGui::Text("The model %s has changed since the session was saved.", pending_model_.c_str());
  ImGui::TextDisabled("Session: %s", pending_path_.c_str());
  ImGui::TextUnformatted("Locate… the model file (or its folder):");
  ImGui::SetNextItemWidth(F * 36);
  ImGui::InputText("##locate", &locate_buf_);
  if (!dialog_error_.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.35f, 1), "%s", dialog_error_.c_str());
  std::string error;
  if (ImGui::Button("Locate…")) locate(app, locate_buf_, error);
  if (dialog_ == Dialog::Changed) {
    ImGui::SameLine();
    if (ImGui::Button("Open anyway")) open_anyway(app, error);
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) cancel(app);
  if (dialog_ == Dialog::None) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

// ---------------------------------------------------------------------------------------------
// Actions and --dump-state

ActionResult SessionFeature::action(App& app, const std::string& verb, const std::string& arg, std::string& error) {
  const auto result = [](bool ok) { return ok ? ActionResult::Done : ActionResult::Failed; };
  if (verb == "session-save") return result(save(app, arg.empty() ? path_ : arg, error));
  if (verb == "session-open") return result(open(app, arg, error));
  if (verb == "session-locate") return result(locate(app, arg, error));
  if (verb == "session-open-anyway") return result(open_anyway(app, error));
  if (verb == "session-cancel") {
    if (dialog_ == Dialog::None) return error = "no session is waiting for its model", ActionResult::Failed;
    cancel(app);
    return ActionResult::Done;
  }
  if (verb == "contrast" || verb == "palette") {
    const bool contrast = verb == "contrast";
    const char* on = contrast ? "on" : "colorblind";
    const char* off = contrast ? "off" : "standard";
    if (arg != on && arg != off)
      return error = verb + " is " + on + " or " + off, ActionResult::Failed;
    (contrast ? app.settings.high_contrast : app.settings.colorblind) = arg == on;
    app.ui.font_dirty = true;
    return ActionResult::Done;
  }
  return ActionResult::NotMine;
}

void SessionFeature::dump(const App& app, nlohmann::ordered_json& j) const {
  const char* dialogs[] = {"none", "missing", "changed"};
  bool dirty = false;
  if (!path_.empty()) dirty = unsaved_form(app) != saved_json_;
  const std::vector<std::string> panels = open_panels(app);
  j["session"] = {{"path", path_},
                  {"dirty", dirty},
                  {"last_error", last_error_},
                  {"dialog", dialogs[static_cast<int>(dialog_)]},
                  {"pending_model", dialog_ == Dialog::None ? "" : pending_model_},
                  {"recent", app.settings.recent_sessions},
                  {"panels", panels},
                  {"selected_value", app.ui.selected_value},
                  {"theme", theme_of(app.settings)},
                  {"notation", notation_key(app.panels->notation.notation)}};
  j["palette"] = heatmap_palette() == Palette::ColorBlind ? "colorblind" : "standard";
  j["high_contrast"] = app.settings.high_contrast || app.ui.presentation;
}

std::unique_ptr<Feature> make_session_feature() { return std::make_unique<SessionFeature>(); }

}  // namespace sf
