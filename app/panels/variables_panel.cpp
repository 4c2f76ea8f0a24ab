#include "app/panels/variables_panel.hpp"
#include "app/study/dependency_hover.hpp"

#include <algorithm>

#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/heatmap.hpp"

namespace sf {

namespace {

constexpr float kThumbW = 96.0f, kThumbH = 44.0f;

bool bound_by(const Event& e, const Value* v) {
  for (const auto& x : e.values)
    if (&x == v) return true;
  return false;
}

std::string token_text(const Tokenizer& tok, const Tokens& ids) {
  std::string s;
  for (int id : ids) {
    if (!s.empty()) s += ' ';
    s += token_label(tok, id);
  }
  return s;
}

}  // namespace

void VariablesPanel::draw(App& app) {
  const Session& s = app.session;
  const Trace& t = s.trace();
  if (t.size() == 0) {
    ImGui::TextDisabled("No trace.");
    return;
  }
  const size_t k = app.shown_event();
  const Event& ev = t.events[k];
  const std::vector<const Value*> scope = s.scope_for_view(k);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("In scope at %s%s", describe_event(ev).c_str(),
                      app.ui.viewed_event != SIZE_MAX ? " (a caller's frame, waiting on this line)" : "");
  ImGui::PopTextWrapPos();
  if (scope.empty()) {
    ImGui::TextDisabled("Nothing is in scope yet.");
    return;
  }

  const Fonts& f = app.fonts;
  const float F = ImGui::GetFontSize();
  const bool dark = app.settings.dark;
  float shape_w = 0;
  for (const Value* v : scope) shape_w = std::max(shape_w, math_text_size(f, "∈ " + paper_shape(*v)).x);
  auto select = [&app](const Value* v) {
    app.ui.selected_value = v->name;
    app.ui.show.tensor = true;
  };

  const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_ScrollY | ImGuiTableFlags_PadOuterX;
  if (!ImGui::BeginTable("variables", 3, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  // The value column always has room for a thumbnail; a long name is clipped (the Tensor view
  // shows it whole).
  ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("shape", ImGuiTableColumnFlags_WidthFixed, shape_w);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthFixed, kThumbW);
  ImGui::TableHeadersRow();
  for (const Value* v : scope) {
    ImGui::PushID(v);
    const bool changed = bound_by(ev, v);
    const bool selected = v->name == app.ui.selected_value;
    const bool matrix = v->kind == ValueKind::Matrix || v->kind == ValueKind::Mask;
    const float row_h = matrix ? kThumbH + 4.0f : F * 1.4f;
    ImGui::TableNextRow(0, row_h);
    if (changed) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, highlight_bg(dark));

    // Name (the whole row is the click target), with a "changed" marker under it.
    ImGui::TableNextColumn();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    if (ImGui::Selectable("##row", selected,
                          ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap,
                          ImVec2(0, row_h)))
      select(v);
    item_tooltip(changed ? "Changed by this step. Click to show it in the Tensor view."
                         : "Click to show it in the Tensor view.");
    const float name_y = p.y + (row_h - F) * 0.5f - (changed && matrix ? F * 0.4f : 0.0f);
    draw_math(f, ImVec2(p.x, name_y), v->name, changed ? accent_color(dark) : ImGui::GetColorU32(ImGuiCol_Text));
    if (changed) {
      const char* mark = "changed";
      if (matrix)
        ImGui::GetWindowDrawList()->AddText(f.small, f.small->FontSize, ImVec2(p.x, name_y + F * 1.05f),
                                            accent_color(dark), mark);
      else
        ImGui::GetWindowDrawList()->AddText(f.small, f.small->FontSize,
                                            ImVec2(p.x + math_text_size(f, v->name).x + F * 0.4f, name_y + F * 0.2f),
                                            accent_color(dark), mark);
    }

    // Shape in the paper's notation.
    ImGui::TableNextColumn();
    ImGui::SetCursorPosY(ImGui::GetCursorPosY() + (row_h - F) * 0.5f);
    math_text(f, "∈ " + paper_shape(*v), ImGui::GetColorU32(ImGuiCol_TextDisabled));

    // Value: a number, the token characters, or a heatmap thumbnail.
    ImGui::TableNextColumn();
    switch (v->kind) {
      case ValueKind::Scalar:
        ImGui::SetCursorPosY(ImGui::GetCursorPosY() + (row_h - F) * 0.5f);
        ImGui::PushFont(f.mono);
        ImGui::TextUnformatted(exact_number(v->m(0, 0)).c_str());
        ImGui::PopFont();
        break;
      case ValueKind::Tokens:
        ImGui::SetCursorPosY(ImGui::GetCursorPosY() + (row_h - F) * 0.5f);
        ImGui::PushFont(f.mono);
        ImGui::TextUnformatted(token_text(s.tokenizer(), v->tokens).c_str());
        ImGui::PopFont();
        break;
      case ValueKind::Matrix:
      case ValueKind::Mask: {
        HeatmapOptions o = heatmap_options(app, k, *v);
        o.thumbnail = true;
        o.cell_values = false;
        o.max_width = std::min(kThumbW, std::max(ImGui::GetContentRegionAvail().x, 16.0f));
        o.max_height = kThumbH;
        o.frame_color = selected ? accent_color(dark) : 0;
        o.on_click = [&select, v](int, int) { select(v); };
        ImGui::SetCursorPosY(ImGui::GetCursorPosY() + 2.0f);
        trace_dependencies(app, k, *v, heatmap("thumb", v->m, f, o));
        break;
      }
    }
    ImGui::PopID();
  }
  ImGui::EndTable();
}

}  // namespace sf
