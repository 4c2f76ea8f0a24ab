#include "app/panels/panel.hpp"

#include <cmath>

#include "core/pseudocode.hpp"

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
  const std::string idx = describe_indices(e.idx);
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

std::string token_label(const CharTokenizer& tok, int id) {
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

ImU32 accent_color(bool dark) { return dark ? IM_COL32(255, 196, 64, 255) : IM_COL32(180, 90, 0, 255); }
ImU32 highlight_bg(bool dark) { return dark ? IM_COL32(90, 70, 20, 200) : IM_COL32(255, 230, 150, 255); }

}  // namespace sf
