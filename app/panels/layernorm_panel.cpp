#include "app/panels/layernorm_panel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/bar_table.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace sf {

// One layer_norm call: its events and the values Algorithm 6 bound in them.
struct LnCall {
  size_t ev[4] = {0, 0, 0, 0};  // ev[0]: the Enter event; ev[1..3]: the events of lines 1–3
  int t = 0;
  const Value *e = nullptr, *gamma = nullptr, *beta = nullptr, *eps = nullptr;
  const Value *m = nullptr, *v = nullptr, *e_hat = nullptr;
  bool complete() const { return ev[1] && ev[2] && ev[3] && e && gamma && beta && eps && m && v && e_hat; }
};

// The calls one DTransformer line makes: "for t ∈ [ℓ]: … ← layer_norm(X[:, t] | γ, β)".
struct LnGroup {
  size_t caller = 0;  // the Algorithm 10 Line event (line 5, 7 or 10), after its calls
  int i = 0, l = 0, line = 0;
  std::vector<LnCall> calls;
};

namespace {

const Value* find_value(const Event& e, const char* name) {
  for (const auto& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}

// One pass over the trace: calls are nested before the caller line's event (core/trace.hpp).
std::vector<LnGroup> collect_groups(const Trace& tr) {
  std::vector<LnGroup> groups;
  std::vector<LnCall> pending;
  for (size_t j = 0; j < tr.size(); ++j) {
    const Event& ev = tr.events[j];
    if (ev.alg == 6 && ev.kind == EventKind::Enter) {
      LnCall c;
      c.ev[0] = j;
      c.t = ev.idx.t;
      c.e = find_value(ev, "e");
      c.gamma = find_value(ev, "γ");
      c.beta = find_value(ev, "β");
      c.eps = find_value(ev, "ε");
      pending.push_back(c);
    } else if (ev.alg == 6 && ev.kind == EventKind::Line && !pending.empty() && ev.line >= 1 && ev.line <= 3) {
      LnCall& c = pending.back();
      c.ev[ev.line] = j;
      if (ev.line == 1) c.m = find_value(ev, "m");
      if (ev.line == 2) c.v = find_value(ev, "v");
      if (ev.line == 3) c.e_hat = find_value(ev, "ê");
    } else if (ev.alg == 10 && ev.kind == EventKind::Line && (ev.line == 5 || ev.line == 7 || ev.line == 10)) {
      std::erase_if(pending, [](const LnCall& c) { return !c.complete(); });
      if (!pending.empty()) groups.push_back({j, ev.idx.i, ev.idx.l, ev.line, std::move(pending)});
      pending.clear();
    }
  }
  return groups;
}

std::string subscript_number(int n) {
  static const char* digits[] = {"₀", "₁", "₂", "₃", "₄", "₅", "₆", "₇", "₈", "₉"};
  std::string s;
  for (char c : std::to_string(n)) s += digits[c - '0'];
  return s;
}

// "layer 1, before attention (γ¹₁, β¹₁)", with the generation step first inside Algorithm 14.
std::string group_label(const LnGroup& g) {
  std::string s = g.i ? "generation step " + std::to_string(g.i) + " · " : "";
  const std::string l = subscript_number(g.l);
  if (g.line == 5) s += "layer " + std::to_string(g.l) + ", before attention (γ¹" + l + ", β¹" + l + ")";
  else if (g.line == 7) s += "layer " + std::to_string(g.l) + ", before MLP (γ²" + l + ", β²" + l + ")";
  else s += "final (γ, β)";
  return s;
}

// The parameter names in mathtext notation: "γ¹_1", "β²_2", "γ".
std::string param_name(const LnGroup& g, const char* base) {
  if (g.line == 10) return base;
  return std::string(base) + (g.line == 5 ? "¹_" : "²_") + std::to_string(g.l);
}

std::string fmt(float x, int digits = 4) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

// A bar chart of v[0..n) from zero, with the lowest and highest value written on the left
// and `x_left`/`x_right` under the ends. Bar `hl` is drawn in `hl_color`; `ref_label`, when
// not empty, draws a horizontal line at `ref`. Returns the hovered bar (0-based) or -1.
int bar_chart(const App& app, const char* id, const float* v, int n, ImVec2 size, ImU32 color, int hl, ImU32 hl_color,
              const std::string& x_left, const std::string& x_right, float ref = 0.0f, const std::string& ref_label = "") {
  ImFont* small = app.fonts.small;
  const float sp = small->FontSize;
  if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, ImVec2(std::max(size.x, 1.0f), size.y + sp * 1.2f));
  if (n <= 0) return -1;
  float lo = std::min(0.0f, *std::min_element(v, v + n)), hi = std::max(0.0f, *std::max_element(v, v + n));
  if (!ref_label.empty()) lo = std::min(lo, ref), hi = std::max(hi, ref);
  if (!(hi > lo)) hi = lo + 1.0f;
  const std::string lo_s = fmt(lo), hi_s = fmt(hi);
  const float margin = std::max(small->CalcTextSizeA(sp, FLT_MAX, 0, lo_s.c_str()).x,
                                small->CalcTextSizeA(sp, FLT_MAX, 0, hi_s.c_str()).x) + sp * 0.4f;
  const ImVec2 a(p0.x + margin, p0.y), b(p0.x + size.x, p0.y + size.y);
  const float plot_w = b.x - a.x;
  if (plot_w < 4) return -1;
  auto y_of = [&](float x) { return b.y - (x - lo) / (hi - lo) * (b.y - a.y); };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  dl->AddRectFilled(a, b, ImGui::GetColorU32(ImGuiCol_FrameBg));
  dl->AddText(small, sp, ImVec2(p0.x, a.y), dim, hi_s.c_str());
  dl->AddText(small, sp, ImVec2(p0.x, b.y - sp), dim, lo_s.c_str());
  const float bw = plot_w / static_cast<float>(n), gap = bw > 4 ? 1.0f : 0.0f, y0 = y_of(0);
  int hovered = -1;
  if (ImGui::IsItemHovered()) {
    const float mx = ImGui::GetIO().MousePos.x;
    if (mx >= a.x && mx < b.x) hovered = std::clamp(static_cast<int>((mx - a.x) / bw), 0, n - 1);
  }
  for (int i = 0; i < n; ++i) {
    const float x0 = a.x + bw * static_cast<float>(i), y1 = y_of(v[i]);
    dl->AddRectFilled(ImVec2(x0, std::min(y0, y1)), ImVec2(x0 + std::max(1.0f, bw - gap), std::max(y0, y1)),
                      i == hl || i == hovered ? hl_color : color);
  }
  dl->AddLine(ImVec2(a.x, y0), ImVec2(b.x, y0), dim);
  if (!ref_label.empty()) {
    const float yr = y_of(ref);
    dl->AddLine(ImVec2(a.x, yr), ImVec2(b.x, yr), hl_color, 1.5f);
    const float tw = small->CalcTextSizeA(sp, FLT_MAX, 0, ref_label.c_str()).x;
    const ImVec2 tp(b.x - tw - 3, std::max(a.y, yr - sp - 1));
    dl->AddRectFilled(ImVec2(tp.x - 2, tp.y), ImVec2(tp.x + tw + 2, tp.y + sp), ImGui::GetColorU32(ImGuiCol_WindowBg, 0.85f));
    dl->AddText(small, sp, tp, hl_color, ref_label.c_str());
  }
  dl->AddText(small, sp, ImVec2(a.x, b.y + 1), dim, x_left.c_str());
  const float rw = small->CalcTextSizeA(sp, FLT_MAX, 0, x_right.c_str()).x;
  dl->AddText(small, sp, ImVec2(b.x - rw, b.y + 1), dim, x_right.c_str());
  return hovered;
}

// The values of a column binned into equal-width bins between their extremes, drawn as bars.
void histogram_chart(const App& app, const char* id, const Value& val, ImVec2 size, ImU32 color, ImU32 hl_color) {
  const int n = static_cast<int>(val.m.size());
  const float* x = val.m.data();
  const float lo = *std::min_element(x, x + n), hi = *std::max_element(x, x + n);
  constexpr int kBins = 16;
  const float width = hi > lo ? (hi - lo) / kBins : 1.0f;
  std::vector<float> counts(kBins, 0.0f);
  for (int i = 0; i < n; ++i) counts[std::clamp(static_cast<int>((x[i] - lo) / width), 0, kBins - 1)] += 1.0f;
  const int h = bar_chart(app, id, counts.data(), kBins, size, color, -1, hl_color, fmt(lo), fmt(hi));
  if (h >= 0) {
    const float from = lo + width * static_cast<float>(h);
    item_tooltip(std::to_string(static_cast<int>(counts[h])) + " of the " + std::to_string(n) + " entries lie in [" +
                 fmt(from) + ", " + fmt(from + width) + (h + 1 == kBins ? "]" : ")"));
  }
}

// The tooltip of feature i (0-based) of the selected call, shown over any of its charts.
void feature_tip(const LnCall& sel, int i) {
  item_tooltip("i = " + std::to_string(i + 1) + "\ne[i] = " + fmt(sel.e->m(i, 0)) + "   (before)\nê[i] = " +
               fmt(sel.e_hat->m(i, 0)) + "   (after, line 3)\nγ[i] = " + fmt(sel.gamma->m(i, 0)) +
               ",  β[i] = " + fmt(sel.beta->m(i, 0)));
}

}  // namespace

void LayerNormPanel::draw(App& app) {
  const std::vector<LnGroup> groups = collect_groups(app.session.trace());
  if (groups.empty()) {
    ImGui::TextDisabled("This trace has no layer_norm call.");
    return;
  }
  follow_cursor(app, groups);
  const LnGroup& g = selected_group(groups);
  key_ = {g.i, g.l, g.line};
  t_ = std::clamp(t_, 1, static_cast<int>(g.calls.size()));

  draw_call_picker(app, groups, g);
  const LnCall& sel = g.calls[t_ - 1];
  draw_statistics(app, g, sel);
  const int hovered_column = draw_column_before_after(app, g, sel);
  const int hovered_param = draw_gamma_beta(app, g, sel);
  hovered_i_ = hovered_param >= 0 ? hovered_param : hovered_column;  // the last chart hovered
}

// Follow the cursor into the call it is in (or the line that makes the calls).
void LayerNormPanel::follow_cursor(const App& app, const std::vector<LnGroup>& groups) {
  const size_t shown = app.shown_event();
  if (shown == followed_) return;
  followed_ = shown;
  const Trace& tr = app.session.trace();
  for (const auto& g : groups) {
    if (shown < g.calls.front().ev[0] || shown > g.caller) continue;
    key_ = {g.i, g.l, g.line};
    if (tr.events[shown].idx.t > 0) t_ = tr.events[shown].idx.t;
    break;
  }
}

// The group key_ names, else the same layer and line in another generation step, else the first.
const LnGroup& LayerNormPanel::selected_group(const std::vector<LnGroup>& groups) const {
  for (const auto& g : groups)
    if (Key{g.i, g.l, g.line} == key_) return g;
  for (const auto& g : groups)
    if (g.l == key_.l && g.line == key_.line) return g;
  return groups.front();
}

// The combo of call groups, the caller's pseudocode line, and the selected call's ε.
void LayerNormPanel::draw_call_picker(const App& app, const std::vector<LnGroup>& groups, const LnGroup& g) {
  ImGui::SetNextItemWidth(-ImGui::GetFontSize() * 2.0f);
  if (ImGui::BeginCombo("##call", group_label(g).c_str())) {
    for (size_t k = 0; k < groups.size(); ++k) {
      ImGui::PushID(static_cast<int>(k));
      const bool sel = &groups[k] == &g;
      if (ImGui::Selectable(group_label(groups[k]).c_str(), sel)) key_ = {groups[k].i, groups[k].l, groups[k].line};
      if (sel) ImGui::SetItemDefaultFocus();
      ImGui::PopID();
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  help_marker("Algorithm 10 calls layer_norm (Algorithm 6) on every column of X: in each layer before attention "
              "(line 5) and before the MLP (line 7), and once more at the end (line 10). Pick a group of calls here; "
              "it follows the cursor when the cursor enters one.");
  if (const PseudoLine* pl = pseudocode_line(10, g.line)) {
    ImGui::TextDisabled("Algorithm 10 line %d%s:", g.line, g.l && g.line != 10 ? (" (l=" + std::to_string(g.l) + ")").c_str() : "");
    ImGui::SameLine();
    math_text(app.fonts, pl->text);
  }
  const LnCall& sel = g.calls[t_ - 1];
  ImGui::Text("ε = %g", sel.eps->m(0, 0));
  ImGui::SameLine();
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", sel.eps->note.c_str());
  ImGui::PopTextWrapPos();
}

// Per-token statistics, Algorithm 6 lines 1–2: a row per column t; clicking one moves the cursor to its call.
void LayerNormPanel::draw_statistics(App& app, const LnGroup& g, const LnCall& sel) {
  Session& s = app.session;
  const bool dark = app.settings.dark;
  const float fs = ImGui::GetFontSize();
  const Tokens& toks = s.tokens_at(g.caller);
  float m_scale = 0, v_scale = 0;
  for (const auto& c : g.calls) {
    m_scale = std::max(m_scale, std::abs(c.m->m(0, 0)));
    v_scale = std::max(v_scale, c.v->m(0, 0));
  }
  ImGui::Spacing();
  math_text(app.fonts, "Each column's mean m (line 1) and variance v (line 2), over its d_e = " +
                           std::to_string(sel.e->m.size()) + " entries:");
  const float row_h = ImGui::GetTextLineHeightWithSpacing();
  const float table_h = row_h * (static_cast<float>(std::min<size_t>(g.calls.size(), 8)) + 1.6f);
  const ImU32 m_col = dark ? IM_COL32(90, 160, 230, 255) : IM_COL32(40, 100, 190, 255);
  const ImU32 v_col = dark ? IM_COL32(120, 200, 120, 255) : IM_COL32(40, 140, 60, 255);
  if (!begin_bar_table("stats", {"t", fs * 1.8f, "x[t]", fs * 3.2f, "m  (line 1)", "v  (line 2)"}, table_h)) return;
  for (const auto& c : g.calls) {
    ImGui::PushID(c.t);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const bool later = c.ev[0] > s.cursor();
    if (later) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetColorU32(ImGuiCol_TextDisabled));
    if (ImGui::Selectable(std::to_string(c.t).c_str(), c.t == t_, ImGuiSelectableFlags_SpanAllColumns))
      select_column(app, c);
    item_tooltip("Click to move the cursor to layer_norm(X[:, " + std::to_string(c.t) + "] | …)" +
                 (later ? " (it runs later than the cursor: its row is dimmed)" : ""));
    ImGui::TableNextColumn();
    ImGui::PushFont(app.fonts.mono);
    ImGui::TextUnformatted(c.t >= 1 && c.t <= static_cast<int>(toks.size())
                               ? token_label(s.tokenizer(), toks[c.t - 1]).c_str()
                               : "?");
    ImGui::PopFont();
    ImGui::TableNextColumn();
    number_bar(app, fmt(c.m->m(0, 0), 3), "-0.000123 ", c.m->m(0, 0), m_scale, true, m_col);
    ImGui::TableNextColumn();
    number_bar(app, fmt(c.v->m(0, 0), 3), "-0.000123 ", c.v->m(0, 0), v_scale, false, v_col);
    if (later) ImGui::PopStyleColor();
    ImGui::PopID();
  }
  ImGui::EndTable();
}

// Selects column c.t and moves the cursor to the same line of its call when the cursor is in a
// call, else to the call's start.
void LayerNormPanel::select_column(App& app, const LnCall& c) {
  Session& s = app.session;
  t_ = c.t;
  const Event& cur = s.current();
  s.jump(cur.alg == 6 && cur.kind == EventKind::Line ? c.ev[cur.line] : c.ev[0]);
  app.ui.viewed_event = SIZE_MAX;
  followed_ = app.shown_event();
}

// The selected column before (e) and after (ê) normalisation, by feature or as histograms.
// Returns the feature hovered in a chart (0-based), or -1.
int LayerNormPanel::draw_column_before_after(const App& app, const LnGroup& g, const LnCall& sel) {
  const Session& s = app.session;
  const bool dark = app.settings.dark;
  const Tokens& toks = s.tokens_at(g.caller);
  ImGui::Spacing();
  const std::string tok =
      t_ <= static_cast<int>(toks.size()) ? token_label(s.tokenizer(), toks[t_ - 1]) : std::string("?");
  math_text(app.fonts, "Column t = " + std::to_string(t_) + " (“" + tok + "”):  m = " + fmt(sel.m->m(0, 0)) +
                           ",  v = " + fmt(sel.v->m(0, 0)),
            accent_color(dark));
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("Show e and ê");
  ImGui::SameLine();
  if (ImGui::RadioButton("by feature i", !histogram_)) histogram_ = false;
  ImGui::SameLine();
  if (ImGui::RadioButton("as histograms of their values", histogram_)) histogram_ = true;

  const ImU32 e_col = dark ? IM_COL32(150, 150, 165, 255) : IM_COL32(120, 120, 135, 255);
  const ImU32 hat_col = dark ? IM_COL32(90, 160, 230, 255) : IM_COL32(40, 100, 190, 255);
  const ImU32 hl = accent_color(dark);
  const int d_e = static_cast<int>(sel.e->m.size());
  const ImVec2 size(0, ImGui::GetFontSize() * 4.2f);
  const std::string last_i = "i = " + std::to_string(d_e);
  int hovered = -1;
  math_text(app.fonts, "before: e = X[:, t] ∈ ℝ^{d_e}");
  if (histogram_) {
    histogram_chart(app, "e", *sel.e, size, e_col, hl);
  } else {
    const int h = bar_chart(app, "e", sel.e->m.data(), d_e, size, e_col, hovered_i_, hl, "i = 1", last_i,
                            sel.m->m(0, 0), "m = " + fmt(sel.m->m(0, 0)));
    if (h >= 0) {
      hovered = h;
      feature_tip(sel, h);
    }
  }
  math_text(app.fonts, "after (line 3): ê = (e − m)/√(v + ε) ⊙ γ + β");
  if (histogram_) {
    histogram_chart(app, "ehat", *sel.e_hat, size, hat_col, hl);
  } else {
    const int h = bar_chart(app, "ehat", sel.e_hat->m.data(), d_e, size, hat_col, hovered_i_, hl, "i = 1", last_i);
    if (h >= 0) {
      hovered = h;
      feature_tip(sel, h);
    }
  }
  return hovered;
}

// The parameters γ and β side by side. Returns the feature hovered in either chart (0-based), or -1.
int LayerNormPanel::draw_gamma_beta(const App& app, const LnGroup& g, const LnCall& sel) const {
  const bool dark = app.settings.dark;
  ImGui::Spacing();
  const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
  const float param_h = ImGui::GetFontSize() * 3.0f;
  const ImU32 p_col = dark ? IM_COL32(200, 140, 220, 255) : IM_COL32(140, 60, 160, 255);
  const ImU32 hl = accent_color(dark);
  const int d_e = static_cast<int>(sel.e->m.size());
  const std::string last_i = "i = " + std::to_string(d_e);
  int hovered = -1;
  auto param_chart = [&](const char* id, const Value& val, const std::string& caption) {
    ImGui::BeginGroup();
    math_text(app.fonts, caption);
    const int h = bar_chart(app, id, val.m.data(), d_e, ImVec2(half, param_h), p_col, hovered_i_, hl, "i = 1", last_i);
    if (h >= 0) {
      hovered = h;
      feature_tip(sel, h);
    }
    ImGui::EndGroup();
  };
  param_chart("gamma", *sel.gamma, param_name(g, "γ") + " (scale)");
  ImGui::SameLine();
  param_chart("beta", *sel.beta, param_name(g, "β") + " (offset)");
  return hovered;
}

}  // namespace sf
