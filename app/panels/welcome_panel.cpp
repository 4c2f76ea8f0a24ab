#include "app/panels/welcome_panel.hpp"

#include <algorithm>

#include "app/classroom/lesson_feature.hpp"
#include "app/logic/lesson_player.hpp"
#include "app/panels/all_panels.hpp"
#include "core/training/recipe.hpp"
#include "imgui_internal.h"  // MarkIniSettingsDirty

namespace sf {

namespace {

// What Stepformer is, in three sentences (issue 21: a first launch that teaches).
constexpr const char* kWhat =
    "Stepformer steps through the pseudocode of Phuong and Hutter's \xe2\x80\x9c" "Formal Algorithms for "
    "Transformers\xe2\x80\x9d (2022) line by line, while a real transformer computes. Every vector and matrix a "
    "line assigns is on screen, under the paper's names and with its 1-based indices. You can also train a model "
    "here in seconds, watch it learn, and sample from it.";

// The first shipped lesson (assets/lessons/, sorted by file name), at its first stop.
bool start_lesson(App& app, std::string& error) {
  const std::vector<std::string> lessons = shipped_lessons();
  if (lessons.empty())
    return error = "no lesson found in " + assets_dir() +
                   "/lessons: reinstall Stepformer, or open a lesson file with Lesson › Open lesson…",
           false;
  LessonFeature* lesson = app.feature<LessonFeature>();
  return lesson && lesson->open(app, lessons.front(), error);
}

// Algorithm 4 (Attention) line 1 for layer 1, head 1 of the forward pass of the open model, with
// the Attention tab: F10 then steps through Q, K, V, S, the mask and the softmax.
bool start_attention(App& app, std::string& error) {
  Session& s = app.session;
  if (s.run_kind() != RunKind::Forward) s.trace_forward();
  s.wait_for_trace();
  if (!s.jump_to(4, 1, 1, 1, 0)) {
    const std::string why = s.prompt_input().error.empty() ? "" : " (" + s.prompt_input().error + ")";
    return error = "the forward pass has no Algorithm 4 for layer 1, head 1" + why +
                   ": type a prompt the model's vocabulary can read, then try again",
           false;
  }
  app.ui.viewed_event = SIZE_MAX;
  app.ui.show.attention = true;  // selects the Attention tab on the next frame
  app.notify("Algorithm 4, layer 1, head 1: F10 steps through its lines");
  return true;
}

// The Training tab with the classroom recipe of the open model's architecture (sorting, for the
// decoder-only and BERT models), playing until 95% of the validation sequences come out right.
bool start_training(App& app, std::string& error) {
  app.ui.show.training = true;
  TrainingPanel& t = app.panels->training;
  if (!t.set_task(app, classroom_recipe(app.session.arch().name()).task, error) || !t.play(app, error)) return false;
  app.notify("Training the classroom recipe (‖ Pause stops it)");
  return true;
}

// The five keys a newcomer needs (Help › About lists every one).
struct Key {
  const char* keys;
  const char* what;
};
const Key kKeys[] = {
    {"→  or  F11", "Step into: the next event, into the algorithm a line calls"},
    {"←", "Step back: the previous event"},
    {"F10", "Step over: the next line, running the calls inside it"},
    {"PageDown  /  PageUp", "The next / previous stop of a lesson"},
    {"Ctrl+=  /  Ctrl+-", "Larger / smaller text"},
};

void heading(const App& app, const char* text) {
  ImGui::Spacing();
  ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "%s", text);
}

}  // namespace

WelcomePanel& welcome_panel(App& app) { return app.panels->welcome; }
const WelcomePanel& welcome_panel(const App& app) { return app.panels->welcome; }

// The train button names the classroom recipe's task of the open model's architecture (sorting for the
// decoder-only and BERT models, dates for the encoder-decoder).
const std::vector<WelcomePanel::Start>& WelcomePanel::starts(const std::string& arch) {
  static const Start lesson{"lesson", "Start lesson 1",
       "Tokens, embeddings and positions: a guided tour of the first lines, stop by stop (PageDown goes on).",
       start_lesson};
  static const Start attention{"attention", "Jump into the first attention head",
       "Algorithm 4, layer 1, head 1, with the Attention tab open: F10 computes Q, K, V, the scores S and the "
       "softmax.",
       start_attention};
  static const std::vector<Start> sort{
      lesson, attention,
      {"train", "Train a model to sort in ten seconds",
       "The Training tab with the classroom recipe, playing: a small model learns to sort letters while you watch "
       "its loss and accuracy.",
       start_training}};
  static const std::vector<Start> dates{
      lesson, attention,
      {"train", "Train a model to rewrite dates",
       "The Training tab with the classroom recipe, playing: a small encoder-decoder learns to rewrite "
       "\"12 march 2024\" as \"2024-03-12\" while you watch its loss and accuracy.",
       start_training}};
  return classroom_recipe(arch).task == "dates" ? dates : sort;
}

void WelcomePanel::show(bool on) {
  open_ = on;
  focus_ = on;
}

bool WelcomePanel::action(App& app, const std::string& arg, std::string& error) {
  if (arg == "show" || arg == "hide") {
    show(arg == "show");
    return true;
  }
  for (const Start& s : starts(app.session.arch().name()))
    if (arg == s.name) return start(app, arg, error);
  error = "welcome takes show, hide, lesson, attention or train (the welcome's three buttons)";
  return false;
}

bool WelcomePanel::start(App& app, const std::string& name, std::string& error) {
  const auto& all = starts(app.session.arch().name());
  const auto s = std::find_if(all.begin(), all.end(), [&](const Start& x) { return name == x.name; });
  if (s == all.end()) return error = "no starting point \"" + name + "\"", false;
  if (!s->run(app, error)) return false;
  show(false);
  return true;
}

void WelcomePanel::draw(App& app) {
  rects_.clear();
  fits_ = false;
  if (!open_) return;
  const float fs = ImGui::GetFontSize();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  // Sized from the viewport: 46 em wide, or 90% of a narrow screen; as tall as its text (a zero
  // height fits it), scrolling beyond 86% of the screen's height (large fonts on a laptop). Its
  // top edge is fixed (centring it would move it while its height settles over its first frames,
  // under a pointer about to click).
  const float w = std::min(fs * 46.0f, vp->WorkSize.x * 0.9f);
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.1f),
                          ImGuiCond_Always, ImVec2(0.5f, 0.0f));
  ImGui::SetNextWindowSizeConstraints(ImVec2(w, 0.0f), ImVec2(w, vp->WorkSize.y * 0.86f));
  ImGui::SetNextWindowSize(ImVec2(w, 0.0f), ImGuiCond_Always);
  ImGui::SetNextWindowBgAlpha(1.0f);  // opaque over the panels, for a projector
  if (focus_) ImGui::SetNextWindowFocus();
  focus_ = false;
  bool open = true;
  const ImGuiWindowFlags flags =
      ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings;
  if (ImGui::Begin("Welcome to Stepformer###welcome", &open, flags)) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(kWhat);
    heading(app, "Where to start (one click)");
    draw_starts(app);
    heading(app, "Five keys");
    draw_keys(app);
    ImGui::TextDisabled("F1 lists every key. F6 is presentation mode, for a projector (Esc leaves it).");
    ImGui::PopTextWrapPos();
    ImGui::Separator();
    if (ImGui::Checkbox("Show at start", &app.settings.welcome_at_start)) ImGui::MarkIniSettingsDirty();
    ImGui::SameLine();
    ImGui::TextDisabled("Help › Welcome opens this again.");
    fits_ = ImGui::GetScrollMaxY() <= 0.0f;
    if (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) &&
        ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false))
      open = false;
  }
  ImGui::End();
  if (!open) show(false);
}

// The three buttons, each beside the line that says what it does.
void WelcomePanel::draw_starts(App& app) {
  const ImGuiStyle& st = ImGui::GetStyle();
  float label_w = 0;
  const std::vector<Start>& all = starts(app.session.arch().name());
  for (const Start& s : all) label_w = std::max(label_w, ImGui::CalcTextSize(s.label).x);
  const ImVec2 button(label_w + st.FramePadding.x * 4, ImGui::GetFontSize() * 2.2f);
  if (!ImGui::BeginTable("starts", 2, ImGuiTableFlags_SizingStretchProp)) return;
  ImGui::TableSetupColumn("button", ImGuiTableColumnFlags_WidthFixed, button.x);
  ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
  for (const Start& s : all) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const bool clicked = ImGui::Button(s.label, button);
    const ImVec2 p = ImGui::GetItemRectMin(), sz = ImGui::GetItemRectSize();
    rects_[s.name] = ImVec4(p.x, p.y, sz.x, sz.y);
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", s.what);
    std::string error;
    if (clicked && !start(app, s.name, error)) app.notify(error, true);
  }
  ImGui::EndTable();
}

void WelcomePanel::draw_keys(const App& app) const {
  if (!ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) return;
  float keys_w = 0;
  ImGui::PushFont(app.fonts.mono);
  for (const Key& k : kKeys) keys_w = std::max(keys_w, ImGui::CalcTextSize(k.keys).x);
  ImGui::PopFont();
  ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed, keys_w + ImGui::GetStyle().CellPadding.x * 2);
  ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
  for (const Key& k : kKeys) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushFont(app.fonts.mono);
    ImGui::TextUnformatted(k.keys);
    ImGui::PopFont();
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", k.what);
  }
  ImGui::EndTable();
}

}  // namespace sf
