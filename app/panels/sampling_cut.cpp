#include "app/panels/sampling_cut.hpp"

#include <algorithm>
#include <cstdio>

#include "app/panels/panel.hpp"
#include "app/attention_calls.hpp"
#include "app/widgets/flow.hpp"
#include "app/widgets/labelled.hpp"
#include "imgui_internal.h"

namespace sf {

void draw_top_k_top_p_controls(TopKTopP& cut, int N_V, const char* id) {
  const float fs = ImGui::GetFontSize();
  int k = cut.k;
  const std::string k_label = std::string("top-k") + id;
  ImGui::SetNextItemWidth(fs * 5.0f);
  if (ImGui::InputInt(fitted_label(k_label.c_str(), fs * 5.0f).c_str(), &k)) cut.k = std::clamp(k, 0, N_V);
  item_tooltip("Keep only the k most likely tokens (by p; equal p: the smaller id first) and renormalise q over "
               "them, after τ. 0 = off; k = 1 is argmax; k ≥ N_V = " + std::to_string(N_V) + " cuts nothing.");
  const std::string p_label = std::string("top-p") + id;
  same_line_if_fits(field_width(p_label.c_str(), fs * 8.0f));
  float p = static_cast<float>(cut.p);
  ImGui::SetNextItemWidth(fs * 8.0f);
  if (ImGui::SliderFloat(fitted_label(p_label.c_str(), fs * 8.0f).c_str(), &p, 0.01f, 1.0f, "%.2f"))
    cut.p = std::clamp(static_cast<double>(p), 0.01, 1.0);
  item_tooltip("Nucleus sampling: keep the smallest set of most likely tokens whose q (after τ, and after top-k) "
               "sums to at least p of the mass, never fewer than one token, and renormalise q over them. 1 = off.");
  aside("(not in the paper: encyclopedia article, seed 004)");
}

std::string traced_cut_label(const Trace& tr, LineRef line, int i, int N_V) {
  for (const Event& e : tr.events) {
    if (e.kind != EventKind::SubStep || e.ref() != line || e.idx.i != i) continue;
    const Value* n = event_value(e, "n");
    const Value* k = event_value(e, "k");
    const Value* p = event_value(e, "p");
    const Value* mass = event_value(e, "Σ q kept");
    if (!n || !k || !p || !mass) continue;
    std::string rule;
    char buf[96];
    if (k->m(0, 0) > 0) rule = "top-k = " + std::to_string(static_cast<int>(k->m(0, 0)));
    if (p->m(0, 0) < 1.0f) {
      std::snprintf(buf, sizeof buf, "%stop-p = %.2f", rule.empty() ? "" : ", ", p->m(0, 0));
      rule += buf;
    }
    std::snprintf(buf, sizeof buf, ": n = %d of %d kept, Σ q = %.3f (renormalised to 1)",
                  static_cast<int>(n->m(0, 0)), N_V, mass->m(0, 0));
    return "cut by " + rule + buf;
  }
  return "";
}

void draw_cut_line_row(const App& app, const std::string& label) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGuiTable* table = ImGui::GetCurrentTable();
  const float fs = ImGui::GetFontSize();
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float x0 = table->WorkRect.Min.x, x1 = table->WorkRect.Max.x;
  const ImU32 accent = accent_color(app.settings.dark);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // Across every column, within what the table shows (its rows scroll under the header).
  const ImRect clip = table->InnerClipRect;
  dl->PushClipRect(ImVec2(std::max(x0, clip.Min.x), std::max(at.y, clip.Min.y)),
                   ImVec2(std::min(x1, clip.Max.x), std::min(at.y + fs * 1.4f, clip.Max.y)), false);
  const float y = at.y + fs * 0.7f;
  const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
  const float tx = x0 + fs * 1.5f;
  dl->AddLine(ImVec2(x0, y), ImVec2(tx - fs * 0.3f, y), accent, 2.0f);
  dl->AddLine(ImVec2(tx + ts.x + fs * 0.3f, y), ImVec2(x1, y), accent, 2.0f);
  dl->AddText(ImVec2(tx, y - ts.y * 0.5f), accent, label.c_str());
  dl->PopClipRect();
  ImGui::Dummy(ImVec2(1.0f, fs * 1.4f));
}

ImU32 cut_color(ImU32 col) {
  const ImU32 alpha = ((col >> IM_COL32_A_SHIFT) & 0xFF) / 3;
  return (col & ~IM_COL32_A_MASK) | (alpha << IM_COL32_A_SHIFT);
}

}  // namespace sf
