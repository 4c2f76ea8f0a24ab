#include "app/panels/gpu_panel.hpp"

#include <cmath>
#include <cstdio>

#include "app/gpu_attention_backend.hpp"
#include "app/widgets/flow.hpp"
#include "app/widgets/wording.hpp"
#include "imgui.h"

namespace sf {

std::string gpu_time_text(double ms) {
  if (std::isnan(ms)) return "n/a";
  char buf[32];
  if (ms >= 0.1) std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  else if (ms >= 1e-3) std::snprintf(buf, sizeof buf, "%.1f µs", ms * 1e3);
  else if (ms > 0) std::snprintf(buf, sizeof buf, "%.0f ns", ms * 1e6);
  else std::snprintf(buf, sizeof buf, "< 1 ns (timer resolution)");
  return buf;
}

void GpuPanel::draw(App& app) {
  Session& s = app.session;
  bool gpu = s.attention_hooked();
  ImGui::TextUnformatted("Attention (Algorithm 10 line 6):");
  const float box = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x;  // a radio button's circle
  same_line_if_fits(box + ImGui::CalcTextSize("CPU (Eigen)").x);
  if (ImGui::RadioButton("CPU (Eigen)", !gpu) && gpu) app.set_attention_gpu(false);
  same_line_if_fits(box + ImGui::CalcTextSize("GPU (compute shaders)").x);
  if (ImGui::RadioButton("GPU (compute shaders)", gpu) && !gpu) app.set_attention_gpu(true);
  const GpuAttentionBackend& b = app.gpu_backend();
  ImGui::PushTextWrapPos(0.0f);
  if (b.ready()) ImGui::Text("Device: %s", b.device().c_str());
  else if (!b.why_not().empty()) ImGui::TextColored(ImVec4(1, 0.55f, 0.4f, 1), "GPU unavailable: %s", b.why_not().c_str());
  else if (!app.ui.gl43) ImGui::TextColored(ImVec4(1, 0.55f, 0.4f, 1), "GPU unavailable: no OpenGL 4.3 compute shaders");
  else ImGui::TextDisabled("The GPU is set up when first chosen.");
  if (s.run_kind() != RunKind::Forward)
    ImGui::TextDisabled("The GPU computes the Forward run only (a generation or training trace uses the CPU).");
  ImGui::PopTextWrapPos();
  const auto& d = s.attention_dispatches();
  if (!gpu || d.empty()) {
    ImGui::TextDisabled("No GPU dispatches in the last traced pass.");
    return;
  }
  double g_sum = 0, c_sum = 0;
  size_t g_timed = 0;
  for (const auto& t : d) {
    if (!std::isnan(t.gpu_ms)) g_sum += t.gpu_ms, ++g_timed;
    c_sum += t.cpu_ms;
  }
  ImGui::PushTextWrapPos(0.0f);
  ImGui::Text("%s (teaching form: one per pseudocode line, all heads at once)", counted(d.size(), "dispatch", "dispatches").c_str());
  // A sum over some dispatches only would read as the whole: the GPU total needs every one timed.
  const std::string gpu_total = g_timed == d.size() ? gpu_time_text(g_sum) : "n/a";
  ImGui::Text("GPU clock %s  ·  CPU clock %s  ·  max |P_gpu − P_cpu| = %.3g", gpu_total.c_str(),
              gpu_time_text(c_sum).c_str(), s.attention_max_diff());
  if (g_timed < d.size())
    ImGui::TextDisabled("This OpenGL gives no GPU time for %s: it has no GL_TIMESTAMP clock, or its two timestamps "
                        "around a dispatch read under 1 µs, less than launching any dispatch takes (Mesa's llvmpipe "
                        "stamps both before the work runs). The CPU clock, from a glFinish before the dispatch to a "
                        "glFinish after it, is the time to read.",
                        g_timed == 0 ? "any dispatch" : counted(d.size() - g_timed, "dispatch", "dispatches").c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::BeginTable("dispatches", 4,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY |
                            ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("l", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("dispatch");
    ImGui::TableSetupColumn("GPU clock", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("CPU clock", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableHeadersRow();
    for (const auto& t : d) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%d", t.layer);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(t.what.c_str());
      ImGui::TableNextColumn();
      if (std::isnan(t.gpu_ms)) ImGui::TextDisabled("n/a");
      else ImGui::TextUnformatted(gpu_time_text(t.gpu_ms).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(gpu_time_text(t.cpu_ms).c_str());
    }
    ImGui::EndTable();
  }
}

}  // namespace sf
