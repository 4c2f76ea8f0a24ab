#include "app/panels/callstack_panel.hpp"

#include "app/panels/panel.hpp"
#include "core/pseudocode/backward_listings.hpp"

namespace sf {

void CallStackPanel::draw(App& app) {
  const Session& s = app.session;
  const Trace& t = s.trace();
  if (t.size() == 0) return;
  const std::vector<size_t> stack = t.call_stack(s.cursor());
  const size_t shown = app.shown_event();
  // Breadcrumb line, outermost first.
  std::string crumb;
  for (size_t i = 0; i < stack.size(); ++i) {
    const Event& e = t.events[stack[i]];
    if (e.kind == EventKind::SubStep) continue;
    if (!crumb.empty()) crumb += "  ›  ";
    crumb += describe_event(e);
  }
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", crumb.c_str());
  ImGui::PopTextWrapPos();
  ImGui::Separator();
  // One row per frame, innermost first, as debuggers list them.
  for (size_t i = stack.size(); i-- > 0;) {
    const Event& e = t.events[stack[i]];
    ImGui::PushID(static_cast<int>(i));
    std::string label = std::string(i + 1 == stack.size() ? "▶ " : "   ") + describe_event(e);
    if (e.kind == EventKind::SubStep) label += "  — " + e.label;
    const bool selected = shown == stack[i];
    if (ImGui::Selectable(label.c_str(), selected))
      app.ui.viewed_event = i + 1 == stack.size() ? SIZE_MAX : stack[i];
    // A backward frame (Pass::Backward) runs Stepformer's backward listing: "Attention adjoint line 6"
    // is the adjoint of the forward's line 6 (describe_event).
    const std::string listing = e.pass == Pass::Backward ? std::string("\n") + adjoint_name(e.line) + ", " + kBackwardListingLabel : "";
    if (i + 1 != stack.size())
      item_tooltip("This frame is waiting on this line: click to see its pseudocode and variables" + listing);
    else if (!listing.empty())
      item_tooltip(listing.substr(1));
    ImGui::PopID();
  }
  if (app.ui.viewed_event != SIZE_MAX) {
    ImGui::Spacing();
    if (ImGui::SmallButton("Back to the cursor")) app.ui.viewed_event = SIZE_MAX;
  }
}

}  // namespace sf
