#include "app/panels/toolbar_panel.hpp"

#include <cmath>
#include <cstdio>

#include "app/panels/panel.hpp"
#include "app/widgets/flow.hpp"
#include "core/arch/vit.hpp"
#include "core/tokenizers/utf8.hpp"
#include "imgui_stdlib.h"

namespace sf {

namespace {

// The step buttons, left to right: what each does, its label and its tooltip.
enum class Step { Restart, BackOver, Back, Into, Over, Out, Continue };
struct StepButton {
  Step step;
  const char* label;
  const char* icon;  // the label where the toolbar is too narrow for the full ones ("###": the same ID)
  const char* tip;
};
constexpr StepButton kStepButtons[] = {
    {Step::Restart, "⟲ Restart", "⟲###Restart", "Restart: back to the first line (Ctrl+R)"},
    {Step::BackOver, "◀◀ Back over", "◀◀###Back over", "Step back over: the previous step at this depth or above (Shift+F10)"},
    {Step::Back, "◀ Back", "◀###Back", "Step back one event (Shift+F9)"},
    {Step::Into, "Into ▶", "▶###Into", "Step into (F11): the next event, entering calls and sub-steps"},
    {Step::Over, "Over ▶▶", "▶▶###Over", "Step over (F10): the next line at this depth, running calls inside it"},
    {Step::Out, "Out ▲", "▲###Out", "Step out (Shift+F11): finish this algorithm and return to the calling line"},
    {Step::Continue, "Continue ▶|", "▶|###Continue", "Continue (F5) to the next breakpoint (click a line number to set one)"},
};

bool step_enabled(Step step, size_t k, size_t n) {
  switch (step) {
    case Step::Restart: return true;
    case Step::BackOver:
    case Step::Back: return k > 0;
    default: return k + 1 < n;
  }
}

void take_step(Session& s, Step step) {
  switch (step) {
    case Step::Restart: s.restart(); break;
    case Step::BackOver: s.step_back_over(); break;
    case Step::Back: s.step_back(); break;
    case Step::Into: s.step_into(); break;
    case Step::Over: s.step_over(); break;
    case Step::Out: s.step_out(); break;
    case Step::Continue: s.continue_run(); break;
  }
}

bool step_button(const StepButton& b, bool compact, bool enabled) {
  ImGui::BeginDisabled(!enabled);
  const bool clicked = ImGui::Button(compact ? b.icon : b.label);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(b.tip);
    ImGui::EndTooltip();
  }
  ImGui::SameLine();
  return clicked;
}

// The width the step buttons take, the spacing after each included.
float step_buttons_width(bool compact) {
  const ImGuiStyle& st = ImGui::GetStyle();
  float w = 0;
  for (const StepButton& b : kStepButtons)
    w += ImGui::CalcTextSize(compact ? b.icon : b.label, nullptr, true).x + 2 * st.FramePadding.x + st.ItemSpacing.x;
  return w;
}

// The timeline's label for a trace of n events (ImGui's format: %d is the step shown).
std::string timeline_format(size_t n) { return "step %d of " + std::to_string(n); }

// The narrowest timeline that shows its label whole at its widest ("step n of n").
float timeline_min_width(size_t n) {
  const std::string widest = "step " + std::to_string(n) + " of " + std::to_string(n);
  return ImGui::CalcTextSize(widest.c_str()).x + 2 * ImGui::GetStyle().FramePadding.x;
}

// How the first row of a toolbar `width` wide holds the step buttons, the timeline and the
// location text ("Attention line 6 (l=1, h=1)"): all with the buttons' full labels where that fits,
// else with their icons (the names in their tooltips), else the timeline and location on a row
// of their own below the icons. The timeline's label is always whole.
struct ToolbarShape {
  bool compact = false;       // the buttons show their icons only
  bool timeline_row = false;  // the timeline and location have a row of their own
};

ToolbarShape toolbar_shape(const Session& s, float width) {
  const float timeline = ImGui::GetFontSize() + timeline_min_width(s.trace().size()) + ImGui::GetStyle().ItemSpacing.x +
                         ImGui::CalcTextSize(describe_event(s.current()).c_str()).x;
  const float room = width - 2 * ImGui::GetStyle().WindowPadding.x;
  if (step_buttons_width(false) + timeline <= room) return {false, false};
  return {true, step_buttons_width(true) + timeline > room};
}

// Red underlines under the characters that are not in the vocabulary.
void mark_unknown(const std::vector<UnknownChar>& bad, const std::string& text, ImVec2 frame_min) {
  if (bad.empty()) return;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 pad = ImGui::GetStyle().FramePadding;
  const float y = frame_min.y + pad.y + ImGui::GetFontSize() + 1.0f;
  for (const auto& u : bad) {
    if (u.byte > text.size()) continue;
    const float x0 = ImGui::CalcTextSize(text.c_str(), text.c_str() + u.byte).x;
    const float x1 = ImGui::CalcTextSize(text.c_str(), text.c_str() + u.byte + u.chr.size()).x;
    dl->AddRectFilled(ImVec2(frame_min.x + pad.x + x0, y), ImVec2(frame_min.x + pad.x + std::max(x1, x0 + 4), y + 2.5f),
                      IM_COL32(240, 60, 60, 255));
  }
}

// A red "STALE" badge after the last item: the trace shown is not of the text typed there.
void stale_badge(const std::string& why) {
  ImGui::SameLine();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const ImVec2 pad = ImGui::GetStyle().FramePadding;
  const ImVec2 ts = ImGui::CalcTextSize("STALE");
  ImGui::Dummy(ImVec2(ts.x + pad.x * 2, ts.y + pad.y * 2));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, ImVec2(p.x + ts.x + pad.x * 2, p.y + ts.y + pad.y * 2), IM_COL32(200, 40, 40, 255), 3.0f);
  dl->AddText(ImVec2(p.x + pad.x, p.y + pad.y), IM_COL32(255, 255, 255, 255), "STALE");
  item_tooltip(why);
}

}  // namespace

float ToolbarPanel::height(const App& app, float width) {
  const Session& s = app.session;
  const ImGuiStyle& style = ImGui::GetStyle();
  const int rows = toolbar_shape(s, width).timeline_row ? 3 : 2;  // the buttons, [the timeline,] the prompt
  const int errors = !s.prompt_input().error.empty() + !s.context_input().error.empty();
  return std::round(static_cast<float>(rows) * ImGui::GetFrameHeight() +
                    static_cast<float>(rows - 1) * style.ItemSpacing.y + 2 * style.WindowPadding.y +
                    ImGui::GetFontSize() * 1.4f * static_cast<float>(errors));
}

void ToolbarPanel::draw(App& app) {
  Session& s = app.session;
  const Trace& t = s.trace();
  const size_t n = t.size();
  const size_t k = s.cursor();
  const ToolbarShape shape = toolbar_shape(s, ImGui::GetWindowWidth());
  for (const StepButton& b : kStepButtons)
    if (step_button(b, shape.compact, step_enabled(b.step, k, n))) take_step(s, b.step);
  app.ui.viewed_event = s.cursor() == k ? app.ui.viewed_event : SIZE_MAX;

  // The timeline, its label whole: beside the buttons where it fits, else on a row of its own.
  const std::string where = describe_event(s.current());
  if (shape.timeline_row) ImGui::NewLine();
  else ImGui::SameLine(0, ImGui::GetFontSize());
  const float after = ImGui::CalcTextSize(where.c_str()).x + ImGui::GetStyle().ItemSpacing.x;
  const float avail = ImGui::GetContentRegionAvail().x;
  int step = static_cast<int>(k) + 1;
  ImGui::SetNextItemWidth(std::max(timeline_min_width(n), std::min(avail * 0.45f, avail - after)));
  if (ImGui::SliderInt("##timeline", &step, 1, static_cast<int>(std::max<size_t>(n, 1)), timeline_format(n).c_str())) {
    s.jump(static_cast<size_t>(step - 1));
    app.ui.viewed_event = SIZE_MAX;
  }
  item_tooltip("Timeline: drag to jump to any step (Ctrl+click to type a step number)");
  ImGui::SameLine();
  ImGui::TextDisabled("%s", where.c_str());
  if (s.tracing()) {  // a big model traces off the UI thread: what is shown is the previous run
    const TraceProgress p = s.trace_progress();
    ImGui::SameLine();
    char text[160];
    if (p.total > 0)
      std::snprintf(text, sizeof text, "tracing layer %d of %d… (%.1f s)", std::min(p.done + 1, p.total), p.total,
                    p.seconds);
    else
      std::snprintf(text, sizeof text, "tracing %s… (%.1f s)", p.what.c_str(), p.seconds);
    ImGui::ProgressBar(p.total > 0 ? static_cast<float>(p.done) / static_cast<float>(p.total)
                                   : static_cast<float>(std::fmod(p.seconds, 1.0)),
                       ImVec2(ImGui::GetFontSize() * 16.0f, 0), text);
    item_tooltip(p.what + " runs off the UI thread (a model of " + std::to_string(s.model().table.total()) +
                 " parameters): the steps shown are those of the previous run until it is done. Editing the prompt "
                 "again starts over.");
  }

  // The prompt (and, for a model with a context, z): editing re-runs the traced forward pass at once.
  if (!synced_ || (!ImGui::IsAnyItemActive() && (prompt_buf_ != s.prompt() || context_buf_ != s.context()))) {
    prompt_buf_ = s.prompt();
    context_buf_ = s.context();
    synced_ = true;
  }
  const bool ctx = s.arch().has_context();
  // Narrower while a training trace is shown (its stepped sequence shares the line) or with a
  // context (two fields), and never more than a share of the toolbar, so that the tokens after
  // the field stay on screen at large fonts.
  const bool training = s.run_kind() == RunKind::Training;
  const bool two = ctx || training;
  const float field_w =
      std::min(ImGui::GetFontSize() * (two ? 14.0f : 22.0f), ImGui::GetWindowWidth() * (two ? 0.15f : 0.35f));
  if (ctx) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Context z:");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(field_w);
    if (ImGui::InputText("##context", &context_buf_)) s.set_context(context_buf_);
    mark_unknown(s.context_input().unknown, context_buf_, ImGui::GetItemRectMin());
    item_tooltip("The encoder's input z, tokenized as [<bos>, its characters…, <eos>] as training pairs are. "
                 "Characters outside the model's vocabulary are underlined in red.");
    if (!s.context_input().error.empty())
      stale_badge("The trace is of the last context z that could be encoded, not of the one typed here: fix it "
                  "to trace again.");
    ImGui::SameLine();
    ImGui::TextDisabled("ℓ_z = %zu", s.tokens_z().size());
    ImGui::SameLine(0, ImGui::GetFontSize());
  } else {
    ImGui::AlignTextToFramePadding();
  }
  if (s.reads_image()) {  // a vision transformer reads an image, not a prompt: the Vision tab chooses it
    const int n = s.vision().test_index();
    const std::string which = n > 0 ? "test digit " + std::to_string(n) : "drawn by hand";
    ImGui::TextUnformatted("Image x:");
    ImGui::SameLine();
    const std::string what = which + ", 8×8, ℓ_x = " + std::to_string(vit_tokens(s.model().config.patch)) + " tokens";
    same_line_if_fits(ImGui::CalcTextSize(what.c_str()).x);
    ImGui::TextDisabled("%s", what.c_str());
    item_tooltip("ℓ_x counts the class token and the patches.");
    const char* choose = "Vision tab…";
    same_line_if_fits(ImGui::CalcTextSize(choose).x + 2 * ImGui::GetStyle().FramePadding.x);
    if (ImGui::SmallButton(choose)) app.ui.show.vision = true;
    item_tooltip("Not in the paper: a vision transformer's input x is an 8×8 image (intensities 0 … 16), not text. "
                 "The Vision tab picks a held-out test digit or draws one; Algorithm 9 runs on it as it changes.");
    if (!s.prompt_input().error.empty())
      ImGui::TextColored(ImVec4(1.0f, 0.4f, 0.35f, 1.0f), "%s", s.prompt_input().error.c_str());
    return;
  }
  const char* prompt_label = s.run_kind() == RunKind::Generate   ? "Prompt x (generating):"
                             : s.run_kind() == RunKind::Training ? "Prompt x:"
                             : s.run_kind() == RunKind::Translate ? "x (editing returns to the forward pass):"
                             : ctx                                ? "x (teacher-forced):"
                                                                  : "Prompt x:";
  ImGui::TextUnformatted(prompt_label);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(field_w);
  if (app.ui.focus_prompt) {
    ImGui::SetKeyboardFocusHere();
    app.ui.focus_prompt = false;
  }
  if (ImGui::InputText("##prompt", &prompt_buf_)) s.set_prompt(prompt_buf_);
  mark_unknown(s.prompt_input().unknown, prompt_buf_, ImGui::GetItemRectMin());
  item_tooltip(ctx ? "The decoder's input x, tokenized as [<bos>, its characters…]: the forward pass reads it whole "
                     "(teacher forcing), as training does. Underlined in red: not in the vocabulary."
                   : "The prompt is tokenized as [<bos>, its pieces…] (the paper's §4), by the model's tokenizer. Write "
                     "[MASK], [BOS], [EOS] for the special tokens (or the model's own, e.g. <|endoftext|>). Pieces "
                     "outside the model's vocabulary are underlined in red.");
  const std::string traced = "“" + s.tokenizer().decode_text(s.tokens()) + "”";
  if (s.trace_stale() && !s.prompt_input().error.empty())
    stale_badge("The trace is of " + traced + ", the last prompt that could be encoded, not of the one typed here: "
                "fix the prompt to trace again.");
  if (training) {  // the update's own sequence, not the prompt re-encoded
    const Tokens& x_n = s.stepped_sequence();
    ImGui::SameLine();
    ImGui::TextDisabled("stepped x_n (read-only), ℓ = %zu:", x_n.size());
    item_tooltip("The sequence the traced training update reads: x_n of the training data, not the prompt. "
                 "Editing the prompt returns to the forward pass.");
    ImGui::SameLine();
    token_chips(app, x_n, ImGui::GetContentRegionAvail().x);
  } else {
    ImGui::SameLine();
    ImGui::TextDisabled(s.trace_stale() ? "ℓ = %zu (stale):" : "ℓ = %zu:", s.tokens().size());
    item_tooltip("The prompt's tokens as " + s.tokenizer().describe() +
                 " cuts it: each piece with its paper id (1-based; for the ecosystem's files, the file's id + 1). "
                 "Hover a piece for its ids." +
                 (s.trace_stale() ? " Stale: these are the tokens of " + traced + ", which the trace shows." : ""));
    ImGui::SameLine();
    token_chips(app, s.tokens(), ImGui::GetContentRegionAvail().x);
  }
  auto show_error = [&](const std::string& what, const std::string& err) {
    if (err.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.4f, 0.35f, 1.0f));
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted((what + err).c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
  };
  show_error(ctx ? "x: " : "", s.prompt_input().error);
  if (ctx) show_error("z: ", s.context_input().error);
}

}  // namespace sf
