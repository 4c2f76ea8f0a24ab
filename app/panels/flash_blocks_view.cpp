#include "app/panels/flash_blocks_view.hpp"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/app.hpp"
#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/flow.hpp"
#include "app/widgets/labelled.hpp"
#include "app/widgets/heatmap.hpp"
#include "core/pseudocode/pseudocode.hpp"  // algorithm_label
#include "imgui.h"

namespace sf {

namespace {

const ImVec4 kError(1, 0.4f, 0.35f, 1);

// Line 16's comparison as the trace bound it: "max |Ṽ_flash − Ṽ| = 1.27e-07 · floats, Algorithm 4's S = 49 · …".
std::string comparison_text(const Event& e) {
  std::string s;
  char buf[48];
  for (const Value& v : e.values) {
    if (v.kind != ValueKind::Scalar || v.m.size() != 1) continue;
    std::snprintf(buf, sizeof buf, " = %.3g", static_cast<double>(v.m(0, 0)));
    s += (s.empty() ? "" : "  ·  ") + v.name + buf;
  }
  return s;
}

// What the cursor's line is doing, in words: the block in progress, or where the loops are.
std::string where_text(const FlashBlocks& f) {
  if (f.j > 0) return flash_block_text(f, f.at(f.i, f.j));
  if (f.i > 0)
    return "Query block i = " + std::to_string(f.i) + " of " + std::to_string(f.n_i) +
           (f.line == lines::flash_attention::V_block.line ? ": every key block done, Ṽ[:, I] ← O · diag(ℓ)⁻¹ (line 14)."
                                                           : ": m ← −∞, ℓ ← 0, O ← 0 before its key blocks (line 5).");
  if (f.line == lines::flash_attention::V_tilde.line)
    return "Every block done: S was never held whole, only one block of it at a time. Against Algorithm 4 on the "
           "same inputs, and the memory each needs:";
  return "Lines 1–3 compute Q, K and V whole; the blocks of S come next (line 4).";
}

}  // namespace

void FlashBlocksView::draw_block_sizes(App& app) {
  const ModelConfig& c = app.session.model().config;
  if (c.block_r != shown_r_ || c.block_c != shown_c_)  // the model changed them: show its values
    shown_r_ = edit_r_ = c.block_r, shown_c_ = edit_c_ = c.block_c;
  const float F = ImGui::GetFontSize();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Blocks:");
  const float field = F * 3.5f + ImGui::CalcTextSize("B_r").x + ImGui::GetStyle().ItemInnerSpacing.x;
  same_line_if_fits(field);
  ImGui::SetNextItemWidth(F * 3.5f);
  ImGui::InputInt("B_r", &edit_r_, 0, 0);
  item_tooltip("B_r: the query columns of a block (line 4), at least 1.");
  same_line_if_fits(field);
  ImGui::SetNextItemWidth(F * 3.5f);
  ImGui::InputInt("B_c", &edit_c_, 0, 0);
  item_tooltip("B_c: the keys of a block (line 6), at least 1.");
  same_line_if_fits(ImGui::CalcTextSize("Re-run with these blocks").x + ImGui::GetStyle().FramePadding.x * 2);
  ImGui::BeginDisabled(edit_r_ == c.block_r && edit_c_ == c.block_c);
  if (ImGui::Button("Re-run with these blocks")) {
    std::string error;
    if (set_flash_blocks(app.session, edit_r_, edit_c_, error)) error_.clear();
    else error_ = error;
  }
  ImGui::EndDisabled();
  item_tooltip("Re-runs the forward pass with FlashAttention over blocks of B_r query columns and B_c keys; the cursor "
               "stays on its line where that step still exists. The model's θ is unchanged.");
  if (!error_.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(kError, "%s", error_.c_str());
    ImGui::PopTextWrapPos();
  }
}

// The blocks' frames over the heatmap's cells (x, y, w, h on screen); the heatmap itself greys the cells
// of blocks not computed (NaN, HeatmapOptions::nan_label).
void FlashBlocksView::draw_overlay(const App& app, const FlashBlocks& f, float x, float y, float w, float h) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float cw = w / static_cast<float>(f.l_x), ch = h / static_cast<float>(f.l_z);  // one cell
  const ImU32 line = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 accent = accent_color(app.settings.dark);
  auto rect = [&](int x0, int nx, int z0, int nz) {
    return std::pair{ImVec2(x + cw * static_cast<float>(x0), y + ch * static_cast<float>(z0)),
                     ImVec2(x + cw * static_cast<float>(x0 + nx), y + ch * static_cast<float>(z0 + nz))};
  };
  for (const FlashBlock& b : f.blocks) {
    const auto [a, z] = rect(b.x0, b.x_size, b.z0, b.z_size);
    if (b.state == FlashBlockState::Skipped) {  // crossed out: never computed (its cells are grey, as unseen ones)
      dl->AddLine(a, z, line, 1.5f);
      dl->AddLine(ImVec2(a.x, z.y), ImVec2(z.x, a.y), line, 1.5f);
    }
    dl->AddRect(a, z, line, 0.0f, 0, 1.0f);
  }
  if (f.i > 0) {  // the query block in progress, and the key block being computed
    const FlashBlock& first = f.at(f.i, 1);
    const auto [qa, qz] = rect(first.x0, first.x_size, 0, f.l_z);
    dl->AddRect(qa, qz, accent, 0.0f, 0, 1.5f);
    if (f.j > 0) {
      const FlashBlock& b = f.at(f.i, f.j);
      const auto [a, z] = rect(b.x0, b.x_size, b.z0, b.z_size);
      dl->AddRect(a, z, accent, 0.0f, 0, 4.0f);
    }
  }
}

bool FlashBlocksView::draw(App& app) {
  const Session& s = app.session;
  const FlashBlocks f = flash_blocks(s.trace(), s.cursor());
  hovered_i_ = hovered_j_ = 0;
  hovered_text_.clear();
  if (!f.found()) return false;
  drawn_frame_ = app.ui.frame_index;
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextColored(ImColor(variant_color(app.settings.dark)),
                     "Algorithm %s, FlashAttention (not in the paper: Dao et al. 2022, from seed 004), layer l = %d, "
                     "head h = %d: S is computed one B_c × B_r block at a time and never held whole.",
                     algorithm_label(algs::flash_attention).c_str(), f.idx.l, f.idx.h);
  ImGui::PopTextWrapPos();
  draw_block_sizes(app);
  math_phrases(app.fonts,
               {"ℓ_z×ℓ_x = " + std::to_string(f.l_z) + "×" + std::to_string(f.l_x) + ":",
                "⌈ℓ_x/B_r⌉ = " + std::to_string(f.n_i) + " query blocks ×", "⌈ℓ_z/B_c⌉ = " + std::to_string(f.n_j) + " key blocks;",
                "rows ↓ t_z (keys),", "columns → t_x (queries)"},
               ImGui::GetColorU32(ImGuiCol_TextDisabled));
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(where_text(f).c_str());
  if (f.line == lines::flash_attention::V_tilde.line && s.cursor() < s.trace().size())
    ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "%s", comparison_text(s.current()).c_str());
  ImGui::PopTextWrapPos();

  S_.name = "S_blk";
  S_.m = TraceMat(f.S);
  S_.rows = Axis::TokenZ, S_.cols = Axis::TokenX;
  HeatmapOptions o = heatmap_options(app, f.enter, S_);
  o.rows.title = "t_z (keys)", o.rows.index = "t_z";
  o.cols.title = "t_x (queries)", o.cols.index = "t_x";
  o.nan_label = "not computed yet";  // the blocks the cursor has not reached (and skipped ones): grey
  o.caption = "S_blk of every block computed so far, in place, Algorithm 4-F, layer " + std::to_string(f.idx.l) +
              ", head " + std::to_string(f.idx.h);
  const float legend_h = ImGui::GetTextLineHeightWithSpacing() * 3.0f;
  o.max_height = std::max(ImGui::GetFontSize() * 10.0f, ImGui::GetContentRegionAvail().y - legend_h);
  const HeatmapHover hv = heatmap("flash-S", f.S, app.fonts, o);
  draw_overlay(app, f, hv.cells.x, hv.cells.y, hv.cells.z, hv.cells.w);
  cells_[0] = hv.cells.x, cells_[1] = hv.cells.y, cells_[2] = hv.cells.z, cells_[3] = hv.cells.w;
  if (const FlashBlock* b = hv.hovered ? f.block_of_cell(hv.row, hv.col) : nullptr) {
    hovered_i_ = b->i, hovered_j_ = b->j;
    hovered_text_ = flash_block_text(f, *b);
    ImGui::BeginTooltip();  // under the heatmap's own tooltip for the cell
    ImGui::Separator();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
    ImGui::TextUnformatted(hovered_text_.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("Thick frame: the block being computed (thin: its query block). Grey: not computed yet. Crossed "
                      "out: skipped at line 7, every pair masked. Values: S_blk (line 8, already divided by √d_attn; "
                      "−∞ where masked). Hover a block for its m and ℓ.");
  ImGui::PopTextWrapPos();
  return true;
}

bool FlashBlocksView::draw_no_call(App& app) {
  Session& s = app.session;
  const size_t first = first_flash_call(s.trace());
  if (first >= s.trace().size()) return false;
  const ModelConfig& c = s.model().config;
  ImGui::PushTextWrapPos(0.0f);
  ImGui::Text("This model runs FlashAttention (Algorithm %s, not in the paper; B_r = %d, B_c = %d) in its heads: S is "
              "never built whole. Step into one of its calls to see its blocks here.",
              algorithm_label(algs::flash_attention).c_str(), c.block_r, c.block_c);
  ImGui::PopTextWrapPos();
  if (ImGui::Button("Go to the first FlashAttention call")) {
    s.jump(first);
    app.ui.viewed_event = SIZE_MAX;
  }
  draw_block_sizes(app);
  return true;
}

void step_into_flash_attention(App& app) {
  Session& s = app.session;
  if (s.attention_hooked()) app.set_attention_gpu(false);
  if (first_flash_call(s.trace()) >= s.trace().size()) {
    const int B_r = s.model().config.block_r, B_c = s.model().config.block_c;
    std::string error;
    if (!set_flash_blocks(s, B_r, B_c, error)) return app.notify(error, true);
  }
  const size_t k = first_flash_call(s.trace());
  if (k >= s.trace().size()) return app.notify("This run calls no attention: Algorithm 4-F has nothing to show.", true);
  s.jump(k);
  app.ui.viewed_event = SIZE_MAX;
  app.ui.show.pseudocode = true;
}

void FlashBlocksView::dump(const App& app, nlohmann::ordered_json& j) const {
  const Session& s = app.session;
  const FlashBlocks f = flash_blocks(s.trace(), s.cursor());
  nlohmann::ordered_json blocks = nlohmann::ordered_json::array();
  for (const FlashBlock& b : f.blocks) blocks.push_back({{"i", b.i}, {"j", b.j}, {"state", to_string(b.state)}});
  j = {{"found", f.found()},
       {"drawn", drawn_frame_ == app.ui.frame_index},
       {"l", f.idx.l},
       {"h", f.idx.h},
       {"B_r", f.B_r},
       {"B_c", f.B_c},
       {"n_i", f.n_i},
       {"n_j", f.n_j},
       {"i", f.i},
       {"j", f.j},
       {"blocks", std::move(blocks)},
       {"cells", {cells_[0], cells_[1], cells_[2], cells_[3]}},
       {"hovered", {{"i", hovered_i_}, {"j", hovered_j_}, {"text", hovered_text_}}},
       {"comparison", f.line == lines::flash_attention::V_tilde.line ? comparison_text(s.current()) : ""},
       {"error", error_}};
}

}  // namespace sf
