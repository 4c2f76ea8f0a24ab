#include "app/panels/sampling_panel.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "app/mathtext.hpp"
#include "app/panels/paged_kv_view.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/sampling_cut.hpp"
#include "app/widgets/bar_table.hpp"
#include "app/widgets/flow.hpp"
#include "app/widgets/labelled.hpp"
#include "app/widgets/wording.hpp"

namespace sf {

namespace {

constexpr int kTopK = 20;

std::string prob(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, x != 0.0f && x < 0.0005f ? "%.1e" : "%.3f", x);
  return buf;
}

// The first event of `alg` (kind, line) whose generation step is i; size() when none.
size_t find_event(const Trace& tr, int alg, EventKind kind, int line, int i) {
  for (size_t j = 0; j < tr.size(); ++j) {
    const Event& e = tr.events[j];
    if (e.alg == alg && e.kind == kind && e.line == line && e.idx.i == i) return j;
  }
  return tr.size();
}

const Value* find_value(const Event& e, const char* name) {
  for (const auto& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}

// ℓ: the length of the prompt Algorithm 14 was called with (its Enter event's x); 0 when not traced.
int prompt_length(const Trace& tr) {
  const size_t enter = find_event(tr, 14, EventKind::Enter, 0, 0);
  const Value* x = enter < tr.size() ? find_value(tr.events[enter], "x") : nullptr;
  return x ? static_cast<int>(x->tokens.size()) : 0;
}

// The steps of the traced Algorithm 14 run; 0 when the trace is the forward pass.
size_t traced_steps(const Session& s) {
  return s.run_kind() == RunKind::Generate ? s.generation().result().steps.size() : 0;
}

// τ as traced (Algorithm 14's input), to compare with τ as set now; nullptr when not traced.
const Value* traced_tau(const Trace& tr) {
  const size_t enter = find_event(tr, 14, EventKind::Enter, 0, 0);
  return enter < tr.size() ? find_value(tr.events[enter], "τ") : nullptr;
}

}  // namespace

int tokens_fed(const Trace& tr, const InferenceStep& step, int i) {
  // Step i reads x = the prompt and the i − 1 tokens drawn before it, from context_start on.
  return prompt_length(tr) + (i - 1) - (step.context_start - 1);
}

std::string step_heading(const InferenceStep& step, int i, int n_steps, int fed, bool kv_cache) {
  const std::string col = std::to_string(step.context_start - 1 + fed);  // ℓ + i − 1 in the whole x
  std::string h = "Step i = " + std::to_string(i) + " of " + std::to_string(n_steps) + ": P ← DTransformer(x) on " +
                  std::to_string(fed) + " tokens, p = P[:, " + col + "]";
  if (kv_cache && !step.cache_rebuilt)
    h += " (KV cache: only this column computed, over the cached K, V of the " + std::to_string(fed - 1) +
         " before it)";
  else if (kv_cache)
    h += " (KV cache rebuilt: every column computed)";
  return h;
}

void SamplingPanel::draw(App& app) {
  // Algorithm 14-S traced (speculative_panel.cpp): its own controls and rounds replace Algorithm 14's.
  if (app.session.run_kind() == RunKind::Speculate) {
    speculative_.draw(app);
    return;
  }
  draw_controls(app);
  draw_commands(app);
  speculative_.draw(app);
  const int sel = selected_step(app);
  draw_generated_text(app, sel);
  ImGui::Separator();
  heading_.clear();
  cut_label_.clear();
  if (!draw_run_status(app) || sel < 0) return;
  const InferenceStep& step = app.session.generation().result().steps[sel];
  const std::vector<int> order = order_by_decreasing(step.p);  // the order top-k / top-p cut in
  const int y_rank = static_cast<int>(std::find(order.begin(), order.end(), step.y - 1) - order.begin());
  cut_label_ = traced_cut_label(app.session.trace(), lines::d_inference::sample, sel + 1, static_cast<int>(step.p.size()));
  draw_step_details(app, sel, y_rank);
  if (step.block_table.block_size > 0) draw_paged_kv_view(app, step.block_table, "x");
  draw_p_and_q_bars(app, step, order, y_rank);
}

// The hyperparameters of Algorithm 14: τ, ℓ_gen, the seed, and the three choices not in the paper.
void SamplingPanel::draw_controls(App& app) {
  SamplingSettings& st = app.session.generation().settings;
  const ModelConfig& c = app.session.model().config;
  const float fs = ImGui::GetFontSize();
  float tau = static_cast<float>(st.tau);
  if (ImGui::SliderFloat(fitted_label("τ (temperature)", fs * 13.0f).c_str(), &tau, 0.0f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic))
    st.tau = std::clamp(static_cast<double>(tau), 0.0, 100.0);
  item_tooltip("q ∝ p^(1/τ). τ = 0 is argmax (the most likely token every time; the formula is undefined at 0), "
               "τ = 1 samples from the model's p as it is, and a large τ flattens q towards uniform (§7). "
               "Ctrl+click the slider to type a value.");
  aside(st.tau <= 0 ? "argmax" : st.tau == 1 ? "sample from p itself" : st.tau < 1 ? "sharper than p" : "flatter than p");
  draw_top_k_top_p_controls(st.cut, c.N_V(), "");
  int l_gen = st.l_gen;
  if (ImGui::InputInt(fitted_label("ℓ_gen", fs * 7.0f).c_str(), &l_gen)) st.l_gen = std::clamp(l_gen, 1, 4096);
  item_tooltip("How many tokens \"Generate ℓ_gen tokens\" draws (Algorithm 14's loop, line 2).");
  same_line_if_fits(field_width("seed", fs * 8.0f));
  const uint64_t one = 1;
  ImGui::InputScalar(fitted_label("seed", fs * 8.0f).c_str(), ImGuiDataType_U64, &st.seed, &one);
  item_tooltip("The sampling generator's seed: the same seed and settings give the same tokens. A run that "
               "continues after k generated tokens seeds it with seed + k.");
  wrapped_checkbox("Trim context to ℓ_max", &st.trim_context);
  item_tooltip("When the prompt and the generated text outgrow ℓ_max = " + std::to_string(c.l_max) +
               ", feed only the last ℓ_max tokens to DTransformer. Off: generation stops at ℓ_max, because the "
               "paper's DTransformer cannot take a longer x.");
  aside("(Carpenter's COMPLETE_TEXT, not in the paper)");
  wrapped_checkbox("KV cache", &st.kv_cache);
  item_tooltip("Each generation step runs DTransformer for the new token's column only: every self-attention "
               "keeps K and V of the earlier tokens and appends the new column (the trace shows the cache "
               "growing). The same p, q and tokens as recomputing every column. Rebuilt after trimming or when "
               "a prefix separator first appears.");
  aside("(not in the paper: encyclopedia article, seed 004)");
  draw_paged_kv_controls(st.kv_cache, st.paged, st.kv_block_size);
  wrapped_checkbox("Stop at eos_token", &st.stop_at_eos);
  item_tooltip("Generation ends once the model draws eos_token (" + token_label(app.session.tokenizer(), c.eos_token()) +
               "), as the CLI's --stop-at-eos does. Off: Algorithm 14 as printed, which draws all ℓ_gen tokens, "
               "so a model that has ended its text goes on drawing eos_token after eos_token.");
  aside("(not in the paper's Algorithm 14)");
}

// The buttons that trace a generation, clear it, or go back to the forward pass.
void SamplingPanel::draw_commands(App& app) {
  Session& s = app.session;
  auto ran = [&] {
    app.ui.viewed_event = SIZE_MAX;
    step_ = -1;
  };
  if (ImGui::Button("Generate next token")) {
    s.trace_generate(1, true);
    ran();
  }
  item_tooltip("Ctrl+G. Traces Algorithm 14 with ℓ_gen = 1, continuing the text generated so far.");
  const std::string gen_all = "Generate ℓ_gen = " + std::to_string(s.generation().settings.l_gen) + " tokens";
  same_line_if_fits(button_width(gen_all.c_str()));
  if (ImGui::Button(gen_all.c_str())) {
    s.trace_generate(s.generation().settings.l_gen, false);
    ran();
  }
  item_tooltip("Starts again from the prompt and traces Algorithm 14 drawing ℓ_gen tokens.");
  same_line_if_fits(button_width("Clear"));
  if (ImGui::Button("Clear")) {
    s.clear_generation();
    ran();
  }
  item_tooltip("Forgets the generated text and traces the forward pass (Algorithm 10) on the prompt.");
  same_line_if_fits(button_width("Back to the forward pass"));
  ImGui::BeginDisabled(s.run_kind() == RunKind::Forward);
  if (ImGui::Button("Back to the forward pass")) {
    s.trace_forward();
    ran();
  }
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    item_tooltip("Traces Algorithm 10 on the prompt again. The generated text is kept: \"Generate next token\" "
                 "continues it.");
}

// The selected step (0-based; -1 when no generation is traced): the last, unless the learner picked
// one or the cursor is inside another. A new generation resets it to the last.
int SamplingPanel::selected_step(const App& app) {
  const size_t n_steps = traced_steps(app.session);
  if (app.session.generation().generated().size() != generated_seen_) {
    generated_seen_ = app.session.generation().generated().size();
    step_ = -1;
  }
  const size_t shown = app.shown_event();
  if (shown != followed_) {
    followed_ = shown;
    const Trace& tr = app.session.trace();
    const int i = shown < tr.size() ? tr.events[shown].idx.i : 0;
    if (i >= 1 && static_cast<size_t>(i) <= n_steps) step_ = i - 1;
  }
  return n_steps == 0 ? -1 : step_ < 0 || static_cast<size_t>(step_) >= n_steps ? static_cast<int>(n_steps) - 1 : step_;
}

// The text so far: prompt, earlier tokens, and this run's tokens (click one to select its step).
void SamplingPanel::draw_generated_text(const App& app, int sel) {
  const Session& s = app.session;
  const size_t n_steps = traced_steps(s);
  ImGui::Separator();
  ImGui::TextUnformatted("Text so far");
  aside(n_steps ? "(prompt dim; click a token generated in this trace to see its p and q)" : "(prompt dim)");
  const Tokens& gtoks = s.generation().generated();
  const size_t first_traced = gtoks.size() - n_steps;  // generated() ends with this run's tokens
  const float fs = ImGui::GetFontSize();
  ImGui::PushFont(app.fonts.mono);
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(1.0f, fs * 0.25f));
  bool first = true;
  for (size_t k = 0; k < s.tokens().size(); ++k) draw_token_chip(app, s.tokens()[k], ChipKind::Prompt, k, sel, first);
  for (size_t k = 0; k < gtoks.size(); ++k) {
    const bool traced = k >= first_traced;
    draw_token_chip(app, gtoks[k], traced ? ChipKind::ThisRun : ChipKind::Earlier, traced ? k - first_traced : k, sel,
                    first);
  }
  ImGui::PopStyleVar();
  ImGui::PopFont();
  if (gtoks.empty()) ImGui::TextDisabled("Nothing generated yet.");
  else if (first_traced > 0) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("The %s without a box came from earlier runs: part of x now, but not traced in this run.",
                        counted(static_cast<long long>(first_traced), "token").c_str());
    ImGui::PopTextWrapPos();
  }
}

// One token of the text: a box to click for this run's tokens (k = its step), plain text otherwise.
void SamplingPanel::draw_token_chip(const App& app, int id, ChipKind kind, size_t k, int sel, bool& first) {
  const bool dark = app.settings.dark;
  const float fs = ImGui::GetFontSize();
  const ImU32 accent = accent_color(dark);
  const ImVec2 pad(fs * 0.12f, fs * 0.1f);
  const std::string label = token_label(app.session.tokenizer(), id);
  const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
  const ImVec2 size(ts.x + pad.x * 2, ts.y + pad.y * 2);
  if (!first) same_line_if_fits(size.x);
  first = false;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::PushID(static_cast<int>(k) + static_cast<int>(kind) * 100000);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (kind == ChipKind::ThisRun) {
    if (ImGui::InvisibleButton("tok", size)) {
      step_ = static_cast<int>(k);
      followed_ = app.shown_event();
    }
    item_tooltip("Step i = " + std::to_string(k + 1) + ": “" + label + "” (id " + std::to_string(id) +
                 "). Click to see the p and q it was drawn from.");
    dl->AddRectFilled(p, ImVec2(p.x + size.x, p.y + size.y),
                      static_cast<int>(k) == sel ? highlight_bg(dark) : ImGui::GetColorU32(ImGuiCol_FrameBg), 3.0f);
    if (ImGui::IsItemHovered())
      dl->AddRect(p, ImVec2(p.x + size.x, p.y + size.y), accent, 3.0f);
  } else {
    ImGui::Dummy(size);
  }
  const ImU32 text = kind == ChipKind::Prompt    ? ImGui::GetColorU32(ImGuiCol_TextDisabled)
                     : kind == ChipKind::ThisRun ? accent
                                                 : ImGui::GetColorU32(ImGuiCol_Text);
  dl->AddText(ImVec2(p.x + pad.x, p.y + pad.y), text, label.c_str());
  ImGui::PopID();
}

// What the trace is: the forward pass (with how to trace a generation; returns false), or a
// generation (how it stopped, and whether τ changed since; returns true).
bool SamplingPanel::draw_run_status(const App& app) const {
  const Session& s = app.session;
  if (s.run_kind() != RunKind::Generate) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("The trace is the forward pass (Algorithm 10) on the prompt. Generate to trace Algorithm 14: "
                        "each generation step is then a traced run of DTransformer you can step into (F11 on "
                        "Algorithm 14 line 2 enters line 3's call).");
    ImGui::PopTextWrapPos();
    return false;
  }
  const ImU32 accent = accent_color(app.settings.dark);
  const std::string& stopped = s.generation().result().stopped;
  if (!stopped.empty()) wrapped_colored(accent, "Generation " + stopped + ".");
  const Value* tau_v = traced_tau(s.trace());
  if (tau_v && tau_v->m(0, 0) != static_cast<float>(s.generation().settings.tau)) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(ImColor(accent), "τ is now %.3g, but this trace drew with τ = %.3g: q will change on the next "
                                        "generation.",
                       s.generation().settings.tau, tau_v->m(0, 0));
    ImGui::PopTextWrapPos();
  }
  return true;
}

// The selected step i = sel + 1: its heading, the sampled y, and buttons to its DTransformer call and its draw.
void SamplingPanel::draw_step_details(App& app, int sel, int y_rank) {
  Session& s = app.session;
  const Trace& tr = s.trace();
  const InferenceStep& step = s.generation().result().steps[sel];
  const ImU32 accent = accent_color(app.settings.dark);
  const int i = sel + 1;
  const int fed = tokens_fed(tr, step, i);
  heading_ = step_heading(step, i, static_cast<int>(traced_steps(s)), fed, s.traced_with_kv_cache());
  wrapped_colored(accent, heading_);
  wrapped_colored(accent, "sampled y = “" + token_label(s.tokenizer(), step.y) + "” (id " + std::to_string(step.y) +
                              ", rank " + std::to_string(y_rank + 1) + " by p):  p(y) = " + prob(step.p(step.y - 1)) +
                              ",  q(y) = " + prob(step.q(step.y - 1)));
  if (step.context_start > 1)
    ImGui::TextDisabled("Context trimmed: the model saw only x[%d:%d], the last ℓ_max tokens.", step.context_start,
                        step.context_start - 1 + fed);
  jump_button(app, "Go to line 3's DTransformer call", find_event(tr, 10, EventKind::Enter, 0, i));
  same_line_if_fits(button_width("Go to line 5 (the draw)"));
  jump_button(app, "Go to line 5 (the draw)", find_event(tr, 14, EventKind::Line, 5, i));
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("Each generation step is a traced run of DTransformer (Algorithm 10): with the cursor on "
                      "Algorithm 14 line 2, F11 steps into line 3's call and F10 steps over it.");
  ImGui::PopTextWrapPos();
}

// A small button that moves the cursor to event `to` (disabled when the trace has no such event).
void SamplingPanel::jump_button(App& app, const char* label, size_t to) {
  ImGui::BeginDisabled(to >= app.session.trace().size());
  if (ImGui::SmallButton(label)) {
    app.session.jump(to);
    app.ui.viewed_event = SIZE_MAX;
    followed_ = app.shown_event();
  }
  ImGui::EndDisabled();
}

// p and q over the vocabulary, sorted by p: the top kTopK rows (or all), and the sampled y's row below them.
void SamplingPanel::draw_p_and_q_bars(const App& app, const InferenceStep& step, const std::vector<int>& order,
                                      int y_rank) {
  const int N = static_cast<int>(step.p.size());
  const int shown_rows = all_ ? N : std::min(kTopK, N);
  const bool dark = app.settings.dark;
  const PqColors colors{dark ? IM_COL32(90, 160, 230, 255) : IM_COL32(40, 100, 190, 255),
                        dark ? IM_COL32(230, 140, 70, 255) : IM_COL32(200, 100, 30, 255)};
  ImGui::Spacing();
  draw_p_and_q_legend(app, N, shown_rows, colors);
  const float scale = std::max(step.p.maxCoeff(), step.q.maxCoeff());
  const float fs = ImGui::GetFontSize();
  if (!begin_bar_table("pq", {"rank", fs * 2.6f, "token", fs * 4.2f, "p", "q"},
                       std::max(fs * 8.0f, ImGui::GetContentRegionAvail().y)))
    return;
  for (int r = 0; r < shown_rows; ++r) {
    if (r == step.kept && !cut_label_.empty()) draw_cut_line_row(app, cut_label_);
    draw_p_and_q_row(app, step, order[r], r, scale, colors);
  }
  if (y_rank >= shown_rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("…");
    draw_p_and_q_row(app, step, order[y_rank], y_rank, scale, colors);
  }
  ImGui::EndTable();
}

// The "all N_V tokens" checkbox and the colour key of the p and q bars.
void SamplingPanel::draw_p_and_q_legend(const App& app, int N, int shown_rows, const PqColors& colors) {
  const float fs = ImGui::GetFontSize();
  wrapped_checkbox(("all N_V = " + std::to_string(N) + " tokens").c_str(), &all_);
  ImGui::SameLine(0, fs * 1.5f);
  const ImVec2 sw(fs * 0.7f, fs * 0.7f);
  auto swatch = [&](ImU32 col) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + fs * 0.25f), ImVec2(p.x + sw.x, p.y + fs * 0.25f + sw.y), col);
    ImGui::Dummy(ImVec2(sw.x, fs));
    ImGui::SameLine();
  };
  swatch(colors.p);
  math_text(app.fonts, "p (line 4)");
  const Value* tau_v = traced_tau(app.session.trace());
  const std::string q_label = (cut_label_.empty() ? "q ∝ p^{1/τ} (line 5)" : "q: q ∝ p^{1/τ} renormalised over the kept tokens (line 5)") +
                              std::string(tau_v && tau_v->m(0, 0) <= 0 ? ": τ = 0, argmax" : "");
  same_line_if_fits(sw.x + ImGui::GetStyle().ItemSpacing.x + math_text_size(app.fonts, q_label).x);
  swatch(colors.q);
  math_text(app.fonts, q_label);
  if (!all_) aside(("top " + std::to_string(shown_rows) + " by p").c_str());
  if (!cut_label_.empty()) aside("(faded: cut by top-k / top-p, q = 0)");
}

// The row of token v (0-based) at rank `rank` (0-based), highlighted when v is the sampled y.
void SamplingPanel::draw_p_and_q_row(const App& app, const InferenceStep& step, int v, int rank, float scale,
                                     const PqColors& colors) const {
  const bool dark = app.settings.dark;
  const bool sampled = v == step.y - 1;
  const bool cut = rank >= step.kept;  // top-k / top-p cut it (kept = N_V without a cut)
  ImGui::TableNextRow();
  if (sampled) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, highlight_bg(dark));
  ImGui::TableNextColumn();
  ImGui::Text("%d", rank + 1);
  ImGui::TableNextColumn();
  ImGui::PushFont(app.fonts.mono);
  const std::string label = token_label(app.session.tokenizer(), v + 1);
  if (sampled) ImGui::TextColored(ImColor(accent_color(dark)), "%s ◀", label.c_str());
  else ImGui::TextUnformatted(label.c_str());
  ImGui::PopFont();
  item_tooltip("“" + label + "” (id " + std::to_string(v + 1) + ")" + (sampled ? ": the sampled token y" : "") +
               (cut ? ". Cut by top-k / top-p: q = 0 (before the cut, q ∝ p^(1/τ) = " + prob(step.q_tau(v)) + ")." : ""));
  ImGui::TableNextColumn();
  number_bar(app, prob(step.p(v)), "0.000 ", step.p(v), scale, false, cut ? cut_color(colors.p) : colors.p);
  ImGui::TableNextColumn();
  number_bar(app, prob(step.q(v)), "0.000 ", step.q(v), scale, false, cut ? cut_color(colors.q) : colors.q);
}

}  // namespace sf
