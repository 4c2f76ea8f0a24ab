#include "app/panels/tensor_panel.hpp"
#include "app/study/dependency_hover.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/heatmap.hpp"

namespace sf {

namespace {

constexpr int kBins = TensorStats::kBins;

TensorStats stats_of(const MatView& m) {
  TensorStats s;
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
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      const double x = m(i, j);
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
  const bool files = tok.file_id(1) != 1;  // an ecosystem tokenizer numbers from 0
  if (!ImGui::BeginTable("tokens", files ? 5 : 3,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit))
    return;
  ImGui::TableSetupColumn("t");
  ImGui::TableSetupColumn((v.name + "[t]").c_str());
  ImGui::TableSetupColumn(files ? "paper id" : "token id");
  if (files) {
    ImGui::TableSetupColumn("file id");
    ImGui::TableSetupColumn("piece in the files");
  }
  ImGui::TableHeadersRow();
  for (size_t t = 0; t < v.tokens.size(); ++t) {
    const int id = v.tokens[t];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%zu", t + 1);
    ImGui::TableNextColumn();
    ImGui::PushFont(app.fonts.mono);
    ImGui::TextUnformatted(token_label(tok, id).c_str());
    ImGui::PopFont();
    ImGui::TableNextColumn();
    ImGui::Text("%d", id);
    if (!files) continue;
    ImGui::TableNextColumn();
    ImGui::Text("%d", tok.file_id(id));
    ImGui::TableNextColumn();
    ImGui::PushFont(app.fonts.mono);
    ImGui::TextUnformatted(tok.piece(id).c_str());
    ImGui::PopFont();
  }
  ImGui::EndTable();
}

}  // namespace

void TensorPanel::draw_matrix(App& app, size_t k, const Value& v) {
  const float F = ImGui::GetFontSize();
  const MatView m(v.m);
  const StatsKey key{m.data(), m.rows(), m.cols(), m.outerStride(), m.innerStride(), content_hash(m)};
  if (!(key == stats_key_)) {
    stats_ = stats_of(m);
    stats_key_ = key;
  }
  const TensorStats& s = stats_;
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
  const std::string zkey = v.name + "#" + std::to_string(m.rows()) + "x" + std::to_string(m.cols());
  if (zkey != zoom_key_) {  // another value: show it whole
    zoom_ = whole(static_cast<int>(m.rows()), static_cast<int>(m.cols()));
    zoom_key_ = zkey;
  }
  o.zoom = &zoom_;
  last_ = heatmap("tensor", m, app.fonts, o);
  trace_dependencies(app, k, v, last_);  // the hovered cell's sources, framed everywhere
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

namespace {

// The model's origin: its layout and files (a header), and where every paper tensor came from.
void draw_origin(App& app) {
  const Session& s = app.session;
  const ModelOrigin& o = s.origin();
  const std::string head = s.model_label() + "###origin";
  if (!ImGui::CollapsingHeader(head.c_str())) return;
  ImGui::PushTextWrapPos(0.0f);
  if (o.path.empty()) {
    ImGui::TextDisabled("Made in Stepformer (not read from a file); tokenizer: %s.", s.tokenizer().describe().c_str());
  } else {
    ImGui::TextDisabled("%s, opened from %s; tokenizer: %s.", layout_title(o.layout).c_str(), o.path.c_str(),
                        s.tokenizer().describe().c_str());
    for (const auto& f : o.files) ImGui::BulletText("%s", f.c_str());
    for (const auto& n : o.notes) ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "Note: %s", n.c_str());
  }
  ImGui::PopTextWrapPos();
  if (o.provenance.empty()) {
    if (!o.path.empty()) ImGui::TextDisabled("Every tensor is stored under the paper's name (docs/checkpoint-format.md).");
    return;
  }
  ImGui::TextDisabled("Each paper tensor and where its values came from (ecosystem layout → the paper's names):");
  if (!ImGui::BeginTable("provenance", 3,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                             ImGuiTableFlags_Resizable,
                         ImVec2(0, ImGui::GetFontSize() * 12.0f)))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("paper tensor");
  ImGui::TableSetupColumn("shape");
  ImGui::TableSetupColumn("from");
  ImGui::TableHeadersRow();
  for (const ParamEntry& e : s.model().table.entries()) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    math_text(app.fonts, e.symbol);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", e.name.c_str());
    ImGui::TableNextColumn();
    std::string shape;
    for (int64_t d : e.shape()) shape += (shape.empty() ? "" : "×") + std::to_string(d);
    ImGui::TextDisabled("%s", shape.c_str());
    ImGui::TableNextColumn();
    const auto it = o.provenance.find(e.name);
    ImGui::TextUnformatted(it == o.provenance.end() ? "(not in the file)" : it->second.c_str());
  }
  ImGui::EndTable();
}

}  // namespace

std::pair<const Value*, size_t> TensorPanel::draw_pair_switch(App& app, const GradientPair& p) {
  ImGui::TextDisabled("Show");
  for (PairView v : {PairView::Value, PairView::Gradient, PairView::Product}) {
    ImGui::SameLine();
    if (ImGui::RadioButton(pair_view_name(v), view_ == v)) view_ = v;
  }
  item_tooltip("Not in the paper. value: " + p.value->name + " in the forward pass; gradient: " + p.grad->name +
               " = ∂loss/∂" + p.value->name + "; value ⊙ gradient: their product, entry by entry.");
  switch (view_) {
    case PairView::Value: return {p.value, p.value_event};
    case PairView::Gradient: return {p.grad, p.grad_event};
    case PairView::Product: break;
  }
  product_ = sf::pair_view(p, PairView::Product);
  return {&product_, p.grad_event};
}

const Value* shown_value(const App& app, size_t k, const std::vector<const Value*>& scope) {
  if (scope.empty()) return nullptr;
  for (const Value* x : scope)
    if (x->name == app.ui.selected_value) return x;
  for (const Value& x : app.session.trace().events[k].values)
    for (const Value* y : scope)
      if (y == &x) return y;
  return scope.back();
}

void TensorPanel::draw(App& app) {
  const Session& s = app.session;
  const Trace& t = s.trace();
  draw_origin(app);
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
  const Value* v = shown_value(app, k, scope);
  const std::vector<GradientPair> pairs = gradient_pairs(t, k, scope);
  const bool missing = !app.ui.selected_value.empty() && v->name != app.ui.selected_value;

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
  // The entry of θ (and head) the value is, or, for a gradient ∇N, that N is: core set Value::param
  // where θ was bound (trace.hpp).
  const GradientPair* pair = pair_of(pairs, v);
  const Value* param = v->param >= 0 ? v : pair && pair->grad == v ? pair->value : nullptr;
  parameter_.clear();
  if (param && param->param >= 0 && static_cast<size_t>(param->param) < s.model().table.entries().size()) {
    const ParamEntry& entry = s.model().table.entries()[static_cast<size_t>(param->param)];
    std::string what = std::string(param == v ? "parameter " : "the gradient of parameter ") + entry.name +
                       (param->head ? ", head " + std::to_string(param->head) : "");
    parameter_ = what;
    const auto it = s.origin().provenance.find(entry.name);
    ImGui::PushTextWrapPos(0.0f);
    if (it != s.origin().provenance.end()) ImGui::TextDisabled("%s ← %s", what.c_str(), it->second.c_str());
    else ImGui::TextDisabled("%s of θ", what.c_str());
    ImGui::PopTextWrapPos();
  }
  if (!v->note.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(ImColor(accent_color(dark)), "%s", v->note.c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::Separator();

  shown_name_ = v->name;
  if (const GradientPair* p = pair) {
    const auto [shown, at] = draw_pair_switch(app, *p);
    shown_name_ = shown->name;
    if (shown != v) {
      math_text(app.fonts, shown->name + " ∈ " + paper_shape(*shown));
      ImGui::SameLine();
      ImGui::TextDisabled("(%s)", shown == p->value ? ("the forward pass: " + describe_event(t.events[at])).c_str()
                                                    : "not in the paper");
      if (shown == &product_) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextColored(ImColor(accent_color(dark)), "%s", product_.note.c_str());
        ImGui::PopTextWrapPos();
      }
    }
    draw_matrix(app, at, *shown);
    return;
  }
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
