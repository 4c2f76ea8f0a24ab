#include "app/panels/errata_panel.hpp"

#include <iterator>

#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace sf {

namespace {

// Whether a model of architecture `a` runs algorithm `alg` in one of the session's runs: the
// forward pass (with Algorithms 1–7 inside), generation or translation, one training update.
bool runs(const Architecture& a, int alg) {
  return alg <= 7 || alg == a.forward_algorithm() || alg == a.training_algorithm() ||
         (alg == 14 && a.output() == OutputKind::Continuation) || (alg == 15 && a.output() == OutputKind::Translation);
}

std::string target_text(const ErratumTarget& t) {
  return "Algorithm " + algorithm_label(t.alg) + " (" + algorithm_name(t.alg) + ") line " + std::to_string(t.line);
}

const char* const kSeedFilters[] = {"every seed", "the paper (000)", "Carpenter (002)", "Dinan–Yaida–Zhang (001)",
                                    "the article (004)"};
const Seed kSeeds[] = {Seed::Paper, Seed::Paper, Seed::Carpenter, Seed::DinanYaidaZhang, Seed::Article};  // by filter (0: all)

}  // namespace

bool ErrataPanel::show(App& app, const Erratum& e) {
  shown_ = e.id;
  scroll_to_shown_ = true;
  result_error_ = !locate(app, e, result_);
  app.notify(result_, result_error_);
  return !result_error_;
}

bool ErrataPanel::locate(App& app, const Erratum& e, std::string& message) {
  Session& s = app.session;
  auto jumped = [&](const ErratumTarget& t) {
    if (!s.jump_to(t.alg, t.line)) return false;
    app.ui.viewed_event = SIZE_MAX;
    app.ui.show.pseudocode = true;
    message = target_text(t) + ": step " + std::to_string(s.cursor() + 1) + " of " + std::to_string(s.trace().size());
    return true;
  };
  for (const ErratumTarget& t : e.show)  // in the trace already on screen
    if (jumped(t)) return true;
  const Architecture& a = s.arch();
  for (const ErratumTarget& t : e.show) {  // in another run of this model
    if (!runs(a, t.alg)) continue;
    if (t.alg == 14) s.trace_generate(1, false);
    else if (t.alg == 15) s.trace_translate(false);
    else if (t.alg == a.training_algorithm()) {
      if (!app.trace_training_update(message)) return false;
    } else s.trace_forward();
    if (jumped(t)) return true;
  }
  // This architecture never runs it: name the ones that do.
  std::string algs, who;
  for (const ErratumTarget& t : e.show) {
    const std::string n = std::to_string(t.alg);
    if (algs.find("Algorithm " + n + " ") == std::string::npos)
      algs += std::string(algs.empty() ? "" : " or ") + "Algorithm " + n + " ";
    for (const Architecture* other : all_architectures())
      if (runs(*other, t.alg) && who.find(other->title()) == std::string::npos)
        who += std::string(who.empty() ? "" : " or ") + other->title();
  }
  message = "The open model (" + a.title() + ") does not run " + algs + "(" + e.where + "). Open one that does: " +
            who + " (File › Examples, or File › New model…), then Show me again.";
  return false;
}

void ErrataPanel::draw(App& app) {
  const float F = ImGui::GetFontSize();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  // Over the variables and the inspector, so that the pseudocode (left) shows where "Show me" went.
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.385f, vp->WorkPos.y + vp->WorkSize.y * 0.07f),
                          ImGuiCond_Appearing);
  ImGui::SetNextWindowSize(ImVec2(vp->WorkSize.x * 0.6f, vp->WorkSize.y * 0.86f), ImGuiCond_Appearing);
  ImGui::SetNextWindowBgAlpha(1.0f);  // opaque over the panels, for a projector
  bool open = true;
  if (ImGui::Begin("Errata of the seeds###errata", &open, ImGuiWindowFlags_NoCollapse)) {
    const bool dark = app.settings.dark;
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled(
        "Slips in the pseudocode of the seeds, as printed, and what Stepformer does instead. \"Show me\" moves the "
        "stepper to the line where it shows.");
    ImGui::PopTextWrapPos();
    for (int i = 0; i < static_cast<int>(std::size(kSeedFilters)); ++i) {
      if (i) ImGui::SameLine();
      ImGui::RadioButton(kSeedFilters[i], &seed_filter_, i);
    }
    if (!result_.empty()) {
      ImGui::PushTextWrapPos(0.0f);
      ImGui::TextColored(result_error_ ? ImVec4(1, 0.4f, 0.35f, 1) : ImVec4(0.5f, 0.85f, 0.5f, 1), "%s", result_.c_str());
      ImGui::PopTextWrapPos();
    }
    ImGui::BeginChild("list");
    ImGui::PushTextWrapPos(0.0f);
    const auto& all = errata();
    for (size_t i = 0; i < all.size(); ++i) {
      const Erratum& e = all[i];
      if (seed_filter_ && e.seed != kSeeds[seed_filter_]) continue;
      ImGui::PushID(static_cast<int>(i));
      ImGui::Separator();
      if (e.id == shown_) {  // the erratum "Show me" went to: marked, and scrolled to once
        const ImVec2 p = ImGui::GetCursorScreenPos();
        ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + ImGui::GetContentRegionAvail().x, p.y + F * 1.3f),
                                                  highlight_bg(dark));
        if (scroll_to_shown_) ImGui::SetScrollHereY(0.0f);
        scroll_to_shown_ = false;
      }
      ImGui::TextColored(ImColor(accent_color(dark)), "%s", e.where.c_str());
      ImGui::SameLine();
      ImGui::TextDisabled("%s · %s", to_string(e.seed), to_string(e.kind));
      if (e.seed == Seed::Carpenter) {  // code listings, as printed
        ImGui::PushFont(app.fonts.mono);
        ImGui::TextUnformatted(e.printed.c_str());
        ImGui::PopFont();
      } else {  // the paper's and the tutorial's notation, with real sub- and superscripts
        size_t from = 0;
        for (size_t nl; (nl = e.printed.find('\n', from)) != std::string::npos; from = nl + 1)
          math_text(app.fonts, e.printed.substr(from, nl - from));
        math_text(app.fonts, e.printed.substr(from));
      }
      ImGui::TextUnformatted(e.problem.c_str());
      ImGui::TextDisabled("Stepformer:");
      ImGui::SameLine();
      ImGui::TextUnformatted(e.stepformer.c_str());
      if (ImGui::SmallButton("Show me")) show(app, e);
      std::string where;
      for (const ErratumTarget& t : e.show) where += (where.empty() ? "" : ", ") + target_text(t);
      item_tooltip("Jumps to " + where + " in the current trace, or traces the run that has it.");
      ImGui::PopID();
    }
    ImGui::PopTextWrapPos();
    ImGui::EndChild();
  }
  ImGui::End();
  if (!open) app.ui.show.errata = false;
}

}  // namespace sf
