#include "app/panels/backward_listing_view.hpp"

#include <algorithm>
#include <cstdio>

#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "core/pseudocode/backward_listings.hpp"

namespace sf::backward_view {

void draw_label(const App& app) {
  const ImU32 color = variant_color(app.settings.dark);
  math_text(app.fonts, std::string("⟦") + kBackwardListingLabel + "⟧", color);
  item_tooltip("The paper prints no backward pass. This listing is Stepformer's: each line is the adjoint of the "
               "forward line with the same number (n̄ reads \"adjoint of line n\"), the lines run in reverse order, and "
               "∇S means ∂loss/∂S. The numbers stepped through are the traced backward's.");
}

void draw_gutter_number(const App& app, ImVec2 at, int line, ImU32 color) {
  char num[8];
  std::snprintf(num, sizeof num, "%2d", line);
  ImFont* f = app.fonts.mono;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddText(f, f->FontSize, at, color, num);
  // The bar over the digits only (the padding space is as wide as a digit in the monospace font).
  const float digit = f->CalcTextSizeA(f->FontSize, FLT_MAX, 0.0f, "0").x;
  const float x0 = at.x + (line < 10 ? digit : 0.0f), x1 = at.x + 2 * digit, y = at.y + f->FontSize * 0.08f;
  dl->AddLine(ImVec2(x0, y), ImVec2(x1, y), color, std::max(1.0f, f->FontSize * 0.07f));
}

int substep_index(const Trace& t, size_t k) {
  if (k >= t.size() || t.events[k].kind != EventKind::SubStep) return -1;
  return count_substeps(t, k);
}

void draw_steps(const App& app, const PseudoLine& pl, float x, int current, bool active) {
  const bool dark = app.settings.dark;
  const ImU32 text = ImGui::GetColorU32(active ? ImGuiCol_Text : ImGuiCol_TextDisabled);
  for (size_t i = 0; i < pl.steps.size(); ++i) {
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeightWithSpacing();
    const float w = ImGui::GetContentRegionAvail().x;
    ImGui::Dummy(ImVec2(w, h));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const bool cur = static_cast<int>(i) == current;
    if (cur) dl->AddRectFilled(ImVec2(x - 4, p0.y), ImVec2(p0.x + w, p0.y + h), highlight_bg(dark), 3.0f);
    const float indent = ImGui::GetFontSize() * 1.4f;
    draw_math(app.fonts, ImVec2(x + indent * 0.3f, p0.y), cur ? "▸" : "·", cur ? accent_color(dark) : text);
    draw_math(app.fonts, ImVec2(x + indent, p0.y), pl.steps[i], cur ? ImGui::GetColorU32(ImGuiCol_Text) : text);
    item_tooltip("Sub-step " + std::to_string(i + 1) + " of " + std::to_string(pl.steps.size()) + " of the " + adjoint_name(pl.number));
  }
}

const char* note() {
  return "Not in the paper: the paper prints no backward pass. Each line is the adjoint of the forward line with its "
         "number (n̄ = adjoint of line n): it turns the gradient of what that line wrote into the gradients of what it "
         "read. The lines run in reverse order, and a gradient read in several places adds up.";
}

}  // namespace sf::backward_view
