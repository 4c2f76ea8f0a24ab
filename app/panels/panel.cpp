#include "app/panels/panel.hpp"

#include <cmath>

#include "app/widgets/heatmap.hpp"
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
  if (not_in_paper(e.alg)) s = "Algorithm " + algorithm_label(e.alg) + " " + s + " (not in the paper)";
  if (e.pass == Pass::Backward) s += " adjoint";  // Stepformer's backward listing: "Attention adjoint line 6"
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

std::string visible_whitespace(const std::string& text) {
  std::string out;  // whitespace made visible; other control characters as their pictures (U+2400 + c)
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == ' ') out += "␣";
    else if (c == '\n') out += "↵";
    else if (c == '\t') out += "⇥";
    else if (c < 0x20) out += std::string{'\xE2', '\x90', static_cast<char>(0x80 + c)};
    else out += ch;
  }
  return out;
}

std::string token_label(const Tokenizer& tok, int id) { return visible_whitespace(tok.label(id)); }

std::string token_tooltip(const Tokenizer& tok, int t, int id) {
  std::string s = (t > 0 ? "t = " + std::to_string(t) + ": " : "") + "“" + token_label(tok, id) + "”, paper id " +
                  std::to_string(id);
  if (tok.file_id(id) != id) s += " = file id " + std::to_string(tok.file_id(id)) + " + 1";
  const std::string piece = tok.piece(id);
  if (piece != tok.label(id)) s += "; in the tokenizer's files “" + piece + "”";
  if (id == tok.bos_token()) s += " (bos_token)";
  if (id == tok.eos_token()) s += " (eos_token)";
  if (id == tok.mask_token()) s += " (mask_token)";
  return s;
}

namespace {

// A chip's parts: the token's label in the mono font and its paper id in small type.
struct Chip {
  std::string label, id;
  float label_w = 0, w = 0;
};

std::string chips_more_text(size_t hidden, size_t shown) {
  return shown == 0 ? std::to_string(hidden) + " tokens" : "+" + std::to_string(hidden) + " more";
}

// How many chips, from the first, fit whole in max_w (each followed by `gap`), leaving room for
// the "+N more" that then follows them.
size_t chips_that_fit(const std::vector<Chip>& chips, float gap, float max_w) {
  float used = 0;
  for (size_t k = 0; k < chips.size(); ++k) {
    used += chips[k].w;
    const bool last = k + 1 == chips.size();
    const float more_w = last ? 0.0f : gap + ImGui::CalcTextSize(chips_more_text(chips.size() - k - 1, k + 1).c_str()).x;
    if (used + more_w > max_w) return k;
    used += gap;
  }
  return chips.size();
}

// "t = 5: “l” 13" per token from `from` on: what a "+N more" stands for.
std::string chips_list(const Tokenizer& tok, const Tokens& x, size_t from) {
  std::string s;
  for (size_t k = from; k < x.size(); ++k)
    s += (k > from ? "\n" : "") + std::string("t = ") + std::to_string(k + 1) + ": “" + token_label(tok, x[k]) +
         "”  " + std::to_string(x[k]);
  return s;
}

}  // namespace

void token_chips(const App& app, const Tokens& x, float max_w, const std::vector<ImU32>* colors) {
  const Tokenizer& tok = app.session.tokenizer();
  const ImFont* big = app.fonts.mono;
  const ImFont* small = app.fonts.small;
  const float F = big->FontSize, Fs = small->FontSize, pad = std::round(F * 0.25f), gap = 2.0f;
  const float h = ImGui::GetFrameHeight();
  const bool dark = app.settings.dark;
  const ImU32 shade[2] = {dark ? IM_COL32(60, 70, 90, 255) : IM_COL32(215, 225, 240, 255),
                          dark ? IM_COL32(80, 62, 90, 255) : IM_COL32(238, 222, 240, 255)};
  const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  std::vector<Chip> chips(x.size());
  for (size_t k = 0; k < x.size(); ++k) {
    Chip& c = chips[k];
    c.label = fit_text(big, token_label(tok, x[k]), F * 8.0f);
    c.id = std::to_string(x[k]);
    c.label_w = big->CalcTextSizeA(F, FLT_MAX, 0, c.label.c_str()).x;
    c.w = c.label_w + small->CalcTextSizeA(Fs, FLT_MAX, 0, c.id.c_str()).x + pad * 3;
  }
  // Only whole chips: a cut one would show a wrong id ("63" as "6").
  const size_t shown = chips_that_fit(chips, gap, max_w);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (size_t k = 0; k < shown; ++k) {
    const Chip& c = chips[k];
    ImGui::PushID(static_cast<int>(k));
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton("##chip", ImVec2(c.w, h));
    const ImU32 bg = colors && k < colors->size() ? (*colors)[k] : shade[k % 2];
    dl->AddRectFilled(p, ImVec2(p.x + c.w, p.y + h), bg, 3.0f);
    const ImU32 text = colors ? ink_for(bg) : ink;
    dl->AddText(big, F, ImVec2(p.x + pad, p.y + (h - F) * 0.5f), text, c.label.c_str());
    dl->AddText(small, Fs, ImVec2(p.x + pad * 2 + c.label_w, p.y + h - Fs - 1), colors ? text : dim, c.id.c_str());
    item_tooltip(token_tooltip(tok, static_cast<int>(k) + 1, x[k]));
    ImGui::PopID();
    ImGui::SameLine(0, gap);
  }
  // The summary where it fits (with no chip shown, "N tokens" may not: then nothing, not a cut text).
  const std::string more = chips_more_text(x.size() - shown, shown);
  if (shown < x.size() && (shown > 0 || ImGui::CalcTextSize(more.c_str()).x <= max_w)) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("%s", more.c_str());
    item_tooltip(chips_list(tok, x, shown));
    return;
  }
  ImGui::NewLine();
}

ImU32 ink_for(ImU32 bg) {
  const float r = static_cast<float>((bg >> IM_COL32_R_SHIFT) & 0xFF),
              g = static_cast<float>((bg >> IM_COL32_G_SHIFT) & 0xFF),
              b = static_cast<float>((bg >> IM_COL32_B_SHIFT) & 0xFF);
  return 0.299f * r + 0.587f * g + 0.114f * b > 150.0f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
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
