#include "app/panels/pseudocode_panel.hpp"

#include <algorithm>

#include "imgui_internal.h"

#include "app/mathtext.hpp"
#include "app/panels/backward_listing_view.hpp"
#include "app/panels/panel.hpp"
#include "core/pseudocode/backward_listings.hpp"
#include "core/pseudocode/explanations.hpp"
#include "core/pseudocode/pseudocode.hpp"
#include "core/pseudocode/variants.hpp"
#include "imgui_internal.h"  // ImGui::GetCurrentWindow: the window the current line is drawn in

namespace sf {

namespace {

// Where Stepformer departs from the letter of the paper, shown under the algorithm.
const char* implementer_note(int alg) {
  switch (alg) {
    case 6: return "The paper divides by √v, which is 0 for a constant e. Stepformer uses √(v + ε) with the ε of the model's configuration.";
    case 8: return "Line 13 loops over i but the body uses l: a slip in the paper; read it as l.";
    case 9: return "After line 10, X has d_f rows, so W_u must be N_V×d_f; the paper's W_u ∈ ℝ^{N_V×d_e} only works when d_f = d_e.";
    case 10: return "Line 2 is shown stepping into Algorithms 1 and 2 for each token t. Line 9 (end) computes nothing and has no step.";
    case 14: return "τ = 0 means argmax (q ∝ p^(1/τ) is undefined at 0). When x outgrows ℓ_max, the model sees only its last ℓ_max tokens (a labelled option, as Carpenter's COMPLETE_TEXT).";
    case 15: return "Nothing bounds the loop if eos_token is never drawn: a real implementation caps the length at ℓ_max and says so.";
    default: return nullptr;
  }
}

// A small "variant" tag whose left edge is at `left` on a line of height line_h.
void draw_variant_tag(const App& app, ImVec2 left, float line_h, ImU32 color) {
  const char* tag = "variant";
  ImFont* f = app.fonts.mono;
  const float size = f->FontSize * 0.8f;
  const ImVec2 ts = f->CalcTextSizeA(size, FLT_MAX, 0.0f, tag);
  const float pad = size * 0.3f;
  const ImVec2 a(left.x, left.y + (line_h - ts.y) * 0.5f - pad * 0.5f);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRect(a, ImVec2(a.x + ts.x + 2 * pad, a.y + ts.y + pad), color, 3.0f);
  dl->AddText(f, size, ImVec2(a.x + pad, a.y + pad * 0.5f), color, tag);
}

// Whether the last item lies wholly inside the window's visible region (not under its title bar,
// its scrollbar or past its bottom edge).
bool item_wholly_visible() {
  const ImRect clip = ImGui::GetCurrentWindow()->InnerClipRect;
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  return a.y >= clip.Min.y && b.y <= clip.Max.y;
}

// The tooltip of a line of the listing: the forward's plain words, or the backward line's with the
// forward line it is the adjoint of.
void line_tooltip(const App& app, int alg, const PseudoLine& pl, Pass pass) {
  if (pass == Pass::Forward) {
    if (const char* why = explain_line(alg, pl.number); *why) item_tooltip(why);
    return;
  }
  if (!ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36.0f);
  ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "%s, %s", adjoint_name(pl.number).c_str(), kBackwardListingLabel);
  ImGui::TextDisabled("The forward line:");
  if (const PseudoLine* fwd = pseudocode_line(alg, pl.number)) math_text(app.fonts, fwd->text);
  ImGui::TextUnformatted(explain_adjoint(alg, pl.number, app.session.model().config));
  if (!pl.variant.empty()) ImGui::TextColored(ImColor(variant_color(app.settings.dark)), "Variant: %s", pl.variant.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

}  // namespace

// The current line (the last item) is scrolled to the middle when it is not wholly visible and
// something moved it: the cursor (stepping, a lesson stop), the text size (Ctrl+=, F6) or the
// window's size (a resize, a change of layout). Only then, so that the user can still scroll away
// from it.
void PseudocodePanel::keep_in_view(size_t event) {
  const ImVec2 size = ImGui::GetWindowSize();
  const ViewKey key{event, ImGui::GetFontSize(), size.x, size.y};
  if (key == scrolled_for_) return;
  if (!item_wholly_visible()) ImGui::SetScrollHereY(0.5f);
  scrolled_for_ = key;
}

void PseudocodePanel::draw(App& app) {
  std::fill(app.ui.highlight_rect, app.ui.highlight_rect + 4, 0.0f);  // set again below when a line is current
  Session& s = app.session;
  if (s.trace().size() == 0) {
    ImGui::TextDisabled("No trace.");
    return;
  }
  const size_t k = app.shown_event();
  const Event& ev = s.trace().events[k];
  const bool backward = ev.pass == Pass::Backward;
  // The algorithm as the open model runs it: the paper's, with the lines its variants change
  // rewritten and marked (core/pseudocode/variants); or Stepformer's backward listing of it.
  const ModelConfig& config = s.model().config;
  const PseudoAlgorithm listing = backward ? backward_pseudocode_for(ev.alg, config) : pseudocode_for(ev.alg, config, s.traced_with_kv_cache());
  const PseudoAlgorithm* alg = &listing;
  if (alg->number == 0) {
    ImGui::Text("Algorithm %d", ev.alg);
    return;
  }
  const bool dark = app.settings.dark;
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 variant = variant_color(dark);
  ImGui::PushFont(app.fonts.text);
  if (const std::string summary = variant_summary(config); !summary.empty()) {
    math_text(app.fonts, "Variants: " + summary, variant);
    item_tooltip("This model is not the paper's: the lines marked \"variant\" differ from the paper's listing "
                 "(docs/variants.md). Hover a marked line for its source and the paper's line.");
  }
  if (backward) backward_view::draw_label(app);
  const std::string title = "Algorithm " + algorithm_label(alg->number) + (backward ? ", backward: " : ": ") +
                            (alg->signature.empty() ? alg->name : alg->signature) +
                            (not_in_paper(alg->number) ? "   (not in the paper)" : "");
  math_text(app.fonts, title, accent_color(dark));
  // A backward listing's first header line is its label, already drawn as the banner above.
  for (size_t i = backward ? 1 : 0; i < alg->header.size(); ++i) math_text(app.fonts, alg->header[i], dim);
  for (const PseudoLine& h : alg->variant_header) {
    math_text(app.fonts, "variant: " + h.text, variant);
    item_tooltip(h.variant);
  }
  ImGui::Separator();

  const int cur_line = ev.kind == EventKind::Enter ? 0 : ev.line;
  const int cur_step = backward ? backward_view::substep_index(s.trace(), k) : -1;
  const PseudoLine* cur = cur_line ? adjoint_line(listing, cur_line) : nullptr;
  const bool step_shown = cur && cur_step >= 0 && cur_step < static_cast<int>(cur->steps.size());
  shown_ = {app.ui.frame_index, ev.alg, cur_line, ev.pass, backward ? kBackwardListingLabel : "", title, cur ? cur->text : "",
            step_shown ? cur_step : -1, step_shown ? cur->steps[cur_step] : ""};
  for (const auto& pl : alg->lines) draw_line(app, pl, k, cur_line, step_shown ? cur_step : -1);
  if (ev.kind == EventKind::SubStep) {
    ImGui::Spacing();
    ImGui::TextColored(ImColor(accent_color(dark)), "Inside %s %d:", backward ? "the adjoint of line" : "line", ev.line);
    ImGui::SameLine();
    math_text(app.fonts, ev.label);
  }
  if (const char* note = backward ? backward_view::note() : implementer_note(ev.alg)) {
    ImGui::Spacing();
    ImGui::Separator();
    ImGui::TextDisabled(backward ? "Note (Stepformer's backward listing):" : "Note (Stepformer vs the paper):");
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(note);
    ImGui::PopTextWrapPos();
  }
  ImGui::PopFont();
}

// One line of the listing: the gutter (breakpoint, number), the text, a variant's tag, the
// backward line's sub-steps; hovering explains it, clicking jumps to its next execution.
void PseudocodePanel::draw_line(App& app, const PseudoLine& pl, size_t k, int cur_line, int cur_step) {
  Session& s = app.session;
  const Event& ev = s.trace().events[k];
  const bool backward = ev.pass == Pass::Backward;
  const bool dark = app.settings.dark;
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 variant = variant_color(dark);
  const float line_h = ImGui::GetTextLineHeightWithSpacing() * 1.15f;
  const float gutter = ImGui::GetFontSize() * 3.6f;
  const LineRef ref{ev.alg, pl.number, ev.pass};
  ImGui::PushID(&pl);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  const bool is_cur = pl.number != 0 && pl.number == cur_line;
  const bool ran = pl.number != 0 && !is_cur && s.line_ran(k, pl.number);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (is_cur) {
    const float r[4] = {p0.x, p0.y, width, line_h};
    std::copy(r, r + 4, app.ui.highlight_rect);
    app.ui.highlight_frame = app.ui.frame_index, app.ui.highlight_window = ImGui::GetCurrentWindow()->ID;
    dl->AddRectFilled(p0, ImVec2(p0.x + width, p0.y + line_h), highlight_bg(dark), 3.0f);
    dl->AddText(app.fonts.text, app.fonts.text->FontSize, ImVec2(p0.x + gutter - ImGui::GetFontSize() * 1.05f, p0.y),
                accent_color(dark), "▶");
  }
  // Gutter: click to toggle a breakpoint.
  if (pl.number != 0) {
    ImGui::InvisibleButton("gutter", ImVec2(gutter, line_h));
    if (ImGui::IsItemClicked()) s.toggle_breakpoint(ref);
    const std::string which = backward ? "the " + adjoint_name(pl.number) : "line " + std::to_string(pl.number);
    item_tooltip("Click to toggle a breakpoint on " + which + " (F5 continues to it)");
    if (s.has_breakpoint(ref))
      dl->AddCircleFilled(ImVec2(p0.x + ImGui::GetFontSize() * 0.5f, p0.y + line_h * 0.5f), ImGui::GetFontSize() * 0.32f,
                          IM_COL32(220, 50, 50, 255));
    const ImVec2 at(p0.x + ImGui::GetFontSize() * 0.95f, p0.y);
    const ImU32 number_color = ran ? accent_color(dark) : dim;
    if (backward) {
      backward_view::draw_gutter_number(app, at, pl.number, number_color);
    } else {
      char num[8];
      std::snprintf(num, sizeof num, "%2d", pl.number);
      dl->AddText(app.fonts.mono, app.fonts.mono->FontSize, at, number_color, num);
    }
    ImGui::SameLine(0, 0);
  } else {
    ImGui::Dummy(ImVec2(gutter, line_h));
    ImGui::SameLine(0, 0);
  }
  const float indent = ImGui::GetFontSize() * 1.4f * pl.indent;
  const ImVec2 tp(ImGui::GetCursorScreenPos().x + indent, p0.y);
  const bool comment = pl.number == 0;
  ImGui::InvisibleButton("line", ImVec2(std::max(1.0f, width - gutter), line_h));
  if (is_cur) keep_in_view(k);
  const bool marked = !pl.variant.empty();
  const ImU32 color = comment ? dim : marked ? (ran || is_cur ? variant : (variant & 0x00FFFFFFu) | 0xA0000000u) : (ran || is_cur ? text : dim);
  const float text_w = draw_math(app.fonts, tp, pl.text, color);
  if (marked) draw_variant_tag(app, ImVec2(tp.x + text_w + ImGui::GetFontSize() * 0.6f, p0.y), line_h, variant);
  const char* why = explain_line(ev.alg, pl.number);
  if (marked && !backward && ImGui::IsItemHovered()) {
    // The variant, its seed and the paper's line (in the paper's notation), then the why.
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36.0f);
    ImGui::TextColored(ImColor(variant), "Variant: %s", pl.variant.c_str());
    ImGui::TextDisabled("The paper's line:");
    if (const PseudoLine* paper = pseudocode_line(ev.alg, pl.number)) math_text(app.fonts, paper->text);
    if (*why) ImGui::TextUnformatted(why);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  } else if (pl.number != 0) {
    line_tooltip(app, ev.alg, pl, ev.pass);
  }
  if (ImGui::IsItemClicked() && pl.number != 0) {
    // Jump to this line's next execution in the current frame (or the first one).
    const Trace& t = s.trace();
    for (size_t j = s.cursor() + 1; j < t.size(); ++j)
      if (t.events[j].ref() == ref && t.events[j].kind == EventKind::Line) {
        s.jump(j);
        app.ui.viewed_event = SIZE_MAX;
        break;
      }
  }
  if (backward && !pl.steps.empty()) backward_view::draw_steps(app, pl, tp.x, is_cur ? cur_step : -1, ran || is_cur);
  ImGui::PopID();
}

}  // namespace sf
