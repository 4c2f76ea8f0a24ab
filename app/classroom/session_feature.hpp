// Sessions (File › Save session / Open session, recent sessions, a missing or changed model)
// and the themes (View › High-contrast theme, Colour-blind palette). The format is
// core/io/session_file.hpp; the Session part of saving and opening is app/logic/session_state.hpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "app/feature.hpp"
#include "core/io/session_file.hpp"

namespace sf {

class SessionFeature : public Feature {
 public:
  void file_menu(App& app) override;
  void view_menu(App& app) override;
  void shortcuts(App& app) override;
  void overlay(App& app) override;
  ActionResult action(App& app, const std::string& verb, const std::string& arg, std::string& error) override;
  void dump(const App& app, nlohmann::ordered_json& j) const override;

  // Writes what is on screen to `path` (a model made in the app is saved beside it first, as
  // <path>.safetensors). False with `error`, nothing changed, when it cannot.
  bool save(App& app, const std::string& path, std::string& error);
  // Reads `path` and, when its model is there and unchanged, opens it as it was saved; a missing
  // or changed model raises the dialog (answered by locate, open_anyway or cancel). A lesson file
  // is played (Lesson › Open). False with `error` (also in the notice bar) when the file cannot be
  // read: what is open stays.
  bool open(App& app, const std::string& path, std::string& error);
  // The dialog's answers: the model is at `model` (the session remembers the new path), open with
  // the changed model, or keep what is open.
  bool locate(App& app, const std::string& model, std::string& error);
  bool open_anyway(App& app, std::string& error);
  void cancel(App& app);

  enum class Dialog { None, Missing, Changed };
  Dialog dialog() const { return dialog_; }
  const std::string& path() const { return path_; }

 private:
  // Opens pending_ with its model at model_file (checked already).
  bool apply(App& app, const std::string& model_file, std::string& error);
  SessionFile capture(const App& app, const std::string& path, bool with_checksum) const;
  // What "dirty" compares: the session as it would be saved to path_, without the checksum and
  // the open panels; never throws (a state that cannot be saved gives the reason instead).
  std::string unsaved_form(const App& app) const;
  void remember(App& app, const std::string& path);
  void draw_path_dialog(App& app);
  void draw_model_dialog(App& app);

  std::string path_;        // the session file open now ("" : none)
  std::string saved_json_;  // unsaved_form() when last saved or opened, for "dirty"
  std::string last_error_;
  Dialog dialog_ = Dialog::None;
  SessionFile pending_;           // the session waiting for the model dialog
  std::string pending_path_;      // its file
  std::string pending_model_;     // its model's file, as the session names it
  enum class PathDialog { None, Save, Open } path_dialog_ = PathDialog::None;
  std::string path_buf_, locate_buf_, dialog_error_;
};

std::unique_ptr<Feature> make_session_feature();

}  // namespace sf
