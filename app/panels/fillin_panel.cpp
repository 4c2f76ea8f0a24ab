#include "app/panels/fillin_panel.hpp"

#include <algorithm>
#include <cstdio>

#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/flow.hpp"
#include "app/widgets/heatmap.hpp"
#include "app/widgets/labelled.hpp"

namespace sf {

namespace {

// A button that shows `text` exactly as it is. ImGui::Button reads "##" in a label as the start of
// its ID and draws nothing after it, so a WordPiece continuation such as "##ing" would be an empty
// button: this one draws the text itself and takes its ID from `id` alone.
ImVec2 text_button_size(const std::string& text) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const ImVec2 ts = ImGui::CalcTextSize(text.c_str(), nullptr, /*hide_text_after_double_hash=*/false);
  return ImVec2(ts.x + style.FramePadding.x * 2, ts.y + style.FramePadding.y * 2);
}

bool text_button(const char* id, const std::string& text) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const ImVec2 size = text_button_size(text);
  const bool clicked = ImGui::InvisibleButton(id, size);
  const ImVec2 p0 = ImGui::GetItemRectMin(), p1 = ImGui::GetItemRectMax();
  const ImGuiCol bg = ImGui::IsItemActive() ? ImGuiCol_ButtonActive : ImGui::IsItemHovered() ? ImGuiCol_ButtonHovered
                                                                                            : ImGuiCol_Button;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p0, p1, ImGui::GetColorU32(bg), style.FrameRounding);
  dl->AddText(ImVec2(p0.x + style.FramePadding.x, p0.y + style.FramePadding.y), ImGui::GetColorU32(ImGuiCol_Text),
              text.c_str());
  return clicked;
}

}  // namespace

void FillInPanel::draw(App& app) {
  Session& s = app.session;
  FillSettings& st = s.fill_in().settings;
  const Tokenizer& tok = s.tokenizer();
  const bool dark = app.settings.dark;
  const float fs = ImGui::GetFontSize();
  const ImU32 accent = accent_color(dark);

  if (!tok.mask_token()) {  // e.g. GPT-2: its vocabulary has <|endoftext|> and no mask token
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted("This model's vocabulary has no mask token, so there is nothing to fill in.");
    ImGui::TextDisabled("Filling in [MASK] needs a model trained to predict masked tokens (BERT, Algorithm 12) and a "
                        "vocabulary with a mask token: [MASK] in BERT's vocab.txt, mask_token in the paper's own "
                        "vocabularies. %s has none.",
                        tok.describe().c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("Click a token to mask it (it becomes [MASK] in the prompt) or to unmask it. At each [MASK], "
                      "the model's guess is the column of P = %s(x) there (not a paper algorithm: the paper trains "
                      "BERT but prints none for using it).",
                      algorithm_name(s.arch().forward_algorithm()));
  ImGui::PopTextWrapPos();

  // --- the prompt's tokens as buttons ---
  const Tokens& x = s.tokens();
  button_labels_.clear();
  ImGui::PushFont(app.fonts.mono);
  for (size_t k = 0; k < x.size(); ++k) {
    const int t = static_cast<int>(k) + 1;
    const bool masked = x[k] == tok.mask_token();
    const std::string label = token_label(tok, x[k]);
    button_labels_.push_back(label);
    if (k) same_line_if_fits(text_button_size(label).x, 2.0f);  // a long x wraps: no token is cut
    if (masked) ImGui::PushStyleColor(ImGuiCol_Button, highlight_bg(dark));
    ImGui::BeginDisabled(k == 0);
    if (text_button(("tok" + std::to_string(t)).c_str(), label)) {
      std::string error;
      if (!s.toggle_mask(t, error)) app.notify(error, true);
      app.ui.viewed_event = SIZE_MAX;
    }
    ImGui::EndDisabled();
    if (masked) ImGui::PopStyleColor();
    ImGui::PopFont();
    item_tooltip("t = " + std::to_string(t) + (k == 0 ? ": <bos>, not maskable" : masked ? ": click to unmask" : ": click to mask"));
    ImGui::PushFont(app.fonts.mono);
  }
  ImGui::PopFont();

  // --- τ, seed, top k ---
  float tau = static_cast<float>(st.tau);
  if (ImGui::SliderFloat(fitted_label("τ##fill", fs * 10.0f).c_str(), &tau, 0.0f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic))
    st.tau = std::clamp(static_cast<double>(tau), 0.0, 100.0);
  item_tooltip("τ = 0 puts the most likely token (argmax) at each [MASK]; τ > 0 samples it from q ∝ p^(1/τ), as "
               "Algorithms 14 and 15 do.");
  same_line_if_fits(field_width("seed##fill", fs * 7.0f));
  const uint64_t one = 1;
  ImGui::InputScalar(fitted_label("seed##fill", fs * 7.0f).c_str(), ImGuiDataType_U64, &st.seed, &one);
  same_line_if_fits(field_width("top k", fs * 6.0f));
  if (ImGui::InputInt(fitted_label("top k", fs * 6.0f).c_str(), &st.top_k)) st.top_k = std::clamp(st.top_k, 1, s.model().config.N_V());
  if (ImGui::Button("Trace the fill")) {
    s.trace_fill();
    app.ui.viewed_event = SIZE_MAX;
  }
  item_tooltip("The fill reads the traced forward pass: the cursor goes to its last line, P = softmax(W_u X), whose "
               "columns at the [MASK] positions are the distributions below.");

  const FillResult& r = s.fill();
  ImGui::Separator();
  if (r.positions.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%s", s.fill_error().empty() ? "No [MASK] in the prompt." : s.fill_error().c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextColored(ImColor(accent), "Filled: %s", tok.decode_text(r.filled).c_str());  // as a reader writes it
  ImGui::PopTextWrapPos();
  const ImU32 p_col = dark ? IM_COL32(90, 160, 230, 255) : IM_COL32(40, 100, 190, 255);
  ImGui::BeginChild("positions", ImVec2(0, 0));
  for (const FillPosition& pos : r.positions) {
    ImGui::PushID(pos.t);
    char head[160];
    std::snprintf(head, sizeof head, "t = %d: [MASK] → “%s”  (p = %.3f)", pos.t, token_label(tok, pos.chosen).c_str(),
                  pos.p(pos.chosen - 1));
    math_text(app.fonts, head);
    const float scale = pos.top.empty() ? 1.0f : pos.top.front().p;
    if (ImGui::BeginTable("top", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_BordersOuter)) {
      ImGui::TableSetupColumn("rank", ImGuiTableColumnFlags_WidthFixed, fs * 2.2f);
      ImGui::TableSetupColumn("token", ImGuiTableColumnFlags_WidthFixed, fs * 4.0f);
      ImGui::TableSetupColumn("P[id, t]", ImGuiTableColumnFlags_WidthStretch);
      ImGui::TableHeadersRow();
      for (size_t r2 = 0; r2 < pos.top.size(); ++r2) {
        const FillCandidate& c = pos.top[r2];
        ImGui::TableNextRow();
        if (c.id == pos.chosen) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, highlight_bg(dark));
        ImGui::TableNextColumn();
        ImGui::Text("%zu", r2 + 1);
        ImGui::TableNextColumn();
        ImGui::PushFont(app.fonts.mono);
        ImGui::TextUnformatted(token_label(tok, c.id).c_str());
        ImGui::PopFont();
        ImGui::TableNextColumn();
        char num[32];
        std::snprintf(num, sizeof num, "%.3f", c.p);
        number_bar(app, num, "0.000 ", c.p, scale, false, p_col);
      }
      ImGui::EndTable();
    }
    // The whole column P[:, t] as a strip (one cell per token id).
    ImGui::TextDisabled("P[:, %d] over all N_V = %d ids:", pos.t, static_cast<int>(pos.p.size()));
    HeatmapOptions o;
    o.value_name = "P[:, " + std::to_string(pos.t) + "]ᵀ";
    o.cols.index = "token id";
    for (int id = 1; id <= static_cast<int>(pos.p.size()); ++id) o.cols.labels.push_back(token_label(tok, id));
    o.rows.labels = {std::to_string(pos.t)};
    o.scale = ColorScale::Sequential;
    o.lo = 0;
    o.hi = 1;
    o.max_height = fs * 4.0f;
    const MatF strip = pos.p.transpose();
    heatmap("column", strip, app.fonts, o);
    ImGui::Spacing();
    ImGui::PopID();
  }
  ImGui::EndChild();
}

}  // namespace sf
