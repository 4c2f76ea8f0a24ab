#include "app/panels/gpu_panel.hpp"

#include <cmath>

#include "app/gpu_attention_backend.hpp"
#include "imgui.h"

namespace sf {

void GpuPanel::draw(App& app) {
  Session& s = app.session;
  bool gpu = s.attention_hooked();
  ImGui::TextUnformatted("Attention (Algorithm 10 line 6):");
  ImGui::SameLine();
  if (ImGui::RadioButton("CPU (Eigen)", !gpu) && gpu) app.set_attention_gpu(false);
  ImGui::SameLine();
  if (ImGui::RadioButton("GPU (compute shaders)", gpu) && !gpu) app.set_attention_gpu(true);
  const GpuAttentionBackend& b = app.gpu_backend();
  if (b.ready()) ImGui::TextWrapped("Device: %s", b.device().c_str());
  else if (!b.why_not().empty()) ImGui::TextColored(ImVec4(1, 0.55f, 0.4f, 1), "GPU unavailable: %s", b.why_not().c_str());
  else if (!app.ui.gl43) ImGui::TextColored(ImVec4(1, 0.55f, 0.4f, 1), "GPU unavailable: no OpenGL 4.3 compute shaders");
  else ImGui::TextDisabled("The GPU is set up when first chosen.");
  if (s.run_kind() != RunKind::Forward)
    ImGui::TextDisabled("The GPU computes the Forward run only (a generation or training trace uses the CPU).");
  const auto& d = s.attention_dispatches();
  if (!gpu || d.empty()) {
    ImGui::TextDisabled("No GPU dispatches in the last traced pass.");
    return;
  }
  double g_sum = 0, c_sum = 0;
  for (const auto& t : d) {
    if (!std::isnan(t.gpu_ms)) g_sum += t.gpu_ms;
    c_sum += t.cpu_ms;
  }
  ImGui::Text("%zu dispatches (teaching form: one per pseudocode line, all heads at once)", d.size());
  ImGui::Text("GPU %.3f ms  ·  CPU clock %.3f ms  ·  max |P_gpu − P_cpu| = %.3g", g_sum, c_sum, s.attention_max_diff());
  if (ImGui::BeginTable("dispatches", 4,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY |
                            ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("l", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("dispatch");
    ImGui::TableSetupColumn("GPU ms", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("CPU ms", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableHeadersRow();
    for (const auto& t : d) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%d", t.layer);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(t.what.c_str());
      ImGui::TableNextColumn();
      if (std::isnan(t.gpu_ms)) ImGui::TextDisabled("n/a");
      else ImGui::Text("%.3f", t.gpu_ms);
      ImGui::TableNextColumn();
      ImGui::Text("%.3f", t.cpu_ms);
    }
    ImGui::EndTable();
  }
}

}  // namespace sf
