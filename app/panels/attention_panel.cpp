#include "app/panels/attention_panel.hpp"
#include "app/study/dependency_hover.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "app/attention_calls.hpp"
#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/labelled.hpp"
#include "core/trace/value_keys.hpp"

namespace sf {

namespace {

constexpr int kHeadsPerTable = 16;  // heads side by side in the Attention tab's grid

// The query heads that read key/value head g (1-based): "1–2", or "3" alone.
std::string heads_sharing(const ModelConfig& c, int g) {
  int lo = 0, hi = 0;
  for (int h = 1; h <= c.H; ++h)
    if (c.kv_head_of(h) == g) {
      if (!lo) lo = h;
      hi = h;
    }
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "–" + std::to_string(hi);
}

// With H_kv < H: which query heads share head h's keys and values, and the variant's name.
std::string kv_sharing_label(const ModelConfig& c, int h) {
  const int g = c.kv_head_of(h);
  return "K,V shared by heads " + heads_sharing(c, g) + " (key/value head " + std::to_string(g) + " of H_kv = " +
         std::to_string(c.kv_heads()) + "; " + (c.kv_heads() == 1 ? "multi-query" : "grouped-query") +
         " attention, a variant: seed 004)";
}

}  // namespace

namespace {

// The layers of group g: the largest l among its calls.
int layers_of(const std::vector<HeadCall>& calls, const AttentionGroup& g) {
  int L = 0;
  for (const auto& c : calls)
    if (c.caller_alg == g.alg && c.caller_line == g.line) L = std::max(L, c.idx.l);
  return std::max(L, 1);
}

// The height of each of the four views of a forward trace. They share what the grid of heads
// leaves, but take at least `readable` (what their rows need to be labelled one by one), up to half
// the panel each: the views come first, and the grid under them scrolls.
float view_height(float avail_y, float grid_h, float readable, float F) {
  const float text_h = F * 5.5f;     // the axis line above the views, the explanation under them
  const float caption_h = F * 1.4f;  // each view's caption
  const float half = (avail_y - text_h) * 0.5f - caption_h;
  const float shared = (avail_y - grid_h - text_h) * 0.5f - caption_h;
  return std::max({shared, std::min(readable, half), F * 10.0f});  // the floor: labels, cells and legend readable
}

// How `views` gradient views (2 or 4) sit in the `width` × `height` left in view: in 1, 2 or 4
// columns, each `height` tall, whichever gives each view's cells the most room (four side by side
// in a wide panel, two over two in a narrow one); the explanations and the grid of heads scroll
// under them. `with_S`: S after masking is among them, with the key of its −∞ cells under it (a
// line more than the others).
struct ViewGrid {
  int columns = 2;
  float height = 0;
};
ViewGrid gradient_grid(int views, bool with_S, float width, float height, float F) {
  // Above each view its caption and the table's padding.
  const float caption_h = F * 1.4f + ImGui::GetStyle().CellPadding.y * 2 + (with_S ? ImGui::GetFrameHeightWithSpacing() : 0.0f);
  const float labels = F * 4.0f;  // the token labels beside and above the cells, the legend under them
  ViewGrid best;
  float best_side = -1;
  for (int columns : {1, 2, 4}) {
    if (columns > views) break;
    const ViewGrid g{columns, height / static_cast<float>(views / columns) - caption_h};
    const float side = std::min(width / static_cast<float>(columns), g.height) - labels;
    if (side > best_side) best = g, best_side = side;
  }
  best.height = std::max(best.height, F * 8.5f);  // the floor: labels, cells and legend readable (the panel then scrolls)
  return best;
}

const char* views_name(AttentionPanel::GradientViews v) {
  switch (v) {
    case AttentionPanel::GradientViews::Forward: return "forward";
    case AttentionPanel::GradientViews::Gradient: return "gradient";
    case AttentionPanel::GradientViews::Auto:
    case AttentionPanel::GradientViews::Both: break;
  }
  return "both";
}

}  // namespace

void AttentionPanel::follow_cursor(const Session& s, const std::vector<HeadCall>& calls,
                                   const std::vector<AttentionGroup>& groups) {
  if (s.cursor() == followed_) return;
  followed_ = s.cursor();
  const Event& e = s.current();
  if ((e.alg == 4 || e.alg == 5) && e.idx.l && e.idx.h) {
    l_ = e.idx.l;
    h_ = e.idx.h;
    for (const auto& c : calls)
      if ((c.enter <= s.cursor() && s.cursor() <= c.line6 + 1) ||
          (e.pass == Pass::Backward && c.back_enter <= s.cursor() && c.idx == e.idx)) {  // in its adjoint
        for (size_t gi = 0; gi < groups.size(); ++gi)
          if (groups[gi].alg == c.caller_alg && groups[gi].line == c.caller_line) g_ = static_cast<int>(gi);
      }
  }
  if (e.idx.i) i_ = e.idx.i;
}

void AttentionPanel::draw_selectors(const std::vector<AttentionGroup>& groups, int L_g, int H, int max_i,
                                    const char* step_format) {
  const float F = ImGui::GetFontSize();
  if (groups.size() > 1) {
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      const std::string short_title = groups[gi].title.substr(0, groups[gi].title.find(" — "));
      radio_in_row((short_title + "##g" + std::to_string(gi)).c_str(), &g_, static_cast<int>(gi), gi == 0);
      item_tooltip(groups[gi].title + ". " + groups[gi].mask_text + ".");
    }
  }
  ImGui::SetNextItemWidth(F * 7.0f);
  ImGui::SliderInt("##layer", &l_, 1, L_g, "layer l = %d");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(F * 7.0f);
  ImGui::SliderInt("##head", &h_, 1, H, "head h = %d");
  if (max_i) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(F * 10.0f);
    ImGui::SliderInt("##step", &i_, 1, max_i, step_format);
  }
}

// "the cursor is in this call", or a button that goes there.
void AttentionPanel::draw_cursor_link(App& app, const HeadCall& call) {
  Session& s = app.session;
  const size_t cursor = s.cursor();
  const char* here_text = "the cursor is in this call";
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(here_text).x) ImGui::NewLine();
  const Event& e = s.current();
  if (cursor >= call.enter && cursor <= call.line6) {
    ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "%s", here_text);
  } else if (e.pass == Pass::Backward && e.alg == 4 && cursor >= call.back_enter && e.idx == call.idx) {
    ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "the cursor is in this head's adjoint");
  } else if (ImGui::SmallButton("Go to this call")) {
    s.jump(call.enter);
    app.ui.viewed_event = SIZE_MAX;
  }
}

void AttentionPanel::draw_gradient_switch(GradientViews shown) {
  int v = static_cast<int>(shown);
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("show");
  ImGui::SameLine();
  radio_in_row("S, A, ∇S and ∇A", &v, static_cast<int>(GradientViews::Both), true);
  radio_in_row("S and A", &v, static_cast<int>(GradientViews::Forward), false);
  radio_in_row("∇S and ∇A", &v, static_cast<int>(GradientViews::Gradient), false);
  item_tooltip("Two views are twice as tall as four: on a projector, show the forward pair or the gradient pair alone.");
  if (v != static_cast<int>(shown)) gradient_views_ = static_cast<GradientViews>(v);
}

void AttentionPanel::draw_views(App& app, const HeadCall& call, const AttentionGroup& group, float avail_y,
                                float grid_h) {
  const float F = ImGui::GetFontSize();
  HeatmapHover hovered;
  auto options = [&](size_t k, const Value& v) {
    // The value's scale, as in every view of it (apply_value_scale): S and S after masking on
    // ±max|S|, softmax(S/√d_attn) on [0, 1].
    HeatmapOptions o = heatmap_options(app, k, v);
    o.rows.title.clear();  // said once above the four views
    o.cols.title.clear();
    o.max_width = ImGui::GetContentRegionAvail().x;
    return o;
  };
  float map_h = 0;  // the views share one height (and axes): S's, in a column of the table below
  struct View {
    const char* id;
    std::string caption;
    size_t k;
    const Value* v;
  };
  auto draw_view = [&](const View& w) {
    math_text(app.fonts, w.caption);
    HeatmapOptions o = options(w.k, *w.v);
    if (map_h == 0) map_h = view_height(avail_y, grid_h, heatmap_height_to_label_rows(MatView(w.v->m), app.fonts, o), F);
    o.max_height = map_h;
    o.mark_row = hover_.row;
    o.mark_col = hover_.col;
    const HeatmapHover hv = heatmap(w.id, w.v->m, app.fonts, o);
    trace_dependencies(app, w.k, *w.v, hv);  // the hovered cell's sources, framed in the other views
    if (hv.hovered) hovered = hv;
  };
  math_phrases(app.fonts, {group.title + ":", "rows ↓ t_z (keys),", "columns → t_x (queries)"},
               ImGui::GetColorU32(ImGuiCol_TextDisabled));
  const bool gradients = call.dS && call.dA;  // a traced backward reached this head
  std::vector<View> views;
  int columns = 2;
  GradientViews shown = GradientViews::Both;
  if (!gradients) {
    views = {{"S", "S = Kᵀ Q, line 4", call.line4, call.S},
             {"Mask", "Mask[t_z, t_x]", call.enter, call.mask},
             {"masked", "S after masking, line 5", call.line5, call.S_masked},
             {"softmax", call.A->name + ", line 6", call.line6, call.A}};
    if (call.B) {  // the relative bias (issue 25, T5; not in the paper): B as the Toeplitz matrix it is
      views.push_back({"bias", "B, the relative bias", call.B_event, call.B});
      columns = 3;
    }
  } else {
    // S after masking and A, and ∇S and ∇A from the head's adjoint frame (hover traces their cells there).
    const float switch_h = ImGui::GetFrameHeightWithSpacing();
    ImVec2 left = ImGui::GetContentRegionAvail();  // under the switch, less a margin above the panel's edge
    left.y -= switch_h + F * 0.5f;
    shown = gradient_views_;
    const float readable = heatmap_height_to_label_rows(MatView(call.dS->m), app.fonts, options(call.dS_event, *call.dS));
    if (shown == GradientViews::Auto)  // all four where their rows can all be labelled
      shown = gradient_grid(4, true, left.x, left.y, F).height >= readable ? GradientViews::Both : GradientViews::Gradient;
    draw_gradient_switch(shown);
    if (shown != GradientViews::Gradient) {
      views.push_back({"masked", "S after masking, line 5", call.line5, call.S_masked});
      views.push_back({"softmax", call.A->name + ", line 6", call.line6, call.A});
    }
    if (shown != GradientViews::Forward) {
      views.push_back({"grad-S", "∇S, masked cells exactly 0", call.dS_event, call.dS});
      views.push_back({"grad-A", "∇A, A = softmax(S/√d_attn)", call.dA_event, call.dA});
    }
    const ViewGrid g = gradient_grid(static_cast<int>(views.size()), shown != GradientViews::Gradient, left.x, left.y, F);
    columns = g.columns;
    map_h = g.height;
  }
  if (ImGui::BeginTable("views", columns, ImGuiTableFlags_SizingStretchSame)) {
    for (const View& w : views) {
      ImGui::TableNextColumn();
      draw_view(w);
    }
    ImGui::EndTable();
  }
  shown_ = {call.idx.l, call.idx.h, gradients, MatF(call.A->m), gradients ? MatF(call.dS->m) : MatF(),
            gradients ? MatF(call.dA->m) : MatF(), MatF(call.mask->m), gradients ? views_name(shown) : "", columns};
  hover_ = hovered;
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled(
      "Mask[t_z, t_x] = 1 where query t_x may attend to key t_z (here %s). Each column of "
      "softmax(S/√d_attn) sums to 1: query t_x shares its attention among those keys; a −∞ score gets weight "
      "exactly 0.",
      group.mask_text.c_str());
  if (gradients)
    ImGui::TextColored(ImColor(accent_color(app.settings.dark)),
                       "∇S and ∇A are not in the paper: gradients of the training loss (∂loss/∂S, ∂loss/∂A), from "
                       "the Attention adjoint of layer %d, head %d in the traced update's backward pass. A masked "
                       "score is −∞ whatever its inputs, so its gradient is exactly 0. (S before masking and the "
                       "Mask: the Tensor view at this head's forward call.)",
                       call.idx.l, call.idx.h);
  ImGui::PopTextWrapPos();
}

// Every head of every layer of every group: click one to move the cursor to its call.
void AttentionPanel::draw_head_grid(App& app, const std::vector<HeadCall>& calls,
                                    const std::vector<AttentionGroup>& groups, float thumb) {
  Session& s = app.session;
  const ModelConfig& cfg = s.model().config;
  const float F = ImGui::GetFontSize();
  const bool shared_kv = cfg.kv_heads() < cfg.H;
  const ImU32 accent = accent_color(app.settings.dark);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const AttentionGroup& g = groups[gi];
    ImGui::Separator();
    ImGui::TextUnformatted((g.title + ": " + keys::attention_weights.symbol + ", 0 to 1").c_str());
    item_tooltip(g.mask_text);
    // At most kHeadsPerTable heads side by side (ImGui tables take up to 64 columns; H may be 64),
    // the next ones in another table below.
    for (int h0 = 1; h0 <= cfg.H; h0 += kHeadsPerTable) {
      const int h1 = std::min(cfg.H, h0 + kHeadsPerTable - 1);
      ImGui::PushID(static_cast<int>(gi) * 1000 + h0);
      if (!ImGui::BeginTable("heads", h1 - h0 + 2, ImGuiTableFlags_SizingFixedFit)) {
        ImGui::PopID();
        continue;
      }
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      for (int h = h0; h <= h1; ++h) {
        ImGui::TableNextColumn();
        ImGui::TextDisabled("h = %d", h);
      }
      if (shared_kv) {  // the key/value head each query head reads, groups on alternating backgrounds
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("K,V");
        for (int h = h0; h <= h1; ++h) {
          ImGui::TableNextColumn();
          const int kv = cfg.kv_head_of(h);
          if (kv % 2) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, highlight_bg(app.settings.dark));
          ImGui::Text("g = %d", kv);
          item_tooltip(kv_sharing_label(cfg, h));
        }
      }
      for (int l = 1; l <= layers_of(calls, g); ++l) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::SetCursorPosY(ImGui::GetCursorPosY() + (thumb - F) * 0.5f);
        ImGui::TextDisabled("l = %d", l);
        for (int h = h0; h <= h1; ++h) {
          ImGui::TableNextColumn();
          const HeadCall* c = find_head_call(calls, g.alg, g.line, l, h, i_);
          if (!c || !c->A) continue;
          HeatmapOptions o = heatmap_options(app, c->line6, *c->A);  // [0, 1], as in the large view
          o.thumbnail = true;
          o.max_width = thumb;
          o.max_height = thumb;
          o.frame_color = static_cast<int>(gi) == g_ && l == l_ && h == h_ ? accent : 0;
          o.on_click = [&, l, h, gi, enter = c->enter](int, int) {
            g_ = static_cast<int>(gi);
            l_ = l;
            h_ = h;
            s.jump(enter);
            app.ui.viewed_event = SIZE_MAX;
          };
          ImGui::PushID(l * 1000 + h);
          heatmap("head", c->A->m, app.fonts, o);
          ImGui::PopID();
          item_tooltip("Layer " + std::to_string(l) + ", head " + std::to_string(h) + ": click to go to this call");
        }
      }
      ImGui::EndTable();
      ImGui::PopID();
    }
  }
}

void AttentionPanel::draw(App& app) {
  Session& s = app.session;
  const ModelConfig& cfg = s.model().config;
  if (flash_.draw(app)) return;  // the cursor is in an Algorithm 4-F call: its blocks
  const std::vector<HeadCall> calls = head_calls(s.trace());
  if (calls.empty() && rfa_.draw(app)) return;  // the heads ran Algorithm 4-R (random features), not Algorithm 4
  if (calls.empty()) {
    if (!flash_.draw_no_call(app)) ImGui::TextDisabled("This trace has no attention call.");
    return;
  }
  // The transformer lines that call attention (one for GPT and BERT; encoder, decoder and
  // cross-attention for the encoder-decoder), each with its own L×H grid.
  const std::vector<AttentionGroup> groups = attention_groups(calls, cfg);
  follow_cursor(s, calls, groups);  // take over the cursor's group, l, h and i
  g_ = std::clamp(g_, 0, static_cast<int>(groups.size()) - 1);
  const AttentionGroup& group = groups[static_cast<size_t>(g_)];
  const int L_g = layers_of(calls, group);
  int max_i = 0;
  for (const auto& c : calls) max_i = std::max(max_i, c.idx.i);
  l_ = std::clamp(l_, 1, L_g);
  h_ = std::clamp(h_, 1, cfg.H);
  i_ = max_i ? std::clamp(i_, 1, max_i) : 0;
  // Index i is Algorithm 14's generation step, or the epoch of a traced training step (Algorithms 11–13's line 1).
  draw_selectors(groups, L_g, cfg.H, max_i,
                 s.run_kind() == RunKind::Training ? "epoch i = %d" : "generation step i = %d");
  if (cfg.kv_heads() < cfg.H) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "%s", kv_sharing_label(cfg, h_).c_str());
    ImGui::PopTextWrapPos();
  }
  // The call for (l, h) at step i; for a trace without steps, the only one.
  const HeadCall* call = find_head_call(calls, group.alg, group.line, l_, h_, i_);
  if (!call || !call->S || !call->S_masked || !call->A || !call->mask) {
    ImGui::TextDisabled("No attention call for layer %d, head %d in this trace.", l_, h_);
    return;
  }
  draw_cursor_link(app, *call);

  // The thumbnail grid's geometry first, so that the four large views take what is left.
  const float F = ImGui::GetFontSize();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float label_w = ImGui::CalcTextSize("l = 00").x + F;
  const float thumb = std::clamp((avail.x - label_w) / static_cast<float>(cfg.H) - F * 0.6f, F * 2.0f, F * 4.0f);
  int grid_rows = 0;
  for (const auto& g : groups) grid_rows += layers_of(calls, g);
  const float grid_h = static_cast<float>(grid_rows) * (thumb + F * 0.6f) + F * 4.0f * static_cast<float>(groups.size());
  draw_views(app, *call, group, avail.y, grid_h);
  draw_head_grid(app, calls, groups, thumb);
}

}  // namespace sf
