// The lesson's windows: the stop editor (Lesson › Edit stops…) and the dialogs Add stop here…,
// Open lesson… and Save lesson as….
#include <filesystem>

#include "app/app.hpp"
#include "app/classroom/lesson_feature.hpp"
#include "app/panels/panel.hpp"
#include "imgui.h"
#include "imgui_stdlib.h"

namespace sf {

namespace {

// A modal with a path field and OK / Cancel; true when OK was pressed (or Enter in the field).
bool path_dialog(const char* title, bool& open, std::string& path, const char* ok_label) {
  if (open) ImGui::OpenPopup(title);
  open = false;
  bool ok = false;
  if (!ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return false;
  ImGui::TextUnformatted("A .stepformer file (a path, or a shipped lesson's name such as 02-one-attention-head)");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 32);
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  ok = ImGui::InputText("##path", &path, ImGuiInputTextFlags_EnterReturnsTrue);
  ok |= ImGui::Button(ok_label);
  ImGui::SameLine();
  if (ok || ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
  return ok;
}

}  // namespace

void LessonFeature::draw_dialogs(App& app) {
  std::string error;
  if (path_dialog("Open lesson", open_open_, path_buf_, "Open") && !open(app, path_buf_, error)) app.notify(error, true);
  if (path_dialog("Save lesson as", save_open_, path_buf_, "Save") && !save(app, path_buf_, error)) app.notify(error, true);

  if (add_open_) ImGui::OpenPopup("Add stop here");
  add_open_ = false;
  if (!ImGui::BeginPopupModal("Add stop here", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  const float F = ImGui::GetFontSize();
  ImGui::Text("The stop keeps the cursor (%s), the panels open now and the selected value.",
              describe_event(app.session.current()).c_str());
  ImGui::SetNextItemWidth(F * 30);
  ImGui::InputText("title", &add_title_);
  ImGui::TextUnformatted("Note (Markdown: **bold**, *italic*, `code`, \"- \" items; W_q, ℓ_max, ℝ^{d_e} as in the paper)");
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  ImGui::InputTextMultiline("##note", &add_note_, ImVec2(F * 36, F * 9));
  if (ImGui::Button("Add stop")) {
    add_stop_here(app, add_title_, add_note_);
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

void LessonFeature::draw_editor(App& app) {
  if (!app.ui.show.lesson) return;
  if (!player_.active()) {
    app.ui.show.lesson = false;
    return;
  }
  const float F = ImGui::GetFontSize();
  ImGui::SetNextWindowSize(ImVec2(F * 60, F * 26), ImGuiCond_FirstUseEver);
  if (!ImGui::Begin("Lesson stops", &app.ui.show.lesson)) {
    ImGui::End();
    return;
  }
  SessionFile& f = player_.file();
  ImGui::SetNextItemWidth(-F * 7);
  ImGui::InputText("lesson title", &f.title);
  ImGui::SetNextItemWidth(-F * 7);
  ImGui::InputText("description", &f.description);
  ImGui::TextDisabled("%s", player_.path().empty() ? "not saved yet" : player_.path().c_str());
  ImGui::Separator();
  // The stops, left; the selected one's fields, right.
  ImGui::BeginChild("##stops", ImVec2(F * 15, 0), true);
  for (size_t n = 0; n < player_.size(); ++n) {
    const std::string label = std::string(n == player_.current() ? "▸ " : "   ") + std::to_string(n + 1) + ". " +
                              player_.lesson().stops[n].title + "##stop" + std::to_string(n);
    if (ImGui::Selectable(label.c_str(), selected_ == n)) selected_ = n;
    if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(0)) {
      std::string error;
      go(app, n, error);
    }
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##stop");
  if (LessonStop* st = player_.stop(selected_)) {
    std::string error;
    const size_t n = selected_;
    if (ImGui::Button("Go to")) go(app, n, error);
    ImGui::SameLine();
    if (ImGui::Button("Move up") && n > 0 && player_.move(n, n - 1, error)) --selected_;
    ImGui::SameLine();
    if (ImGui::Button("Move down") && n + 1 < player_.size() && player_.move(n, n + 1, error)) ++selected_;
    ImGui::SameLine();
    if (ImGui::Button("Cursor and panels from now")) {
      st->cursor = cursor_ref(app.session.trace(), app.session.cursor());
      st->panels = open_panels(app);
      st->selected_value = app.ui.selected_value;
    }
    ImGui::SameLine();
    if (ImGui::Button("Delete")) {
      player_.remove(n, error);
      selected_ = std::min(selected_, player_.size() ? player_.size() - 1 : 0);
    } else {
      ImGui::SetNextItemWidth(-F * 4);
      ImGui::InputText("title", &st->title);
      ImGui::TextDisabled("at %s", describe_cursor(st->cursor).c_str());
      std::string panels;
      for (const auto& p : st->panels) panels += (panels.empty() ? "" : ", ") + p;
      ImGui::TextDisabled("panels: %s%s", panels.c_str(),
                          st->selected_value.empty() ? "" : ("; selected value " + st->selected_value).c_str());
      ImGui::SetNextItemWidth(-F * 8);
      ImGui::InputTextWithHint("focal value", "the value the step binds", &st->focus);
      item_tooltip("The value the note talks about, by its name in the trace (\"softmax(S/√d_attn)\"): presentation "
                   "mode shows it large beside the pseudocode. Empty: the first value the stop's step binds.");
      ImGui::TextUnformatted("Note (Markdown)");
      ImGui::InputTextMultiline("##note", &st->note, ImVec2(-FLT_MIN, -FLT_MIN));
    }
    if (!error.empty()) app.notify(error, true);
  } else {
    ImGui::TextDisabled("No stops yet: Lesson › Add stop here… records one at the cursor.");
  }
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace sf
