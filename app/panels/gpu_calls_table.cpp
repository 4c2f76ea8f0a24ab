#include "app/panels/gpu_calls_table.hpp"

#include <string>

#include "app/panels/gpu_text.hpp"
#include "imgui.h"

namespace sf {

namespace {

// A clock's cell: "not measured" dimmed, so that it never reads as a time.
void time_cell(double ms) {
  ImGui::TableNextColumn();
  if (measured(ms)) ImGui::TextUnformatted(gpu_time_text(ms).c_str());
  else ImGui::TextDisabled("%s", gpu_time_text(ms).c_str());
}

void wrapped_cell(const std::string& text) {
  ImGui::TableNextColumn();
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
}

// A dispatch's row under its call: its algorithm and lines, heads, what it computes, its clocks.
void dispatch_row(const AttentionDispatch& d) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TreeNodeEx(dispatch_lines_text(d).c_str(),
                    ImGuiTreeNodeFlags_Leaf | ImGuiTreeNodeFlags_NoTreePushOnOpen | ImGuiTreeNodeFlags_SpanFullWidth);
  ImGui::TableNextColumn();
  if (!d.heads.empty()) ImGui::Text("h %s", d.heads.c_str());
  wrapped_cell(d.what);
  ImGui::TableNextColumn();  // max |Ṽ_gpu − Ṽ_cpu| is the call's
  time_cell(d.cpu_ms);
  time_cell(d.gpu_ms);
}

// A call's row, open on its dispatches; clicking its name (not the arrow) goes to it.
void call_row(App& app, const AttentionCall& c, size_t i) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::PushID(static_cast<int>(i));
  const bool open = ImGui::TreeNodeEx(call_site_text(c).c_str(), ImGuiTreeNodeFlags_OpenOnArrow |
                                                                     ImGuiTreeNodeFlags_SpanFullWidth);
  ImGui::PopID();
  if (ImGui::IsItemClicked() && !ImGui::IsItemToggledOpen()) {
    app.session.jump(c.enter);
    app.ui.viewed_event = SIZE_MAX;
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Click: the cursor goes to this call (Algorithm 5). The arrow: its %zu dispatches.",
                      c.dispatches.size());
  ImGui::TableNextColumn();
  ImGui::Text("%d", c.layer);
  wrapped_cell(c.kind);
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(diff_text(c.max_diff).c_str());
  const CallTimes t = call_times(c);
  time_cell(t.cpu_ms);
  time_cell(t.gpu_ms);
  if (!open) return;
  for (const AttentionDispatch& d : c.dispatches) dispatch_row(d);
  ImGui::TreePop();
}

}  // namespace

void draw_gpu_calls_table(App& app) {
  const std::vector<AttentionCall>& calls = app.session.attention_calls();
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Resizable;
  if (!ImGui::BeginTable("calls", 6, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("call");
  ImGui::TableSetupColumn("l");
  ImGui::TableSetupColumn("kind · dispatch", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("max |Ṽ_gpu − Ṽ_cpu|");
  ImGui::TableSetupColumn("CPU clock");
  ImGui::TableSetupColumn("GPU clock");
  ImGui::TableHeadersRow();
  for (size_t i = 0; i < calls.size(); ++i) call_row(app, calls[i], i);
  ImGui::EndTable();
}

}  // namespace sf
