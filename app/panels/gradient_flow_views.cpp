#include "app/panels/gradient_flow_views.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "app/panels/panel.hpp"
#include "app/widgets/colormap.hpp"
#include "app/widgets/heatmap.hpp"

namespace sf {

namespace {

// A norm as the cells show it (4 significant digits: at most "0.000e-00") and in full (a double's 17).
std::string short_number(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", x);
  return b;
}
std::string exact(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

void wrapped_disabled(const std::string& text) {
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", text.c_str());
  ImGui::PopTextWrapPos();
}

double largest(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }

ImU32 bar_color(bool dark) { return dark ? IM_COL32(90, 160, 230, 255) : IM_COL32(40, 100, 190, 255); }

// A table cell: the norm, a bar for it (full width = scale) and, on hover, "symbol = exact value"
// and what it is (`meaning`).
void norm_cell(const App& app, double x, double scale, const std::string& symbol, const std::string& meaning) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  number_bar(app, short_number(x), "0.000e-00 ", static_cast<float>(x), static_cast<float>(scale), false,
             bar_color(app.settings.dark));
  if (!ImGui::IsWindowHovered() || !ImGui::IsMouseHoveringRect(p0, ImGui::GetItemRectMax())) return;
  ImGui::BeginTooltip();  // over the number and its bar: item_tooltip would read only the bar
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.0f);
  ImGui::TextUnformatted((symbol + " = " + exact(x)).c_str());
  ImGui::TextDisabled("%s", meaning.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

// A scrolled table's height for `rows` rows and a header: all of them up to `most`.
float table_height(size_t rows, size_t most) {
  return (static_cast<float>(std::min(rows, most)) + 1.0f) * ImGui::GetTextLineHeightWithSpacing() +
         ImGui::GetStyle().CellPadding.y * 2.0f * static_cast<float>(std::min(rows, most) + 1);
}

constexpr ImGuiTableFlags kTableFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                        ImGuiTableFlags_BordersOuter | ImGuiTableFlags_ScrollY |
                                        ImGuiTableFlags_SizingFixedFit;

}  // namespace

void draw_saliency(const App& app, const Tokens& tokens, const std::vector<double>& s, const char* stream) {
  const double top = largest(s);
  const std::string e = std::string(stream) == "z" ? "e_{t_z}" : "e_t";
  std::vector<ImU32> colors;  // the chips shaded on the sequential scale [0, max_t ‖∇e_t‖]
  for (double v : s) {
    const Rgb8 c = colormap(top > 0 ? static_cast<float>(v / top) : 0.0f, false, heatmap_palette());
    colors.push_back(IM_COL32(c.r, c.g, c.b, 255));
  }
  // A vision transformer's x is an image (not in the paper): its tokens are the class token and the patches,
  // labelled in the table, not chips of the 64 pixels.
  if (!app.session.reads_image()) token_chips(app, tokens, ImGui::GetContentRegionAvail().x, &colors);
  HeatmapAxis names;  // (ℓ) token t's label
  label_token_axis(app, &tokens, static_cast<Eigen::Index>(s.size()), names);
  ImGui::PushID(stream);
  if (ImGui::BeginTable("saliency", 3, kTableFlags, ImVec2(0, table_height(s.size(), 10)))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn(std::string(std::string(stream) == "z" ? "t_z" : "t").c_str(),
                            ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("0000").x);
    ImGui::TableSetupColumn("token", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("MMMMMMMM").x);
    ImGui::TableSetupColumn(("‖∇" + e + "‖").c_str(), ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    for (size_t t = 0; t < s.size(); ++t) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%zu", t + 1);
      ImGui::TableNextColumn();
      ImGui::PushFont(app.fonts.mono);
      ImGui::TextUnformatted(t < names.labels.size() ? names.labels[t].c_str() : "?");
      ImGui::PopFont();
      ImGui::TableNextColumn();
      const std::string t1 = std::to_string(t + 1);
      norm_cell(app, s[t], top, "‖∂loss/∂" + std::string(std::string(stream) == "z" ? "Z" : "X") + "[:, " + t1 + "]‖₂",
                "The saliency ‖∇" + e + "‖ of token " + t1 +
                    ": the gradient's norm where its embedding column enters layer 1 (the embedding's output).");
    }
    ImGui::EndTable();
  }
  ImGui::PopID();
}

void draw_stream(const App& app, const Tokens& tokens, const StreamFlow& f, const char* X) {
  const int L1 = static_cast<int>(f.layer_norms.size());  // L + 1
  const std::string x(X);
  HeatmapOptions o;
  o.value_name = "‖∇" + x + "‖";
  o.rows.title = "entering layer l (l = " + std::to_string(L1) + ": after layer " + std::to_string(L1 - 1) + ")";
  o.rows.index = "l";
  o.cols.title = x == "Z" ? "t_z (context tokens)" : "t (tokens)";
  o.cols.index = x == "Z" ? "t_z" : "t";
  label_token_axis(app, &tokens, f.token_norms.cols(), o.cols);
  o.scale = ColorScale::Sequential;
  o.lo = 0;
  o.max_height = ImGui::GetFontSize() * static_cast<float>(std::min(L1, 13) + 9);
  const MatF m = f.token_norms.cast<float>();
  ImGui::PushID(X);
  const HeatmapHover h = heatmap("stream", m, app.fonts, o);
  if (h.hovered) {  // appended to the heatmap's own tooltip (the float it draws): the double and its definition
    ImGui::BeginTooltip();
    ImGui::Separator();
    ImGui::Text("= ‖∂loss/∂%s_l[:, %d]‖₂ with l = %d: the residual stream %s", X, h.col + 1, h.row + 1,
                h.row + 1 == L1 ? "after the last layer" : ("entering layer " + std::to_string(h.row + 1)).c_str());
    ImGui::Text("exact: %s", exact(f.token_norms(h.row, h.col)).c_str());
    ImGui::EndTooltip();
  }
  ImGui::TextDisabled("‖∂loss/∂%s_l‖_F per layer boundary:", X);
  const double top = largest(f.layer_norms);
  if (ImGui::BeginTable("layers", 2, kTableFlags, ImVec2(0, table_height(f.layer_norms.size(), 13)))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("l", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("0000").x);
    ImGui::TableSetupColumn(("‖∇" + x + "_l‖_F").c_str(), ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    for (int l = 1; l <= L1; ++l) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%d", l);
      ImGui::TableNextColumn();
      norm_cell(app, f.layer_norms[static_cast<size_t>(l - 1)], top, "‖∂loss/∂" + x + "_" + std::to_string(l) + "‖_F",
                "The Frobenius norm over all tokens of the gradient at the residual stream " +
                    (l == L1 ? "after layer " + std::to_string(l - 1) : "entering layer " + std::to_string(l)) + ".");
    }
    ImGui::EndTable();
  }
  ImGui::PopID();
}

void draw_heads(const App& app, const std::vector<HeadGradNorms>& heads, int H, int H_kv) {
  double top_q = 0, top_k = 0, top_v = 0;
  for (const HeadGradNorms& b : heads) {
    top_q = std::max(top_q, largest(b.q));
    top_k = std::max(top_k, largest(b.k));
    top_v = std::max(top_v, largest(b.v));
  }
  const bool shared = H_kv < H;
  if (shared)
    wrapped_disabled("H_kv = " + std::to_string(H_kv) + " < H = " + std::to_string(H) +
               ": query head h reads key/value head g = ⌊(h−1)·H_kv/H⌋ + 1; the W_k and W_v columns show that key/value "
               "head's gradient (every query head that reads it adds to it).");
  const std::string k = shared ? "g" : "h";
  if (!ImGui::BeginTable("heads", 5, kTableFlags, ImVec2(0, table_height(heads.size() * static_cast<size_t>(H), 16))))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  float label_w = ImGui::CalcTextSize("attention").x;
  for (const HeadGradNorms& b : heads) label_w = std::max(label_w, ImGui::CalcTextSize(b.label.c_str()).x);
  ImGui::TableSetupColumn("attention", ImGuiTableColumnFlags_WidthFixed, label_w);
  ImGui::TableSetupColumn("h", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("000").x);
  ImGui::TableSetupColumn("‖∇W_q^h‖_F", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn(("‖∇W_k^" + k + "‖_F").c_str(), ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn(("‖∇W_v^" + k + "‖_F").c_str(), ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  for (const HeadGradNorms& b : heads)
    for (int h = 1; h <= H; ++h) {
      const int g = (h - 1) * H_kv / H + 1;
      const std::string head = b.label + ", head h = " + std::to_string(h) + " (Frobenius norm).";
      const std::string kv = shared ? b.label + ", key/value head g = " + std::to_string(g) +
                                          ", which query head h = " + std::to_string(h) + " reads (Frobenius norm)."
                                    : head;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (h == 1) ImGui::TextUnformatted(b.label.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%d", h);
      ImGui::TableNextColumn();
      norm_cell(app, b.q[static_cast<size_t>(h - 1)], top_q, "‖∂loss/∂W_q^h‖_F", head);
      ImGui::TableNextColumn();
      norm_cell(app, b.k[static_cast<size_t>(g - 1)], top_k, "‖∂loss/∂W_k^" + k + "‖_F", kv);
      ImGui::TableNextColumn();
      norm_cell(app, b.v[static_cast<size_t>(g - 1)], top_v, "‖∂loss/∂W_v^" + k + "‖_F", kv);
    }
  ImGui::EndTable();
}

}  // namespace sf
