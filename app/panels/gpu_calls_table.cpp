#include "app/panels/gpu_calls_table.hpp"

#include <string>

#include "app/panels/gpu_text.hpp"
#include "imgui.h"

namespace sf {

namespace {

// One clock of a row: "CPU 1.234 ms", or "GPU not measured" dimmed, so that it never reads as a time.
void clock_line(const char* clock, double ms) {
  if (measured(ms)) ImGui::Text("%s %s", clock, gpu_time_text(ms).c_str());
  else ImGui::TextDisabled("%s %s", clock, gpu_time_text(ms).c_str());
}

// The last column: the CPU clock above the GPU clock (one column for both keeps the table
// narrow enough for the inspector at 1280×720).
void clocks_cell(double cpu_ms, double gpu_ms) {
  ImGui::TableSetColumnIndex(3);
  clock_line("CPU", cpu_ms);
  clock_line("GPU", gpu_ms);
}

// Words under a tree node's label (dimmed when `dim`), aligned with it and wrapped at the
// column's edge.
void under_label(const std::string& text, bool dim) {
  ImGui::Indent(ImGui::GetTreeNodeToLabelSpacing());
  ImGui::PushTextWrapPos(0.0f);
  if (dim) ImGui::TextDisabled("%s", text.c_str());
  else ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::Unindent(ImGui::GetTreeNodeToLabelSpacing());
}

// A dispatch's row under its call: what it computes (its algorithm and lines), its heads, its clocks.
void dispatch_row(const AttentionDispatch& d) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  under_label(d.what, false);
  if (!d.heads.empty()) under_label("heads " + d.heads, true);
  clocks_cell(d.cpu_ms, d.gpu_ms);
}

// A call's row, open on its dispatches (the arrow); clicking its name puts the cursor on the call,
// and the row is highlighted while the cursor is inside it.
void call_row(App& app, const AttentionCall& c, size_t i) {
  Session& s = app.session;
  ImGui::TableNextRow();
  if (s.cursor() >= c.enter && s.cursor() < frame_end(s.trace(), c.enter))
    ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, ImGui::GetColorU32(ImGuiCol_Header));
  ImGui::TableSetColumnIndex(0);
  ImGui::PushID(static_cast<int>(i));
  const bool open = ImGui::TreeNodeEx(call_site_text(c).c_str(), ImGuiTreeNodeFlags_OpenOnArrow);
  ImGui::PopID();
  if (ImGui::IsItemClicked() && !ImGui::IsItemToggledOpen()) {
    s.jump(c.enter);
    app.ui.viewed_event = SIZE_MAX;
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Click: the cursor goes to this call (Algorithm 5). The arrow: its %zu dispatches.",
                      c.dispatches.size());
  under_label(c.kind, true);
  ImGui::TableSetColumnIndex(1);
  ImGui::Text("%d", c.layer);
  ImGui::TableSetColumnIndex(2);
  ImGui::TextUnformatted(diff_text(c.max_diff).c_str());
  const CallTimes t = call_times(c);
  clocks_cell(t.cpu_ms, t.gpu_ms);
  if (!open) return;
  for (const AttentionDispatch& d : c.dispatches) dispatch_row(d);
  ImGui::TreePop();
}

}  // namespace

void draw_gpu_calls_table(App& app) {
  const std::vector<AttentionCall>& calls = app.session.attention_calls();
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("calls", 4, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("call · kind", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("l");
  ImGui::TableSetupColumn("max |Ṽ_gpu\n − Ṽ_cpu|");  // two lines: the inspector is narrow at 1280×720
  ImGui::TableSetupColumn("clocks");
  ImGui::TableHeadersRow();
  for (size_t i = 0; i < calls.size(); ++i) call_row(app, calls[i], i);
  ImGui::EndTable();
}

}  // namespace sf
