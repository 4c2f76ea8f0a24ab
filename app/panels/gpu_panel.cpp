#include "app/panels/gpu_panel.hpp"

#include <string>

#include "app/gpu_attention_backend.hpp"
#include "app/panels/flash_blocks_view.hpp"
#include "app/panels/gpu_calls_table.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/gpu_text.hpp"
#include "app/widgets/flow.hpp"
#include "app/widgets/wording.hpp"
#include "imgui.h"

namespace sf {

namespace {

const ImVec4 kWarning(1, 0.55f, 0.4f, 1);

// The switch, the device (or why there is none) and which runs the GPU serves.
void draw_backend(App& app) {
  Session& s = app.session;
  const bool gpu = s.attention_hooked();
  ImGui::TextUnformatted("Attention (every MHAttention call of the forward pass):");
  const float box = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x;  // a radio button's circle
  same_line_if_fits(box + ImGui::CalcTextSize("CPU (Eigen)").x);
  if (ImGui::RadioButton("CPU (Eigen)", !gpu) && gpu) app.set_attention_gpu(false);
  same_line_if_fits(box + ImGui::CalcTextSize("GPU (compute shaders)").x);
  if (ImGui::RadioButton("GPU (compute shaders)", gpu) && !gpu) app.set_attention_gpu(true);
  const GpuAttentionBackend& b = app.gpu_backend();
  ImGui::PushTextWrapPos(0.0f);
  if (b.ready()) ImGui::Text("Device: %s", b.device().c_str());
  const std::string guard = guard_text(b.guard(), b.device());
  if (b.guard().disagreed > 0) ImGui::TextColored(kWarning, "%s", guard.c_str());
  else if (!guard.empty()) ImGui::TextDisabled("%s", guard.c_str());
  else if (!b.why_not().empty()) ImGui::TextColored(kWarning, "GPU unavailable: %s", b.why_not().c_str());
  else if (!app.ui.gl43) ImGui::TextColored(kWarning, "GPU unavailable: no OpenGL 4.3 compute shaders");
  else ImGui::TextDisabled("The GPU is set up when first chosen.");
  if (const AttentionFailure* f = s.attention_failed_call())
    ImGui::TextColored(kWarning, "The GPU refused %s. The whole run was traced on the CPU.", to_text(*f).c_str());
  const std::string serves = "The GPU serves the Forward run (Algorithm " + std::to_string(s.arch().forward_algorithm()) +
                             "); a generation, translation or training trace uses the CPU";
  if (s.run_kind() == RunKind::Forward) ImGui::TextDisabled("%s.", serves.c_str());
  else ImGui::Text("%s, as this one does.", serves.c_str());
  ImGui::PopTextWrapPos();
}

// How many calls and dispatches, their total clocks, and max |P_gpu − P_cpu|.
void draw_summary(const Session& s) {
  const std::vector<AttentionCall>& calls = s.attention_calls();
  size_t n = 0;
  for (const AttentionCall& c : calls) n += c.dispatches.size();
  const CallTimes t = run_times(calls);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::Text("%s, %s (teaching form: one per pseudocode line, all heads at once).",
              counted(static_cast<long long>(calls.size()), "call").c_str(),
              counted(static_cast<long long>(n), "dispatch", "dispatches").c_str());
  ImGui::Text("GPU clock %s  ·  CPU clock %s  ·  max |P_gpu − P_cpu| = %s", gpu_time_text(t.gpu_ms).c_str(),
              gpu_time_text(t.cpu_ms).c_str(), diff_text(s.attention_max_diff()).c_str());
  if (!measured(t.gpu_ms))
    ImGui::TextDisabled("GPU clock not measured: this OpenGL has no GL_TIMESTAMP clock, or its two stamps around a "
                        "dispatch read the same time (Mesa's llvmpipe stamps both before the work runs). Read the CPU "
                        "clock: glFinish before and after each dispatch.");
  ImGui::PopTextWrapPos();
}

// That the fused shader is Algorithm 4-F, with the block sizes it runs with for this model, and a
// button to step through that listing.
// Folded under its heading (which names 4-F and the block sizes), so that the calls keep the room.
void draw_fused_form(App& app) {
  const ModelConfig& c = app.session.model().config;
  const int shared = app.gpu_backend().max_shared_bytes();
  if (!ImGui::CollapsingHeader((fused_form_title(c.d_attn, c.d_mid, shared) + "###fused-form").c_str())) return;
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(fused_form_text(c.d_attn, c.d_mid, shared).c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::SmallButton("Step through Algorithm 4-F (FlashAttention) on the CPU"))
    step_into_flash_attention(app);
  item_tooltip("Shows Algorithm 4-F's listing at the first FlashAttention call of the forward pass, on the CPU (core's "
               "steps): a model that runs Algorithm 4 is re-run with \"attention\": \"flash\" and its block_r, block_c, "
               "θ unchanged.");
}

}  // namespace

void GpuPanel::draw(App& app) {
  draw_backend(app);
  draw_fused_form(app);
  const Session& s = app.session;
  if (!s.attention_hooked() || s.attention_calls().empty()) {
    ImGui::TextDisabled("No GPU calls in the last traced pass.");
    return;
  }
  draw_summary(s);
  draw_gpu_calls_table(app);
}

}  // namespace sf
