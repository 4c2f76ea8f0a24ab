#include "app/panels/paged_kv_view.hpp"

#include <algorithm>
#include <string>

#include "app/panels/panel.hpp"
#include "app/widgets/flow.hpp"
#include "app/widgets/labelled.hpp"

namespace sf {

namespace {

// One logical block b (0-based) as a box of B slots, the first `fill` filled, labelled "b → j".
void draw_block(const App& app, const BlockTable& t, int b) {
  const float fs = ImGui::GetFontSize();
  const float slot = fs * 0.8f, gap = fs * 0.15f;
  const std::string label = std::to_string(b + 1) + " → " + std::to_string(t.blocks[b] + 1);
  const float boxes_w = t.block_size * (slot + gap) + gap;
  const float w = std::max(boxes_w, ImGui::CalcTextSize(label.c_str()).x);
  if (b > 0) same_line_if_fits(w, fs * 0.8f);
  const ImVec2 at = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(w, fs * 1.2f + slot + gap * 2));
  item_tooltip("Logical block " + std::to_string(b + 1) + " (tokens " + std::to_string(b * t.block_size + 1) + "–" +
               std::to_string((b + 1) * t.block_size) + ") is held in physical block " + std::to_string(t.blocks[b] + 1) +
               ": " + std::to_string(t.fill(b)) + " of its " + std::to_string(t.block_size) + " slots filled.");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  dl->AddText(at, text, label.c_str());
  const ImVec2 box(at.x, at.y + fs * 1.2f);
  dl->AddRect(box, ImVec2(box.x + boxes_w, box.y + slot + gap * 2), ImGui::GetColorU32(ImGuiCol_Border));
  const ImU32 filled = accent_color(app.settings.dark), empty = ImGui::GetColorU32(ImGuiCol_FrameBg);
  for (int s = 0; s < t.block_size; ++s) {
    const ImVec2 p(box.x + gap + s * (slot + gap), box.y + gap);
    dl->AddRectFilled(p, ImVec2(p.x + slot, p.y + slot), s < t.fill(b) ? filled : empty, 2.0f);
  }
}

}  // namespace

void draw_paged_kv_controls(bool kv_cache, bool& paged, int& kv_block_size, const char* id) {
  const float fs = ImGui::GetFontSize();
  const std::string suffix = id;
  ImGui::BeginDisabled(!kv_cache);
  ImGui::Indent(fs);
  wrapped_checkbox(("Paged (PagedAttention)" + suffix).c_str(), &paged);
  item_tooltip("Hold the KV cache in fixed-size blocks of B tokens, with a block table mapping each logical block "
               "of the sequence to a physical block of a pool, as vLLM does (Kwon et al. 2023). A block is taken "
               "only when the last one is full. Each step's attention reads K and V gathered through the table: "
               "the same numbers, bit for bit.");
  same_line_if_fits(field_width("B (tokens per block)", fs * 5.0f));
  ImGui::SetNextItemWidth(fs * 5.0f);
  int B = kv_block_size;
  const std::string b_label = "B (tokens per block)" + suffix;
  if (ImGui::InputInt(fitted_label(b_label.c_str(), fs * 5.0f).c_str(), &B)) kv_block_size = std::clamp(B, 1, 64);
  item_tooltip("Tokens per block (default 4; vLLM's default is 16).");
  ImGui::Unindent(fs);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled) && !kv_cache)
    item_tooltip("Turn on the KV cache first: paging is how the cache is stored.");
}

void draw_paged_kv_view(const App& app, const BlockTable& t, const char* seq, const PagedCacheText& text) {
  ImGui::Spacing();
  ImGui::TextUnformatted("PagedAttention: the KV cache in blocks");
  aside("(not in the paper: Kwon et al. 2023, vLLM; encyclopedia article, seed 004)");
  const int n = static_cast<int>(t.blocks.size());
  const int unused = n * t.block_size - t.tokens;
  ImGui::TextDisabled("block table of %s (logical block → physical block):", seq);
  for (int b = 0; b < n; ++b) draw_block(app, t, b);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%d tokens of K and V (%s) in %d blocks of B = %d; %d slot%s unused in the "
                      "last block. This step's attention read K, V gathered through the table.%s",
                      t.tokens, text.held, n, t.block_size, unused, unused == 1 ? "" : "s", text.apart);
  ImGui::PopTextWrapPos();
}

}  // namespace sf
