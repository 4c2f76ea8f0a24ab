#include "app/panels/tensor_panel.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/heatmap.hpp"

namespace sf {

namespace {

constexpr int kBins = 30;

// Statistics over the finite entries, and the histogram of those entries.
struct Stats {
  long finite = 0, neg_inf = 0, pos_inf = 0, nan = 0;
  double min = 0, max = 0, mean = 0, std = 0;
  std::array<float, kBins> bins{};
};

Stats stats_of(const MatF& m) {
  Stats s;
  const EntryCounts c = count_entries(m);
  s.finite = c.finite;
  s.neg_inf = c.neg_inf;
  s.pos_inf = c.pos_inf;
  s.nan = c.nan;
  if (!s.finite) return s;
  s.min = c.min;
  s.max = c.max;
  s.mean = c.sum / static_cast<double>(s.finite);
  s.std = std::sqrt(std::max(0.0, c.sum2 / static_cast<double>(s.finite) - s.mean * s.mean));
  const double width = s.max > s.min ? (s.max - s.min) / kBins : 1.0;
  for (Eigen::Index i = 0; i < m.size(); ++i) {
    const double x = m.data()[i];
    if (!std::isfinite(x)) continue;
    s.bins[static_cast<size_t>(std::clamp(static_cast<int>((x - s.min) / width), 0, kBins - 1))] += 1.0f;
  }
  return s;
}

std::string num(double x) { return exact_number(static_cast<float>(x)); }

// The event whose values hold `v` (the line that bound it), searching back from k.
size_t binder_of(const Trace& t, size_t k, const Value* v) {
  for (size_t j = std::min(k + 1, t.size()); j-- > 0;)
    for (const auto& x : t.events[j].values)
      if (&x == v) return j;
  return t.size();
}

void draw_tokens(App& app, const Value& v) {
  const Tokenizer& tok = app.session.tokenizer();
  ImGui::TextDisabled("Reads as:");
  ImGui::SameLine();
  ImGui::PushFont(app.fonts.mono);
  ImGui::TextUnformatted(tok.decode(v.tokens).c_str());
  ImGui::PopFont();
  if (!ImGui::BeginTable("tokens", 3,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit))
    return;
  ImGui::TableSetupColumn("t");
  ImGui::TableSetupColumn((v.name + "[t]").c_str());
  ImGui::TableSetupColumn("token id");
  ImGui::TableHeadersRow();
  for (size_t t = 0; t < v.tokens.size(); ++t) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%zu", t + 1);
    ImGui::TableNextColumn();
    ImGui::PushFont(app.fonts.mono);
    ImGui::TextUnformatted(token_label(tok, v.tokens[t]).c_str());
    ImGui::PopFont();
    ImGui::TableNextColumn();
    ImGui::Text("%d", v.tokens[t]);
  }
  ImGui::EndTable();
}

void draw_matrix(App& app, size_t k, const Value& v) {
  const float F = ImGui::GetFontSize();
  const Stats s = stats_of(v.m);
  const bool mask = v.kind == ValueKind::Mask;
  if (mask) {
    const long ones = static_cast<long>(v.m.sum());
    ImGui::Text("%ld ones (may attend) and %ld zeros (masked) of %ld entries", ones,
                static_cast<long>(v.m.size()) - ones, static_cast<long>(v.m.size()));
  } else if (s.finite) {
    ImGui::Text("min %s   max %s   mean %s   std %s", num(s.min).c_str(), num(s.max).c_str(), num(s.mean).c_str(),
                num(s.std).c_str());
    std::string over = "over " + std::to_string(s.finite) + " finite entries";
    if (s.neg_inf) over += "; " + std::to_string(s.neg_inf) + " cells are −∞ (masked)";
    if (s.pos_inf) over += "; " + std::to_string(s.pos_inf) + " are +∞";
    if (s.nan) over += "; " + std::to_string(s.nan) + " are NaN";
    ImGui::TextDisabled("%s", over.c_str());
  } else {
    ImGui::TextDisabled("No finite entries.");
  }
  const bool histogram = !mask && s.finite > 1;
  HeatmapOptions o = heatmap_options(app, k, v);
  o.cell_values = true;
  o.max_height = std::max(ImGui::GetContentRegionAvail().y - (histogram ? F * 7.5f : F), F * 12.0f);
  heatmap("tensor", v.m, app.fonts, o);
  if (!histogram) return;
  ImGui::Spacing();
  ImGui::TextDisabled("Histogram of the finite entries (%d bins)", kBins);
  const float w = ImGui::GetContentRegionAvail().x;
  ImGui::PlotHistogram("##histogram", s.bins.data(), kBins, 0, nullptr, 0.0f, FLT_MAX, ImVec2(w, F * 4.0f));
  if (ImGui::IsItemHovered()) {
    const ImVec2 r0 = ImGui::GetItemRectMin(), r1 = ImGui::GetItemRectMax();
    const int b =
        std::clamp(static_cast<int>((ImGui::GetIO().MousePos.x - r0.x) / (r1.x - r0.x) * kBins), 0, kBins - 1);
    const double width = (s.max - s.min) / kBins;
    ImGui::SetTooltip("%.0f entries in [%s, %s%s", static_cast<double>(s.bins[static_cast<size_t>(b)]),
                      num(s.min + width * b).c_str(), num(s.min + width * (b + 1)).c_str(), b + 1 == kBins ? "]" : ")");
  }
  const std::string lo = num(s.min), hi = num(s.max);
  ImGui::TextUnformatted(lo.c_str());
  ImGui::SameLine(std::max(0.0f, w - ImGui::CalcTextSize(hi.c_str()).x));
  ImGui::TextUnformatted(hi.c_str());
}

}  // namespace

void TensorPanel::draw(App& app) {
  const Session& s = app.session;
  const Trace& t = s.trace();
  if (t.size() == 0) {
    ImGui::TextDisabled("No trace.");
    return;
  }
  const size_t k = app.shown_event();
  const std::vector<const Value*> scope = s.scope_for_view(k);
  if (scope.empty()) {
    ImGui::TextDisabled("Nothing is in scope at this step.");
    return;
  }
  // The selected value, else the first value this step bound, else the latest in scope.
  const Value* v = nullptr;
  for (const Value* x : scope)
    if (x->name == app.ui.selected_value) v = x;
  const bool missing = !v && !app.ui.selected_value.empty();
  if (!v)
    for (const Value& x : t.events[k].values)
      for (const Value* y : scope)
        if (!v && y == &x) v = y;
  if (!v) v = scope.back();

  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 16.0f);
  if (ImGui::BeginCombo("value in scope", v->name.c_str())) {
    for (const Value* x : scope)
      if (ImGui::Selectable(x->name.c_str(), x == v)) app.ui.selected_value = x->name;
    ImGui::EndCombo();
  }
  if (missing)
    ImGui::TextDisabled("“%s” is not in scope here; showing %s.", app.ui.selected_value.c_str(), v->name.c_str());

  const size_t binder = binder_of(t, k, v);
  const bool changed = binder == k;
  const bool dark = app.settings.dark;
  ImGui::Spacing();
  math_text(app.fonts, v->name + " ∈ " + paper_shape(*v), changed ? accent_color(dark) : 0);
  if (binder < t.size()) {
    const Event& e = t.events[binder];
    const char* how = e.kind == EventKind::Enter     ? "an input of"
                      : e.kind == EventKind::SubStep ? "computed inside"
                                                     : "bound by";
    ImGui::TextDisabled("%s %s%s", how, describe_event(e).c_str(), changed ? "  (this step)" : "");
  }
  if (!v->note.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(ImColor(accent_color(dark)), "%s", v->note.c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::Separator();

  switch (v->kind) {
    case ValueKind::Scalar:
      math_text(app.fonts, v->name + " =");
      ImGui::SameLine();
      ImGui::PushFont(app.fonts.mono);
      ImGui::TextUnformatted(exact_number(v->m(0, 0)).c_str());
      ImGui::PopFont();
      break;
    case ValueKind::Tokens:
      draw_tokens(app, *v);
      break;
    case ValueKind::Matrix:
    case ValueKind::Mask:
      draw_matrix(app, k, *v);
      break;
  }
}

}  // namespace sf
