#include "app/panels/panel.hpp"

#include <cmath>

#include "core/pseudocode/pseudocode.hpp"

namespace sf {

const char* algorithm_name(int alg) {
  const PseudoAlgorithm* p = pseudocode(alg);
  return p ? p->name.c_str() : "?";
}

std::string describe_indices(const Indices& idx) {
  std::string s;
  auto add = [&](const char* n, int v) {
    if (!v) return;
    if (!s.empty()) s += ", ";
    s += std::string(n) + "=" + std::to_string(v);
  };
  add("n", idx.n);
  add("i", idx.i);
  add("l", idx.l);
  add("h", idx.h);
  add("t", idx.t);
  return s;
}

std::string describe_event(const Event& e) {
  std::string s = algorithm_name(e.alg);
  s += e.kind == EventKind::Enter ? " (call)" : " line " + std::to_string(e.line);
  std::string idx = describe_indices(e.idx);
  const std::string role = e.kind == EventKind::Enter ? "" : loop_role(e.alg, e.line);  // encoder / decoder layers
  if (!role.empty()) idx = role + (idx.empty() ? "" : ", " + idx);
  if (!idx.empty()) s += " (" + idx + ")";
  return s;
}

std::string paper_shape(const Value& v) {
  if (v.kind == ValueKind::Scalar) return "ℝ";
  if (v.kind == ValueKind::Tokens) return "V^{" + std::to_string(v.tokens.size()) + "}";
  const std::string set = v.kind == ValueKind::Mask ? "{0,1}" : "ℝ";
  if (v.m.cols() == 1) return set + "^{" + std::to_string(v.m.rows()) + "}";
  return set + "^{" + std::to_string(v.m.rows()) + "×" + std::to_string(v.m.cols()) + "}";
}

std::string token_label(const Tokenizer& tok, int id) {
  std::string s = tok.label(id);
  return s == " " ? "␣" : s;
}

void help_marker(const char* text) {
  ImGui::TextDisabled("(?)");
  item_tooltip(text);
}

void item_tooltip(const std::string& text) {
  if (!ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.0f);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

void number_bar(const App& app, const std::string& text, const char* width_sample, float x, float scale, bool is_signed,
                ImU32 color) {
  const float x0 = ImGui::GetCursorScreenPos().x;
  ImGui::PushFont(app.fonts.mono);
  ImGui::TextUnformatted(text.c_str());
  const float num_w = ImGui::CalcTextSize(width_sample).x;
  ImGui::PopFont();
  ImGui::SameLine();
  ImGui::SetCursorScreenPos(ImVec2(x0 + num_w, ImGui::GetCursorScreenPos().y));
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x, h = ImGui::GetTextLineHeight();
  if (w < 4) return;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float zero = is_signed ? p.x + w * 0.5f : p.x;
  float len = scale > 0 ? x / scale * (is_signed ? w * 0.5f : w) : 0.0f;
  if (x != 0.0f && std::abs(len) < 1.0f) len = x > 0 ? 1.0f : -1.0f;
  dl->AddRectFilled(ImVec2(std::min(zero, zero + len), p.y + h * 0.2f), ImVec2(std::max(zero, zero + len), p.y + h * 0.8f),
                    color);
  if (is_signed) dl->AddLine(ImVec2(zero, p.y), ImVec2(zero, p.y + h), ImGui::GetColorU32(ImGuiCol_TextDisabled));
  ImGui::Dummy(ImVec2(w, h));
}

ImU32 accent_color(bool dark) { return dark ? IM_COL32(255, 196, 64, 255) : IM_COL32(180, 90, 0, 255); }
ImU32 highlight_bg(bool dark) { return dark ? IM_COL32(90, 70, 20, 200) : IM_COL32(255, 230, 150, 255); }
ImU32 variant_color(bool dark) { return dark ? IM_COL32(196, 150, 255, 255) : IM_COL32(128, 48, 184, 255); }

}  // namespace sf
