#include "app/panels/speculative_panel.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/bar_table.hpp"
#include "app/widgets/flow.hpp"
#include "app/widgets/labelled.hpp"
#include "app/widgets/wording.hpp"

namespace sf {

namespace {

constexpr int kResidualRows = 12;  // the residual's bars: its largest entries (the rest are ≈ 0)
constexpr const char* kNumberWidth = "4.1e-05 ";  // prob()'s widest text: the bars start after it

std::string prob(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, x != 0.0 && x < 0.0005 ? "%.1e" : "%.3f", x);
  return buf;
}

const SpeculativeResult* traced(const Session& s) {
  return s.run_kind() == RunKind::Speculate ? &s.speculation().result() : nullptr;
}

}  // namespace

void SpeculativePanel::draw(App& app) {
  const bool is_traced = traced(app.session) != nullptr;
  heading_.clear();
  if (is_traced) ImGui::SetNextItemOpen(true, ImGuiCond_Always);
  if (!ImGui::CollapsingHeader("Speculative decoding: Algorithm 14-S (not in the paper)")) return;
  draw_controls(app);
  if (!is_traced) return;
  const SpeculativeResult& r = app.session.speculation().result();
  draw_counter(app);
  if (!r.stopped.empty()) wrapped_colored(accent_color(app.settings.dark), "Generation " + r.stopped + ".");
  if (r.rounds.empty()) return;
  const int sel = selected_round(app);
  draw_round_buttons(app, sel);
  draw_round(app, sel);
}

// The draft, K, τ, ℓ_gen and the seed, and the button that traces Algorithm 14-S.
void SpeculativePanel::draw_controls(App& app) {
  Session& s = app.session;
  SpeculationSettings& st = s.speculation().settings;
  const float fs = ImGui::GetFontSize();
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("A small draft model proposes K tokens; the target (the open model) checks them in one forward "
                      "pass (Leviathan et al. 2023, Chen et al. 2023; the encyclopedia article). Here p is the "
                      "target's distribution after τ and q the draft's.");
  ImGui::PopTextWrapPos();
  draw_draft_picker(app);
  int K = st.K;
  if (ImGui::InputInt(fitted_label("K (proposals)", fs * 7.0f).c_str(), &K)) st.K = std::clamp(K, 1, 64);
  item_tooltip("How many tokens the draft proposes per round (fewer near ℓ_gen and ℓ_max: line 3).");
  same_line_if_fits(field_width("ℓ_gen##spec", fs * 7.0f));
  int l_gen = st.l_gen;
  if (ImGui::InputInt(fitted_label("ℓ_gen##spec", fs * 7.0f).c_str(), &l_gen)) st.l_gen = std::clamp(l_gen, 1, 4096);
  float tau = static_cast<float>(st.tau);
  if (ImGui::SliderFloat(fitted_label("τ##spec", fs * 10.0f).c_str(), &tau, 0.0f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic))
    st.tau = std::clamp(static_cast<double>(tau), 0.0, 100.0);
  item_tooltip("The temperature of both models. τ = 0: accept while the target's argmax agrees (the same tokens as "
               "Algorithm 14's greedy run). τ > 0: accept x̃ with probability min(1, p(x̃)/q(x̃)).");
  same_line_if_fits(field_width("seed##spec", fs * 8.0f));
  const uint64_t one = 1;
  ImGui::InputScalar(fitted_label("seed##spec", fs * 8.0f).c_str(), ImGuiDataType_U64, &st.seed, &one);
  item_tooltip("Every draw (the draft's proposals, the acceptance draws u, the replacements) comes from one generator "
               "with this seed, in that order.");
  ImGui::BeginDisabled(!s.speculation().draft() || s.arch().output() != OutputKind::Continuation);
  if (ImGui::Button("Run speculative decoding")) {
    s.trace_speculate();
    app.ui.viewed_event = SIZE_MAX;
    round_ = -1;
  }
  ImGui::EndDisabled();
  item_tooltip("Traces Algorithm 14-S from the prompt: step it like Algorithm 14 (the pseudocode panel shows its "
               "listing). Its DTransformer passes run untraced.");
  if (s.run_kind() == RunKind::Speculate) {
    same_line_if_fits(button_width("Back to Algorithm 14"));
    if (ImGui::Button("Back to Algorithm 14")) s.trace_forward();
    item_tooltip("Traces the forward pass again and shows Algorithm 14's controls (τ, ℓ_gen, generate).");
  }
  if (!s.speculation().error().empty()) wrapped_colored(accent_color(app.settings.dark), s.speculation().error());
}

// The draft: any bundled or opened model with the target's vocabulary.
void SpeculativePanel::draw_draft_picker(App& app) {
  Session& s = app.session;
  Speculation& sp = s.speculation();
  const std::string shown = sp.draft() ? sp.draft_name() : "(pick a draft model)";
  if (ImGui::BeginCombo(fitted_label("draft", ImGui::GetFontSize() * 16.0f).c_str(), shown.c_str())) {
    const std::vector<DraftCandidate> list = sp.candidates(s.model());
    for (const DraftCandidate& c : list)
      if (ImGui::Selectable(c.name.c_str(), c.name == sp.draft_name())) sp.pick_draft(c.name, c.path, s.model());
    if (list.empty()) ImGui::TextDisabled("No bundled or opened model has this model's vocabulary.");
    ImGui::EndCombo();
  }
  item_tooltip("The bundled models (assets/) and the models opened in this session whose vocabulary is the open "
               "model's. The open model itself is a draft too: every proposal is then accepted.");
}

// Target passes against plain Algorithm 14's, and the proposals accepted.
void SpeculativePanel::draw_counter(const App& app) const {
  const SpeculativeResult& r = app.session.speculation().result();
  const int proposed = r.proposed();
  char buf[256];
  std::snprintf(buf, sizeof buf, "%zu tokens in %d target passes (plain Algorithm 14: %d, one per token; saved %d); %d draft passes; "
                "%d of %d proposals accepted (%.0f%%).",
                r.y.size(), r.target_passes, r.plain_passes(), r.plain_passes() - r.target_passes, r.draft_passes,
                r.accepted(), proposed, proposed ? 100.0 * r.accepted() / proposed : 0.0);
  wrapped_colored(accent_color(app.settings.dark), buf);
}

// The round the cursor is in (Indices::i), unless the learner clicked another since.
int SpeculativePanel::selected_round(const App& app) {
  const int n = static_cast<int>(app.session.speculation().result().rounds.size());
  const size_t shown = app.shown_event();
  if (shown != followed_) {
    followed_ = shown;
    const Trace& tr = app.session.trace();
    const int i = shown < tr.size() ? tr.events[shown].idx.i : 0;
    if (i >= 1 && i <= n) round_ = i - 1;
  }
  return round_ < 0 || round_ >= n ? n - 1 : round_;
}

void SpeculativePanel::draw_round_buttons(const App& app, int sel) {
  const std::vector<SpeculativeRound>& rounds = app.session.speculation().result().rounds;
  ImGui::TextUnformatted("Rounds:");
  for (size_t k = 0; k < rounds.size(); ++k) {
    const std::string label = std::to_string(k + 1) + ": " + std::to_string(rounds[k].accepted) + "/" +
                              std::to_string(rounds[k].K) + "##round" + std::to_string(k);
    same_line_if_fits(button_width(label.c_str()));
    if (static_cast<int>(k) == sel) ImGui::PushStyleColor(ImGuiCol_Button, highlight_bg(app.settings.dark));
    if (ImGui::SmallButton(label.c_str())) {
      round_ = static_cast<int>(k);
      followed_ = app.shown_event();
    }
    if (static_cast<int>(k) == sel) ImGui::PopStyleColor();
    item_tooltip("Round " + std::to_string(k + 1) + ": proposals accepted / K′. Click to see its proposals.");
  }
}

// One round: the proposals with q and p as bars, r and u, what became of each; then the residual.
void SpeculativePanel::draw_round(const App& app, int sel) {
  const Session& s = app.session;
  const SpeculativeRound& r = s.speculation().result().rounds[static_cast<size_t>(sel)];
  const int k = sel + 1;
  const bool rejected = r.accepted < r.K;
  heading_ = "Round " + std::to_string(k) + " of " + std::to_string(s.speculation().result().rounds.size()) + ": " +
             std::to_string(r.accepted) + " of " + std::to_string(r.K) + " proposals accepted, then “" +
             token_label(s.tokenizer(), r.y) + "” " + (rejected ? "from the residual p′" : "from p_{K′+1}") +
             " (one target pass over " + std::to_string(r.fed + r.K) + " tokens)";
  wrapped_colored(accent_color(app.settings.dark), heading_);
  const float fs = ImGui::GetFontSize();
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("proposals", 6, flags)) {
    ImGui::TableSetupColumn("i", ImGuiTableColumnFlags_WidthFixed, fs * 1.5f);
    ImGui::TableSetupColumn("x̃", ImGuiTableColumnFlags_WidthFixed, fs * 3.0f);
    ImGui::TableSetupColumn("q (draft)", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("p (target)", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("r, u", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("r = 4.1e-05").x);
    ImGui::TableSetupColumn("verdict", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("discarded").x);
    ImGui::TableHeadersRow();
    for (int i = 0; i < r.K; ++i) draw_proposal_row(app, r, i);
    ImGui::EndTable();
  }
  if (rejected) draw_residual(app, r);
}

void SpeculativePanel::draw_proposal_row(const App& app, const SpeculativeRound& r, int i) const {
  const bool dark = app.settings.dark;
  const int t = r.proposals[static_cast<size_t>(i)] - 1;
  const bool examined = i < static_cast<int>(r.ratio.size());
  const bool accepted = i < r.accepted;
  ImGui::TableNextRow();
  if (examined && !accepted) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, highlight_bg(dark));
  ImGui::TableNextColumn();
  ImGui::Text("%d", i + 1);
  ImGui::TableNextColumn();
  ImGui::PushFont(app.fonts.mono);
  ImGui::TextUnformatted(token_label(app.session.tokenizer(), t + 1).c_str());
  ImGui::PopFont();
  const float q = r.q[static_cast<size_t>(i)](t), p = r.p[static_cast<size_t>(i)](t);
  ImGui::TableNextColumn();
  number_bar(app, prob(q), kNumberWidth, q, 1.0f, false, dark ? IM_COL32(230, 140, 70, 255) : IM_COL32(200, 100, 30, 255));
  ImGui::TableNextColumn();
  number_bar(app, prob(p), kNumberWidth, p, 1.0f, false, dark ? IM_COL32(90, 160, 230, 255) : IM_COL32(40, 100, 190, 255));
  ImGui::TableNextColumn();
  if (examined) {
    const std::string ru = "r = " + prob(r.ratio[static_cast<size_t>(i)]) +
                           (r.u.empty() ? "" : "\nu = " + prob(r.u[static_cast<size_t>(i)]));
    ImGui::TextUnformatted(ru.c_str());
    item_tooltip("r = p_i(x̃_i)/q_i(x̃_i); accepted when u < min(1, r)" +
                 std::string(r.u.empty() ? " (τ = 0: no draw, accepted when r = 1, i.e. the target's argmax agrees)" : ""));
  }
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(accepted ? "accepted" : examined ? "rejected" : "discarded");
}

// The residual p′ = norm(max(0, p_i − q_i)) beside p_i and q_i, at its largest entries.
void SpeculativePanel::draw_residual(const App& app, const SpeculativeRound& r) const {
  const VecF& p = r.p[static_cast<size_t>(r.accepted)];
  const VecF& q = r.q[static_cast<size_t>(r.accepted)];
  std::vector<int> order(static_cast<size_t>(r.residual.size()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return r.residual(a) > r.residual(b); });
  const int rows = std::min(kResidualRows, static_cast<int>(order.size()));
  ImGui::Spacing();
  math_text(app.fonts, "Residual p′ = norm(max(0, p_i − q_i)) at i = " + std::to_string(r.accepted + 1));
  wrapped_note(("y = “" + token_label(app.session.tokenizer(), r.y) + "” was drawn from it (its row is marked).").c_str());
  const float fs = ImGui::GetFontSize();
  const bool dark = app.settings.dark;
  if (!begin_bar_table("residual", {"token", fs * 3.0f, "p − q", fs * 4.0f, "p′ (residual)", "p (target)"},
                       std::max(fs * 8.0f, ImGui::GetContentRegionAvail().y)))
    return;
  for (int k = 0; k < rows; ++k) {
    const int v = order[static_cast<size_t>(k)];
    ImGui::TableNextRow();
    if (v == r.y - 1) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, highlight_bg(dark));
    ImGui::TableNextColumn();
    ImGui::PushFont(app.fonts.mono);
    ImGui::TextUnformatted(token_label(app.session.tokenizer(), v + 1).c_str());
    ImGui::PopFont();
    ImGui::TableNextColumn();
    ImGui::Text("%+.3f", static_cast<double>(p(v)) - static_cast<double>(q(v)));
    ImGui::TableNextColumn();
    number_bar(app, prob(r.residual(v)), kNumberWidth, r.residual(v), 1.0f, false, accent_color(dark));
    ImGui::TableNextColumn();
    number_bar(app, prob(p(v)), kNumberWidth, p(v), 1.0f, false, dark ? IM_COL32(90, 160, 230, 255) : IM_COL32(40, 100, 190, 255));
  }
  ImGui::EndTable();
}

}  // namespace sf
