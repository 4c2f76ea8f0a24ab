#include "app/classroom/focus_view.hpp"

#include <algorithm>
#include <cmath>

#include "app/app.hpp"
#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/heatmap.hpp"
#include "imgui_internal.h"

namespace sf {

std::string focal_value_name(const App& app, const std::string& stop_focus, size_t k) {
  if (!stop_focus.empty()) return stop_focus;
  const Trace& t = app.session.trace();
  if (k >= t.size() || t.events[k].values.empty()) return "";
  return t.events[k].values.front().name;
}

const Value* find_in_scope(const App& app, size_t k, const std::string& name) {
  if (name.empty() || k >= app.session.trace().size()) return nullptr;
  for (const Value* v : app.session.scope_for_view(k))
    if (v->name == name) return v;
  return nullptr;
}

namespace {

// The tokens as boxes, each its label with its 1-based position t under it, wrapped onto as
// many rows as the window's width needs (the toolbar's chips stop at one row).
void token_rows(const App& app, const Tokens& x) {
  const Tokenizer& tok = app.session.tokenizer();
  const ImFont* big = app.fonts.mono;
  const ImFont* small = app.fonts.small;
  const float F = big->FontSize, Fs = small->FontSize, pad = std::round(F * 0.25f);
  const ImU32 box = ImGui::GetColorU32(ImGuiCol_FrameBg), ink = ImGui::GetColorU32(ImGuiCol_Text),
              dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float right = ImGui::GetCurrentWindow()->WorkRect.Max.x;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (size_t t = 0; t < x.size(); ++t) {
    const std::string label = fit_text(big, token_label(tok, x[t]), right - ImGui::GetCursorScreenPos().x);
    const std::string pos = std::to_string(t + 1);
    const float w = std::max(big->CalcTextSizeA(F, FLT_MAX, 0, label.c_str()).x,
                             small->CalcTextSizeA(Fs, FLT_MAX, 0, pos.c_str()).x) + 2 * pad;
    if (t > 0) {
      ImGui::SameLine(0, pad);
      if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
    }
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::PushID(static_cast<int>(t));
    ImGui::InvisibleButton("##token", ImVec2(w, F + Fs + 2 * pad));
    item_tooltip(token_tooltip(tok, static_cast<int>(t) + 1, x[t]));
    ImGui::PopID();
    dl->AddRectFilled(p, ImVec2(p.x + w, p.y + F + pad * 1.5f), box, 3.0f);
    dl->AddText(big, F, ImVec2(p.x + pad, p.y + pad * 0.75f), ink, label.c_str());
    dl->AddText(small, Fs, ImVec2(p.x + pad, p.y + F + pad * 1.5f), dim, pos.c_str());
  }
}

}  // namespace

void FocusView::draw(App& app, size_t k, const Value& v) {
  const ImVec2 start = ImGui::GetCursorScreenPos();
  const bool heatmap_value = v.kind == ValueKind::Matrix || v.kind == ValueKind::Mask;
  HeatmapOptions o = heatmap_value ? heatmap_options(app, k, v) : HeatmapOptions{};
  // The heading: the value and its shape, then (for a heatmap) what its rows and columns are, on
  // the same line where it fits, so that the heatmap below has every other pixel of the height.
  math_text(app.fonts, v.name + " ∈ " + paper_shape(v), accent_color(app.settings.dark));
  if (!o.rows.title.empty() || !o.cols.title.empty()) {
    const std::string axes = "↓ " + o.rows.title + "   " + o.cols.title + " →";
    const float gap = ImGui::GetFontSize();
    if (ImGui::GetItemRectMax().x + gap + math_text_size(app.fonts, axes).x <= ImGui::GetContentRegionMax().x +
                                                                                   ImGui::GetWindowPos().x)
      ImGui::SameLine(0, gap);
    math_text(app.fonts, axes, ImGui::GetColorU32(ImGuiCol_TextDisabled));
    o.rows.title.clear();
    o.cols.title.clear();
  }
  switch (v.kind) {
    case ValueKind::Scalar: {
      ImGui::PushFont(app.fonts.mono);
      ImGui::SetWindowFontScale(2.0f);  // a single number: as large as a heading
      ImGui::TextUnformatted(exact_number(v.m(0, 0)).c_str());
      ImGui::SetWindowFontScale(1.0f);
      ImGui::PopFont();
      break;
    }
    case ValueKind::Tokens:
      token_rows(app, v.tokens);
      break;
    case ValueKind::Matrix:
    case ValueKind::Mask: {
      o.cell_values = true;
      // The whole window below the heading, less a line's spacing so that no scrollbar appears.
      const ImVec2 avail = ImGui::GetContentRegionAvail();
      o.max_width = avail.x;
      o.max_height = std::max(1.0f, avail.y - ImGui::GetStyle().ItemSpacing.y);
      o.fit_height = true;  // the focal value is shown whole, however small the window
      heatmap("focus", MatView(v.m), app.fonts, o);
      break;
    }
  }
  const ImGuiWindow* w = ImGui::GetCurrentWindow();
  const ImVec2 end = w->DC.CursorMaxPos;
  rect_ = ImVec4(start.x, start.y, end.x - start.x, end.y - start.y);
  const ImRect clip = w->InnerClipRect;
  // Half a pixel: ImGui rounds item positions to whole pixels, so an edge may land that far out.
  whole_ = start.x >= clip.Min.x && start.y >= clip.Min.y && end.x <= clip.Max.x + 0.5f && end.y <= clip.Max.y + 0.5f;
}

}  // namespace sf
