#include "app/panels/variables_panel.hpp"
#include "app/study/dependency_hover.hpp"

#include <algorithm>
#include <cfloat>
#include <functional>
#include <string>
#include <vector>

#include "app/logic/gradient_pairs.hpp"
#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/heatmap.hpp"

namespace sf {

namespace {

// A thumbnail's size in font heights, so that it grows with the font (a HiDPI screen, Ctrl+=).
constexpr float kThumbW = 5.0f, kThumbH = 2.4f;

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

// The widths the table's columns need, in pixels, and whether the shape has a column of its own:
// when the window is too narrow for a name, the widest shape and the widest value side by side,
// each shape goes under its name instead, so that no number in it is cut.
struct Columns {
  float shape = 0, value = 0, forward = 0;  // forward: the forward values' column at a backward event (0: none)
  bool shape_column = true;
};

Columns size_columns(const Fonts& f, const std::vector<const Value*>& scope, bool pairs) {
  const float F = ImGui::GetFontSize();
  Columns c;
  c.shape = ImGui::CalcTextSize("shape").x;
  c.value = std::max(kThumbW * F, ImGui::CalcTextSize(pairs ? "gradient" : "value").x);
  if (pairs) c.forward = std::max(kThumbW * F, ImGui::CalcTextSize("forward value").x);
  for (const Value* v : scope) {
    c.shape = std::max(c.shape, math_text_size(f, "∈ " + paper_shape(*v)).x);
    if (v->kind == ValueKind::Scalar)
      c.value = std::max(c.value, f.mono->CalcTextSizeA(F, FLT_MAX, 0, exact_number(v->m(0, 0)).c_str()).x);
  }
  const ImGuiStyle& st = ImGui::GetStyle();
  const float min_name = 4.0f * F;  // room for a name and its "changed" mark
  const float padding = (pairs ? 10.0f : 8.0f) * st.CellPadding.x + st.ScrollbarSize;  // the cells, the outer pads
  c.shape_column = min_name + c.shape + c.value + c.forward + padding <= ImGui::GetContentRegionAvail().x;
  return c;
}

// A value's heatmap thumbnail in its table cell, its hovered cell traced to its sources.
void thumbnail(App& app, size_t k, const Value& v, bool selected, std::function<void(int, int)> on_click) {
  const float F = ImGui::GetFontSize();
  HeatmapOptions o = heatmap_options(app, k, v);
  o.thumbnail = true;
  o.cell_values = false;
  o.max_width = std::min(kThumbW * F, std::max(ImGui::GetContentRegionAvail().x, 16.0f));
  o.max_height = kThumbH * F;
  o.frame_color = selected ? accent_color(app.settings.dark) : 0;
  o.on_click = std::move(on_click);
  ImGui::SetCursorPosY(ImGui::GetCursorPosY() + 2.0f);
  trace_dependencies(app, k, v, heatmap("thumb", v.m, app.fonts, o));
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

  // At a backward event: each gradient ∇N beside N, the forward value it is the gradient of.
  const std::vector<GradientPair> pairs = gradient_pairs(t, k, scope);
  if (ev.pass == Pass::Backward) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("Not in the paper: Stepformer's backward listing. %s",
                        pairs.empty() ? "" : "Each gradient ∇N is shown beside N, its value in the forward pass.");
    ImGui::PopTextWrapPos();
  }
  const Fonts& f = app.fonts;
  const float F = ImGui::GetFontSize();
  const bool dark = app.settings.dark;
  const Columns cols = size_columns(f, scope, !pairs.empty());
  auto select = [&app](const Value* v) {
    app.ui.selected_value = v->name;
    app.ui.show.tensor = true;
  };

  const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_ScrollY | ImGuiTableFlags_PadOuterX;
  const int n_cols = (cols.shape_column ? 3 : 2) + (pairs.empty() ? 0 : 1);
  if (!ImGui::BeginTable("variables", n_cols, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  // The shape and value columns are as wide as what they hold (a thumbnail, the widest number);
  // a long name is clipped (the Tensor view shows it whole).
  ImGui::TableSetupColumn(cols.shape_column ? "name" : "name ∈ shape", ImGuiTableColumnFlags_WidthStretch);
  if (cols.shape_column) ImGui::TableSetupColumn("shape", ImGuiTableColumnFlags_WidthFixed, cols.shape);
  if (!pairs.empty()) ImGui::TableSetupColumn("forward value", ImGuiTableColumnFlags_WidthFixed, cols.forward);
  ImGui::TableSetupColumn(pairs.empty() ? "value" : "gradient", ImGuiTableColumnFlags_WidthFixed, cols.value);
  ImGui::TableHeadersRow();
  for (const Value* v : scope) {
    ImGui::PushID(v);
    const bool changed = bound_by(ev, v);
    const bool selected = v->name == app.ui.selected_value;
    const bool matrix = v->kind == ValueKind::Matrix || v->kind == ValueKind::Mask;
    // Without a shape column a row holds two lines: the name, and the shape under it.
    const float lines_h = F * (cols.shape_column ? 1.4f : 2.6f);
    const float row_h = matrix ? std::max(kThumbH * F + 4.0f, lines_h) : lines_h;
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
    // A matrix's "changed" mark goes under its name when the row has room: a shape column.
    const bool mark_under = matrix && cols.shape_column;
    const float name_y = cols.shape_column ? p.y + (row_h - F) * 0.5f - (changed && mark_under ? F * 0.4f : 0.0f)
                                           : p.y + (row_h - F * 2.2f) * 0.5f;
    draw_math(f, ImVec2(p.x, name_y), v->name, changed ? accent_color(dark) : ImGui::GetColorU32(ImGuiCol_Text));
    const std::string shape = "∈ " + paper_shape(*v);
    if (!cols.shape_column)
      draw_math(f, ImVec2(p.x, name_y + F * 1.2f), shape, ImGui::GetColorU32(ImGuiCol_TextDisabled));
    if (changed) {
      const char* mark = "changed";
      if (mark_under)
        ImGui::GetWindowDrawList()->AddText(f.small, f.small->FontSize, ImVec2(p.x, name_y + F * 1.05f),
                                            accent_color(dark), mark);
      else
        ImGui::GetWindowDrawList()->AddText(f.small, f.small->FontSize,
                                            ImVec2(p.x + math_text_size(f, v->name).x + F * 0.4f, name_y + F * 0.2f),
                                            accent_color(dark), mark);
    }

    // Shape in the paper's notation.
    if (cols.shape_column) {
      ImGui::TableNextColumn();
      ImGui::SetCursorPosY(ImGui::GetCursorPosY() + (row_h - F) * 0.5f);
      math_text(f, shape, ImGui::GetColorU32(ImGuiCol_TextDisabled));
    }

    // A gradient's forward value, beside it.
    if (!pairs.empty()) {
      ImGui::TableNextColumn();
      if (const GradientPair* pr = pair_of(pairs, v)) {
        ImGui::PushID("forward");
        thumbnail(app, pr->value_event, *pr->value, false, [&select, v](int, int) { select(v); });
        item_tooltip(pr->value->name + ", as the forward pass had it (" + describe_event(t.events[pr->value_event]) +
                     "): " + v->name + " is its gradient, ∂loss/∂" + pr->value->name + ".");
        ImGui::PopID();
      }
    }

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
        ImGui::TextWrapped("%s", token_text(s.tokenizer(), v->tokens).c_str());  // a long x wraps in its cell
        ImGui::PopFont();
        break;
      case ValueKind::Matrix:
      case ValueKind::Mask:
        thumbnail(app, k, *v, selected, [&select, v](int, int) { select(v); });
        break;
    }
    ImGui::PopID();
  }
  ImGui::EndTable();
}

}  // namespace sf
