#include "app/panels/translation_panel.hpp"

#include <algorithm>
#include <cstdio>

#include "app/attention_calls.hpp"
#include "app/mathtext.hpp"
#include "app/panels/paged_kv_view.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/sampling_cut.hpp"
#include "app/widgets/heatmap.hpp"
#include "app/widgets/labelled.hpp"

namespace sf {

namespace {

constexpr int kTopK = 8;
// Algorithm 8's cross-attention line: X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1).
constexpr int kEdAlg = 8, kCrossLine = 16;

}  // namespace

void TranslationPanel::draw(App& app) {
  Session& s = app.session;
  TranslationSettings& st = s.translation().settings;
  const Tokenizer& tok = s.tokenizer();
  const bool dark = app.settings.dark;
  const float fs = ImGui::GetFontSize();
  const ImU32 accent = accent_color(dark);
  cut_label_.clear();

  float tau = static_cast<float>(st.tau);
  if (ImGui::SliderFloat(fitted_label("τ##ed", fs * 10.0f).c_str(), &tau, 0.0f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic))
    st.tau = std::clamp(static_cast<double>(tau), 0.0, 100.0);
  item_tooltip("q ∝ p^(1/τ); τ = 0 is argmax (Algorithm 15 line 6).");
  same_line_if_fits(field_width("seed##ed", fs * 7.0f));
  const uint64_t one = 1;
  ImGui::InputScalar(fitted_label("seed##ed", fs * 7.0f).c_str(), ImGuiDataType_U64, &st.seed, &one);
  draw_top_k_top_p_controls(st.cut, s.model().config.N_V(), "##ed");
  wrapped_checkbox("reuse the encoder output (not in the paper: the paper re-encodes z at every step)",
                  &st.reuse_encoding);
  wrapped_checkbox("KV cache (not in the paper: encyclopedia article, seed 004)", &st.kv_cache);
  item_tooltip("z is encoded once; each step runs only x̂'s new column through the decoder, over the cached K, V of "
               "every decoder self-attention and the cached K, V of Z in every cross-attention. The same x̂, p and q.");
  draw_paged_kv_controls(st.kv_cache, st.paged, st.kv_block_size, "##ed");

  auto ran = [&] {
    app.ui.viewed_event = SIZE_MAX;
    step_ = 0;
  };
  if (ImGui::Button("Translate next token")) {
    s.trace_translate(true);
    ran();
  }
  item_tooltip("Ctrl+G. One more pass of Algorithm 15's loop (lines 3–7): the cursor goes to its loop line; F11 "
               "enters line 4's EDTransformer call.");
  same_line_if_fits(button_width("Translate until eos_token"));
  if (ImGui::Button("Translate until eos_token")) {
    s.trace_translate(false);
    ran();
  }
  same_line_if_fits(button_width("Back to the forward pass"));
  ImGui::BeginDisabled(s.run_kind() != RunKind::Translate);
  if (ImGui::Button("Back to the forward pass")) {
    s.trace_forward();
    ran();
  }
  ImGui::EndDisabled();

  ImGui::Separator();
  std::string ztext;
  for (int id : s.tokens_z()) ztext += token_label(tok, id) + " ";
  math_text(app.fonts, "z = " + ztext);
  if (s.run_kind() != RunKind::Translate) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("The trace is Algorithm 8 on (z, x) with x teacher-forced. Translate to trace Algorithm 15: "
                        "each step is a traced run of EDTransformer you can step into.");
    ImGui::PopTextWrapPos();
    return;
  }
  const EdInferenceResult& r = s.translation().result();
  const int shown = s.translation().shown();
  const int n = static_cast<int>(r.steps.size());
  std::string xtext;
  for (int id : s.translation().translated()) xtext += token_label(tok, id) + " ";
  math_text(app.fonts, "x̂ = " + xtext, accent);
  if (shown >= n) ImGui::TextColored(ImColor(accent), "Stopped: %s.", r.stopped.c_str());
  else ImGui::TextDisabled("Step %d of the %d this run takes.", shown, n);
  if (shown == 0) return;

  // --- p and q of one step ---
  int sel = step_ < 1 || step_ > shown ? shown : step_;
  ImGui::SetNextItemWidth(fs * 10.0f);
  if (ImGui::SliderInt("##edstep", &sel, 1, shown, "step i = %d")) step_ = sel;
  const InferenceStep& stp = r.steps[sel - 1];
  ImGui::SameLine();
  ImGui::TextDisabled("y = “%s”", token_label(tok, stp.y).c_str());
  const std::vector<int> order = order_by_decreasing(stp.p);  // the order top-k / top-p cut in
  cut_label_ = traced_cut_label(s.trace(), lines::ed_inference::sample, sel, static_cast<int>(stp.p.size()));
  const ImU32 p_col = dark ? IM_COL32(90, 160, 230, 255) : IM_COL32(40, 100, 190, 255);
  const ImU32 q_col = dark ? IM_COL32(230, 140, 70, 255) : IM_COL32(200, 100, 30, 255);
  // (before the bars, as the Sampling tab draws it)
  if (stp.block_table.block_size > 0)  // PagedAttention: the decoder's self-attention cache after step i
    draw_paged_kv_view(app, stp.block_table, "x̂",
                       {"every decoder layer's self-attention, every head",
                        " The cross-attention's K, V of Z are not paged: computed once for all of z, they never grow."});
  const float scale = std::max(stp.p.maxCoeff(), stp.q.maxCoeff());
  if (ImGui::BeginTable("pq", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_BordersOuter)) {
    ImGui::TableSetupColumn("token", ImGuiTableColumnFlags_WidthFixed, fs * 4.0f);
    ImGui::TableSetupColumn("p (line 5)", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("q (line 6)", ImGuiTableColumnFlags_WidthStretch);  // q ∝ p^(1/τ): τ's tooltip
    ImGui::TableHeadersRow();
    for (int k = 0; k < std::min<int>(kTopK, static_cast<int>(order.size())); ++k) {
      const int v = order[k];
      if (k == stp.kept && !cut_label_.empty()) draw_cut_line_row(app, cut_label_);
      const bool cut = k >= stp.kept;  // faded: cut by top-k / top-p
      ImGui::TableNextRow();
      if (v == stp.y - 1) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, highlight_bg(dark));
      ImGui::TableNextColumn();
      ImGui::PushFont(app.fonts.mono);
      ImGui::TextUnformatted(token_label(tok, v + 1).c_str());
      ImGui::PopFont();
      char a[32], b[32];
      std::snprintf(a, sizeof a, "%.3f", stp.p(v));
      std::snprintf(b, sizeof b, "%.3f", stp.q(v));
      ImGui::TableNextColumn();
      number_bar(app, a, "0.000 ", stp.p(v), scale, false, cut ? cut_color(p_col) : p_col);
      ImGui::TableNextColumn();
      number_bar(app, b, "0.000 ", stp.q(v), scale, false, cut ? cut_color(q_col) : q_col);
    }
    ImGui::EndTable();
  }

  // --- the cross-attention of x̂ against z, from the last shown step's EDTransformer run ---
  ImGui::Separator();
  const std::vector<HeadCall> calls = head_calls(s.trace());
  int L = 0;
  for (const auto& c : calls)
    if (c.caller_alg == kEdAlg && c.caller_line == kCrossLine) L = std::max(L, c.idx.l);
  const int H = s.model().config.H;
  if (L == 0) return;
  l_ = std::clamp(l_, 1, L);
  h_ = std::clamp(h_, 1, H);
  ImGui::TextUnformatted("Cross-attention (Algorithm 8 line 16) of step i =");
  ImGui::SameLine();
  ImGui::Text("%d", shown);
  ImGui::SetNextItemWidth(fs * 7.0f);
  ImGui::SliderInt("##edl", &l_, 1, L, "layer l = %d");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fs * 7.0f);
  ImGui::SliderInt("##edh", &h_, 1, H, "head h = %d");
  const HeadCall* c = find_head_call(calls, kEdAlg, kCrossLine, l_, h_, shown);
  if (!c || !c->A) return;
  ImGui::SameLine();
  if (ImGui::SmallButton("Go to this call")) {
    s.jump(c->enter);
    app.ui.viewed_event = SIZE_MAX;
  }
  math_phrases(app.fonts, {"softmax(S/√d_attn):", "rows ↓ z tokens (keys),", "columns → x̂ tokens (queries)"},
               ImGui::GetColorU32(ImGuiCol_TextDisabled));
  HeatmapOptions o = heatmap_options(app, c->line6, *c->A);
  o.scale = ColorScale::Sequential;
  o.lo = 0;
  o.hi = 1;
  o.cell_values = true;
  o.rows.title.clear();  // the line above names the axes (z's and x̂'s tokens)
  o.cols.title.clear();
  heatmap("cross", c->A->m, app.fonts, o);
}

}  // namespace sf
