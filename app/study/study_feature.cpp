// Predict, then reveal (Run › Predict, then reveal; the Inspector's Study tab): with it on, a
// forward step onto an event that asks a question (app/logic/quiz.hpp) is held by
// Session::jump_gate; the question window offers the choices; a guess moves the cursor
// (Session::jump_ungated), reveals the value, marks the guess and scores it.
#include "app/study/study_feature.hpp"

#include <GLFW/glfw3.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "app/app.hpp"
#include "app/logic/quiz.hpp"
#include "app/panels/panel.hpp"

namespace sf {

namespace {

class StudyFeature : public Feature {
 public:
  void run_menu(App& app) override {
    ImGui::Separator();
    if (ImGui::MenuItem("Predict, then reveal", nullptr, on_)) set_on(app, !on_);
  }
  const char* tab_panel() const override { return "study"; }
  void draw_tab(App& app) override;
  void shortcuts(App& app) override;
  void overlay(App& app) override;
  ActionResult action(App& app, const std::string& verb, const std::string& arg, std::string& error) override;
  void dump(const App& app, nlohmann::ordered_json& j) const override;

 private:
  void set_on(App& app, bool on);
  // A forward move from `from` to `to`: held (false) when `to` asks a question.
  bool gate(App& app, size_t from, size_t to);
  bool guess(App& app, int choice, std::string& error);  // choice 0-based; −1: skip
  void drop_stale(const App& app);

  bool on_ = false;
  std::optional<Quiz> quiz_;
  std::optional<Question> pending_;   // the held step's question
  size_t pending_from_ = 0;           // the cursor while it is held
  size_t trace_size_ = 0;             // the trace it was asked on (a re-trace drops it)
  std::optional<Question> revealed_;  // the last question answered, with its value shown
  int guessed_ = -1;                  // the choice made (−1: skipped)
};

void StudyFeature::set_on(App& app, bool on) {
  on_ = on;
  pending_.reset();
  revealed_.reset();
  if (!on) {
    app.session.jump_gate = nullptr;
    return;
  }
  if (!quiz_) quiz_.emplace(1, [&app](int id) { return token_label(app.session.tokenizer(), id); });
  app.session.jump_gate = [this, &app](size_t from, size_t to) { return gate(app, from, to); };
  app.ui.show.study = true;
}

bool StudyFeature::gate(App& app, size_t from, size_t to) {
  if (pending_) return false;  // one question at a time: answer or skip it first
  std::optional<Question> q = quiz_->question_for(app.session.trace(), to);
  if (!q) return true;
  pending_ = std::move(q);
  pending_from_ = from;
  trace_size_ = app.session.trace().size();
  revealed_.reset();
  return false;
}

void StudyFeature::drop_stale(const App& app) {
  if (pending_ && (app.session.cursor() != pending_from_ || app.session.trace().size() != trace_size_)) pending_.reset();
}

bool StudyFeature::guess(App& app, int choice, std::string& error) {
  drop_stale(app);
  if (!pending_) return error = "no question is pending: turn study mode on (study:on) and step forward", false;
  const int n = static_cast<int>(pending_->choices.size());
  if (choice >= n || choice < -1) return error = "guess takes a choice from 1 to " + std::to_string(n), false;
  if (choice < 0)
    quiz_->skip(*pending_);
  else
    quiz_->grade(*pending_, choice);
  app.session.jump_ungated(pending_->event);
  app.ui.viewed_event = SIZE_MAX;
  if (pending_->value != "y") app.ui.selected_value = pending_->value;  // the tensor view shows the revealed value
  revealed_ = std::move(pending_);
  pending_.reset();
  guessed_ = choice;
  return true;
}

void StudyFeature::shortcuts(App& app) {
  if (!pending_) return;
  std::string error;
  for (int i = 0; i < static_cast<int>(pending_->choices.size()) && i < 9; ++i)
    if (ImGui::IsKeyPressed(GLFW_KEY_1 + i, false)) {
      guess(app, i, error);
      return;
    }
}

void StudyFeature::overlay(App& app) {
  drop_stale(app);
  if (!on_ || (!pending_ && !revealed_)) return;
  const float F = ImGui::GetFontSize();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.62f),
                          ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(F * 30, 0), ImGuiCond_Appearing);
  bool open = true;
  if (!ImGui::Begin("Predict, then reveal###study", &open, ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    return;
  }
  const Question& q = pending_ ? *pending_ : *revealed_;
  ImGui::TextWrapped("%s", q.text.c_str());
  ImGui::Spacing();
  const bool dark = app.settings.dark;
  for (int i = 0; i < static_cast<int>(q.choices.size()); ++i) {
    ImGui::PushID(i);
    const std::string label = std::to_string(i + 1) + ". " + q.choices[i];
    if (pending_) {
      std::string error;
      if (ImGui::Button(label.c_str())) guess(app, i, error);
    } else {
      const bool answer = i == q.answer, mine = i == guessed_;
      const ImU32 col = answer ? IM_COL32(60, 200, 90, 255) : mine ? IM_COL32(230, 80, 70, 255) : ImGui::GetColorU32(ImGuiCol_TextDisabled);
      ImGui::PushStyleColor(ImGuiCol_Text, col);
      ImGui::TextUnformatted((label + (answer ? "   — the answer" : mine ? "   — your guess" : "")).c_str());
      ImGui::PopStyleColor();
    }
    ImGui::PopID();
  }
  ImGui::Spacing();
  if (pending_) {
    std::string error;
    if (ImGui::Button("Skip")) guess(app, -1, error);
    ImGui::SameLine();
    ImGui::TextDisabled("The step is held until you guess (keys 1–%d).", static_cast<int>(q.choices.size()));
  } else {
    const bool right = guessed_ == q.answer;
    ImGui::PushStyleColor(ImGuiCol_Text, guessed_ < 0 ? ImGui::GetColorU32(ImGuiCol_TextDisabled)
                                                      : right ? IM_COL32(60, 200, 90, 255) : IM_COL32(230, 80, 70, 255));
    ImGui::TextUnformatted(guessed_ < 0 ? "Skipped." : right ? "Right!" : "Not this time.");
    ImGui::PopStyleColor();
    ImGui::PushStyleColor(ImGuiCol_Text, accent_color(dark));
    ImGui::TextWrapped("%s", q.reveal.c_str());
    ImGui::PopStyleColor();
    const QuizScore& s = quiz_->score();
    ImGui::TextDisabled("Score: %d of %d right%s", s.right, s.asked,
                        s.skipped ? (", " + std::to_string(s.skipped) + " skipped").c_str() : "");
  }
  ImGui::End();
  if (!open) {
    if (pending_) {
      std::string error;
      guess(app, -1, error);  // closing the question skips it
    }
    revealed_.reset();
  }
}

void StudyFeature::draw_tab(App& app) {
  bool on = on_;
  if (ImGui::Checkbox("Predict, then reveal", &on)) set_on(app, on);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("With it on, a step forward onto a line whose value can be guessed is held until you "
                      "guess: which key gets the most attention, the sign of a cell, the next token, or the "
                      "parameters the update changes most.");
  ImGui::PopTextWrapPos();
  if (!quiz_) return;
  const QuizScore& s = quiz_->score();
  ImGui::Separator();
  ImGui::Text("%d of %d right", s.right, s.asked);
  if (s.skipped) ImGui::TextDisabled("%d skipped", s.skipped);
  if (!s.by_kind.empty() && ImGui::BeginTable("kinds", 3, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("question");
    ImGui::TableSetupColumn("asked");
    ImGui::TableSetupColumn("right");
    ImGui::TableHeadersRow();
    for (const auto& [kind, ar] : s.by_kind) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(question_kind_name(kind));
      ImGui::TableNextColumn();
      ImGui::Text("%d", ar.first);
      ImGui::TableNextColumn();
      ImGui::Text("%d", ar.second);
    }
    ImGui::EndTable();
  }
  ImGui::Separator();
  const auto& h = quiz_->history();
  for (size_t i = h.size(); i-- > 0 && h.size() - i <= 30;) {
    ImGui::PushID(static_cast<int>(i));
    ImGui::TextUnformatted(h[i].skipped ? "skipped" : h[i].right ? "right" : "wrong");
    ImGui::SameLine();
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%s  Guess: %s; answer: %s", h[i].question.c_str(), h[i].guess.c_str(), h[i].answer.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopID();
  }
  if (ImGui::Button("Reset the score")) quiz_->reset();
}

ActionResult StudyFeature::action(App& app, const std::string& verb, const std::string& arg, std::string& error) {
  if (verb == "study") {
    if (arg != "on" && arg != "off") return error = "study is on or off", ActionResult::Failed;
    set_on(app, arg == "on");
    return ActionResult::Done;
  }
  if (verb == "guess-skip") return guess(app, -1, error) ? ActionResult::Done : ActionResult::Failed;
  if (verb != "guess") return ActionResult::NotMine;
  int n = 0;
  try {
    size_t used = 0;
    n = std::stoi(arg, &used);
    if (used != arg.size()) n = 0;
  } catch (const std::exception&) {
    n = 0;
  }
  if (n < 1) return error = "guess needs a choice number (1-based), e.g. guess:2", ActionResult::Failed;
  return guess(app, n - 1, error) ? ActionResult::Done : ActionResult::Failed;
}

void StudyFeature::dump(const App& app, nlohmann::ordered_json& j) const {
  nlohmann::ordered_json s;
  const bool pending = pending_ && app.session.cursor() == pending_from_;
  s["on"] = on_;
  s["pending"] = pending;
  const Question* q = pending ? &*pending_ : nullptr;
  s["kind"] = q ? question_kind_name(q->kind) : "";
  s["question"] = q ? q->text : "";
  s["choices"] = q ? q->choices : std::vector<std::string>{};
  s["event"] = q ? static_cast<long long>(q->event) : -1;
  s["asked"] = quiz_ ? quiz_->score().asked : 0;
  s["right"] = quiz_ ? quiz_->score().right : 0;
  s["skipped"] = quiz_ ? quiz_->score().skipped : 0;
  if (revealed_) {
    s["last"] = {{"kind", question_kind_name(revealed_->kind)},
                 {"guess", guessed_ + 1},
                 {"answer", revealed_->answer + 1},
                 {"event", revealed_->event},
                 {"reveal", revealed_->reveal}};
  }
  j["study"] = std::move(s);
}

}  // namespace

std::unique_ptr<Feature> make_study_feature() { return std::make_unique<StudyFeature>(); }

}  // namespace sf
