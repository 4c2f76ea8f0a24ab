#include "app/panels/attention_panel.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"

namespace sf {

namespace {

// One traced call of Algorithm 4 and the values its lines bound.
struct HeadCall {
  size_t enter = 0;  // its Enter event
  Indices idx;
  size_t line4 = 0, line5 = 0, line6 = 0;  // its line events (0: not found)
  const Value* mask = nullptr;             // Enter: Mask
  const Value* S = nullptr;                // line 4: S = KᵀQ
  const Value* S_masked = nullptr;         // line 5: S with −∞
  const Value* A = nullptr;                // line 6: softmax(S/√d_attn)
};

const Value* find_value(const Event& e, const std::string& name) {
  for (const auto& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}

std::vector<HeadCall> head_calls(const Trace& t) {
  std::vector<HeadCall> out;
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.alg != 4 || e.kind != EventKind::Enter) continue;
    HeadCall c;
    c.enter = k;
    c.idx = e.idx;
    c.mask = find_value(e, "Mask");
    for (size_t j = k + 1; j < t.size() && t.events[j].depth >= e.depth; ++j) {
      const Event& x = t.events[j];
      if (x.depth != e.depth || x.kind != EventKind::Line || x.alg != 4) continue;
      if (x.line == 4) c.line4 = j, c.S = find_value(x, "S");
      if (x.line == 5) c.line5 = j, c.S_masked = find_value(x, "S");
      if (x.line == 6) c.line6 = j, c.A = find_value(x, "softmax(S/√d_attn)");
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

void AttentionPanel::draw(App& app) {
  Session& s = app.session;
  const Trace& t = s.trace();
  const ModelConfig& cfg = s.model().config;
  const std::vector<HeadCall> calls = head_calls(t);
  if (calls.empty()) {
    ImGui::TextDisabled("This trace has no attention call.");
    return;
  }
  // Take over the cursor's l and h when it moves into an attention call, and its i.
  if (s.cursor() != followed_) {
    followed_ = s.cursor();
    const Event& e = s.current();
    if ((e.alg == 4 || e.alg == 5) && e.idx.l && e.idx.h) {
      l_ = e.idx.l;
      h_ = e.idx.h;
    }
    if (e.idx.i) i_ = e.idx.i;
  }
  int max_i = 0;
  for (const auto& c : calls) max_i = std::max(max_i, c.idx.i);
  l_ = std::clamp(l_, 1, cfg.L);
  h_ = std::clamp(h_, 1, cfg.H);
  i_ = max_i ? std::clamp(i_, 1, max_i) : 0;

  const float F = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(F * 7.0f);
  ImGui::SliderInt("##layer", &l_, 1, cfg.L, "layer l = %d");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(F * 7.0f);
  ImGui::SliderInt("##head", &h_, 1, cfg.H, "head h = %d");
  if (max_i) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(F * 10.0f);
    ImGui::SliderInt("##step", &i_, 1, max_i, "generation step i = %d");
  }
  // The call for (l, h) at step i; for a trace without steps, the only one.
  auto call_for = [&](int l, int h) -> const HeadCall* {
    for (const auto& c : calls)
      if (c.idx.l == l && c.idx.h == h && c.idx.i == i_) return &c;
    return nullptr;
  };
  const HeadCall* call = call_for(l_, h_);
  if (!call || !call->S || !call->S_masked || !call->A || !call->mask) {
    ImGui::TextDisabled("No attention call for layer %d, head %d in this trace.", l_, h_);
    return;
  }
  const size_t cursor = s.cursor();
  const bool here = cursor >= call->enter && cursor <= call->line6;
  const char* here_text = "the cursor is in this call";
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(here_text).x) ImGui::NewLine();
  if (here) {
    ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "%s", here_text);
  } else if (ImGui::SmallButton("Go to this call")) {
    s.jump(call->enter);
    app.ui.viewed_event = SIZE_MAX;
  }

  // Thumbnail grid geometry first, so that the four large views take what is left.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float label_w = ImGui::CalcTextSize("l = 00").x + F;
  const float thumb = std::clamp((avail.x - label_w) / static_cast<float>(cfg.H) - F * 0.6f, F * 2.0f, F * 4.0f);
  const float grid_h = static_cast<float>(cfg.L) * (thumb + F * 0.6f) + F * 4.0f;
  const float text_h = F * 5.5f;  // the axis line above the views, the explanation under them
  const float map_h = std::max((avail.y - grid_h - text_h) * 0.5f - F * 1.4f, F * 10.0f);

  // S and S after masking share one colour scale, ±max|S|, so the masked cells stand out.
  float smax = 0;
  for (Eigen::Index j = 0; j < call->S->m.size(); ++j)
    if (std::isfinite(call->S->m.data()[j])) smax = std::max(smax, std::abs(call->S->m.data()[j]));
  HeatmapHover hovered;
  auto view = [&](const char* id, const std::string& caption, size_t k, const Value& v, bool shared_scale) {
    math_text(app.fonts, caption);
    HeatmapOptions o = heatmap_options(app, k, v);
    o.rows.title.clear();  // said once above the four views
    o.cols.title.clear();
    if (shared_scale && smax > 0) {
      o.scale = ColorScale::Diverging;
      o.lo = -smax;
      o.hi = smax;
    }
    if (&v == call->A) {
      o.scale = ColorScale::Sequential;
      o.lo = 0;
      o.hi = 1;
    }
    o.max_width = ImGui::GetContentRegionAvail().x;
    o.max_height = map_h;
    o.mark_row = hover_.row;
    o.mark_col = hover_.col;
    const HeatmapHover hv = heatmap(id, v.m, app.fonts, o);
    if (hv.hovered) hovered = hv;
  };
  math_text(app.fonts, "In each view: rows ↓ t_z (keys), columns → t_x (queries)",
            ImGui::GetColorU32(ImGuiCol_TextDisabled));
  if (ImGui::BeginTable("views", 2, ImGuiTableFlags_SizingStretchSame)) {
    ImGui::TableNextColumn();
    view("S", "S = Kᵀ Q, line 4", call->line4, *call->S, true);
    ImGui::TableNextColumn();
    view("Mask", "Mask[t_z, t_x]", call->enter, *call->mask, false);
    ImGui::TableNextColumn();
    view("masked", "S after masking, line 5", call->line5, *call->S_masked, true);
    ImGui::TableNextColumn();
    view("softmax", "softmax(S/√d_attn), line 6", call->line6, *call->A, false);
    ImGui::EndTable();
  }
  hover_ = hovered;
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled(
      "Mask[t_z, t_x] = 1 where query t_x may attend to key t_z (here t_z ≤ t_x). Each column of "
      "softmax(S/√d_attn) sums to 1: query t_x shares its attention among those keys; a −∞ score gets weight "
      "exactly 0.");
  ImGui::PopTextWrapPos();

  // Every head of every layer: click one to move the cursor to its call.
  ImGui::Separator();
  ImGui::TextUnformatted("All heads: softmax(S/√d_attn), on the scale 0 to 1");
  if (!ImGui::BeginTable("heads", cfg.H + 1, ImGuiTableFlags_SizingFixedFit)) return;
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  for (int h = 1; h <= cfg.H; ++h) {
    ImGui::TableNextColumn();
    ImGui::TextDisabled("h = %d", h);
  }
  const ImU32 accent = accent_color(app.settings.dark);
  for (int l = 1; l <= cfg.L; ++l) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::SetCursorPosY(ImGui::GetCursorPosY() + (thumb - F) * 0.5f);
    ImGui::TextDisabled("l = %d", l);
    for (int h = 1; h <= cfg.H; ++h) {
      ImGui::TableNextColumn();
      const HeadCall* c = call_for(l, h);
      if (!c || !c->A) continue;
      HeatmapOptions o = heatmap_options(app, c->line6, *c->A);
      o.thumbnail = true;
      o.scale = ColorScale::Sequential;
      o.lo = 0;
      o.hi = 1;
      o.max_width = thumb;
      o.max_height = thumb;
      o.frame_color = l == l_ && h == h_ ? accent : 0;
      o.on_click = [&, l, h, enter = c->enter](int, int) {
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
}

}  // namespace sf
