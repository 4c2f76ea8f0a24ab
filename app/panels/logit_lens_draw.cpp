// Drawing the Logit lens tab (logit_lens_view.hpp): the layers × positions grid, its tooltip, the colour
// key, and the direct logit attribution's bars.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/app.hpp"
#include "app/panels/logit_lens_view.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/colormap.hpp"

namespace sf {

namespace {

// The heatmaps' sequential palette (viridis, or the colour-blind one when chosen) at p ∈ [0, 1].
ImU32 p_color(float p) {
  const Rgb8 c = colormap(p, false, heatmap_palette());
  return IM_COL32(c.r, c.g, c.b, 255);
}

std::string fixed(double v, int digits) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

const char* kWhat =
    "Not in the paper: an interpretation tool (nostalgebraist's logit lens; TransformerLens, Ecco). Row l reads the "
    "residual stream X^l after layer l (l = 0: the embedding) through what the forward algorithm does after its layer "
    "loop, with this model's own weights: P^l = softmax(W_u head(X^l) + b_u). head: GPT the final norm γ, β (none "
    "under post-LN); BERT GELU(W_f X + b_f) and norm γ, β; the encoder-decoder the decoder's pre-LN norm. "
    "The last row is P itself. Each cell: the top token of P^l[:, t] and, coloured, the probability it gives the "
    "token the model finally predicts at t. Hover: the top 5. Click a column: its attribution on the right.";

void tooltip_for(const App& app, const LensView& v, int l, int t) {
  const MatF& P = v.run->lens.P[l];
  ImGui::BeginTooltip();
  ImGui::Text("P^%d at t = %d (%s)", l, t + 1, l == 0 ? "the embedding X^0" : ("after layer " + std::to_string(l)).c_str());
  ImGui::PushFont(app.fonts.mono);
  for (const int id : top_tokens(P, t, 5))
    ImGui::Text("%-10s %.4f", token_label(app.session.tokenizer(), id).c_str(), P(id - 1, t));
  ImGui::PopFont();
  ImGui::Text("p(%s) = %.4f  (the model's final prediction at t = %d)",
              token_label(app.session.tokenizer(), v.predicted[t]).c_str(), v.p_final(l, t), t + 1);
  ImGui::EndTooltip();
}

// One cell: background by p_final, the top token and p_final written on it; hover and click.
void draw_cell(App& app, LensView& v, int l, int t, ImVec2 at, ImVec2 size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float p = v.p_final(l, t);
  const ImU32 bg = p_color(p);
  dl->AddRectFilled(at, ImVec2(at.x + size.x - 1, at.y + size.y - 1), bg);
  const std::string top = token_label(app.session.tokenizer(), top_token(v.run->lens.P[l], t));
  const std::string pf = fixed(p, 2);
  dl->PushClipRect(at, ImVec2(at.x + size.x - 1, at.y + size.y - 1), true);
  const float lh = ImGui::GetTextLineHeight();
  dl->AddText(ImVec2(at.x + 3, at.y + 1), ink_for(bg), top.c_str());
  if (size.y >= 2 * lh) dl->AddText(ImVec2(at.x + 3, at.y + 1 + lh), ink_for(bg), pf.c_str());
  dl->PopClipRect();
  ImGui::SetCursorScreenPos(at);
  ImGui::PushID(l * 100000 + t);
  if (ImGui::InvisibleButton("cell", ImVec2(size.x - 1, size.y - 1))) v.set_position(t + 1);
  if (ImGui::IsItemHovered()) tooltip_for(app, v, l, t);
  ImGui::PopID();
}

float row_head_width() { return ImGui::CalcTextSize("l = 00 (X^0)").x + 8; }
constexpr float kMinCell = 2.5f, kMaxCell = 6.0f;  // a cell's width in text lines

// The width the grid would like: its row headers and every column at the widest cell.
float grid_natural_width(const LensView& v) {
  return row_head_width() + static_cast<float>(v.x.size()) * kMaxCell * ImGui::GetTextLineHeight() +
         ImGui::GetStyle().ScrollbarSize;
}

void draw_grid(App& app, LensView& v, float width) {
  const LogitLens& lens = v.run->lens;
  const int T = static_cast<int>(lens.x.size()), L = lens.layers();
  const float lh = ImGui::GetTextLineHeight();
  const float head_w = row_head_width();
  const float cell_w = std::clamp((width - head_w) / std::max(T, 1), kMinCell * lh, kMaxCell * lh);
  const ImVec2 cell(cell_w, 2 * lh + 4);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), accent = accent_color(app.settings.dark);
  for (int t = 0; t < T; ++t) {  // the header: position and token; [MASK] positions in the accent colour
    const bool masked = std::find(v.masked.begin(), v.masked.end(), t + 1) != v.masked.end();
    const std::string h = std::to_string(t + 1) + " " + token_label(app.session.tokenizer(), lens.x[t]);
    const ImVec2 at(origin.x + head_w + t * cell_w, origin.y);
    dl->PushClipRect(at, ImVec2(at.x + cell_w - 1, at.y + lh + 2), true);
    dl->AddText(ImVec2(at.x + 3, at.y), masked ? accent : text, h.c_str());
    dl->PopClipRect();
  }
  for (int r = 0; r <= L; ++r) {  // the last layer on top: the stream rises to P
    const int l = L - r;
    const float y = origin.y + lh + 4 + r * cell.y;
    const std::string name = l == 0 ? "l = 0 (X^0)" : l == L ? "l = " + std::to_string(l) + " (P)" : "l = " + std::to_string(l);
    dl->AddText(ImVec2(origin.x, y + (cell.y - lh) / 2), text, name.c_str());
    for (int t = 0; t < T; ++t) draw_cell(app, v, l, t, ImVec2(origin.x + head_w + t * cell_w, y), cell);
  }
  const float x0 = origin.x + head_w + (v.pos - 1) * cell_w, y0 = origin.y + lh + 4;
  dl->AddRect(ImVec2(x0 - 1, y0 - 1), ImVec2(x0 + cell_w, y0 + (L + 1) * cell.y), accent, 0, 0, 2.0f);
  ImGui::SetCursorScreenPos(ImVec2(origin.x, y0 + (L + 1) * cell.y + 4));
}

void draw_key() {
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float w = 120, h = ImGui::GetTextLineHeight();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (int i = 0; i < 60; ++i)
    dl->AddRectFilled(ImVec2(at.x + w * i / 60, at.y), ImVec2(at.x + w * (i + 1) / 60 + 1, at.y + h),
                      p_color(i / 59.0f));
  ImGui::Dummy(ImVec2(w, h));
  ImGui::SameLine();
  ImGui::TextDisabled("p(final prediction) 0 → 1");
  item_tooltip("A cell's colour: the probability P^l gives the token the model finally predicts at t (the top of P[:, t]).");
}

void draw_bars(App& app, LensView& v) {
  if (!v.dla) {
    ImGui::TextWrapped("Direct logit attribution at t = %d: %s", v.pos, v.dla_error.c_str());
    return;
  }
  const LogitAttribution& a = *v.dla;
  ImGui::TextWrapped("Direct logit attribution (not in the paper) of ŷ = %s at t = %d:",
                     token_label(app.session.tokenizer(), a.y).c_str(), a.t);
  ImGui::TextWrapped("logit %s = Σ of the bars %s", fixed(a.logit, 4).c_str(), fixed(a.sum(), 4).c_str());
  ImGui::SameLine();
  help_marker("Each part is what it writes into the residual stream, read through W_u[ŷ, :] with every norm after it "
              "frozen at this run (its centring and 1/σ kept, TransformerLens's method): the heads W_o[:, h] Y^h, each "
              "attention's b_o, each MLP, the embedding (the direct path), each frozen norm's β and b_u. They add up to "
              "the logit (docs/interpretation.md).");
  ImGui::Checkbox("sort by |contribution|", &v.sort_bars);
  std::vector<const DlaPart*> bars;
  double scale = 0;
  for (const DlaPart& p : a.parts) bars.push_back(&p), scale = std::max(scale, std::abs(p.value));
  if (v.sort_bars)
    std::stable_sort(bars.begin(), bars.end(), [](const DlaPart* x, const DlaPart* y) { return std::abs(x->value) > std::abs(y->value); });
  if (!ImGui::BeginTable("dla", 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) return;
  ImGui::TableSetupColumn("part", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("contribution", ImGuiTableColumnFlags_WidthStretch);
  const ImU32 pos = IM_COL32(70, 150, 230, 255), neg = IM_COL32(230, 110, 70, 255);
  for (const DlaPart* p : bars) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(p->label.c_str());
    ImGui::TableNextColumn();
    number_bar(app, fixed(p->value, 3), "-00.000 ", static_cast<float>(p->value), static_cast<float>(scale), true,
               p->value >= 0 ? pos : neg);
  }
  ImGui::EndTable();
}

}  // namespace

void draw_logit_lens(App& app, LensView& v) {
  ImGui::TextColored(ImColor(variant_color(app.settings.dark)), "Logit lens: an interpretation tool, not in the paper");
  ImGui::SameLine();
  help_marker(kWhat);
  if (!v.run) {
    ImGui::TextWrapped("No lens for this input: %s", v.error.c_str());
    return;
  }
  if (!v.masked.empty()) {
    std::string m;
    for (const int t : v.masked) m += (m.empty() ? "" : ", ") + std::to_string(t);
    ImGui::Text("[MASK] at t = %s (header in the accent colour)", m.c_str());
  }
  draw_key();
  const float avail = ImGui::GetContentRegionAvail().x;
  const bool side = avail > 1000;  // the bars beside the grid when both have room (a wide Inspector), else below it
  const float grid_w = side ? std::min(avail * 0.6f, grid_natural_width(v)) : avail;
  // Stacked: the grid as tall as its rows (header, L + 1 rows, a scroll bar), at most half the tab.
  const float lh = ImGui::GetTextLineHeight(), style_pad = 2 * ImGui::GetStyle().WindowPadding.y;
  const float rows_h = lh + 4 + (v.run->lens.layers() + 1) * (2 * lh + 4) + ImGui::GetStyle().ScrollbarSize + style_pad;
  ImGui::BeginChild("lens_grid", ImVec2(grid_w, side ? 0 : std::min(rows_h, ImGui::GetContentRegionAvail().y * 0.5f)),
                    false, ImGuiWindowFlags_HorizontalScrollbar);
  draw_grid(app, v, grid_w - ImGui::GetStyle().ScrollbarSize);
  ImGui::EndChild();
  if (side) ImGui::SameLine();
  ImGui::BeginChild("lens_bars", ImVec2(0, 0), false);
  draw_bars(app, v);
  ImGui::EndChild();
}

}  // namespace sf
