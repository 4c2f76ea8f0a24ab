#include "app/panels/rfa_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "app/attention_calls.hpp"
#include "app/widgets/heatmap.hpp"
#include "core/trace/vocabulary.hpp"
#include "imgui.h"

namespace sf {

namespace {

// The Enter events of Algorithm 4-R in t.
std::vector<size_t> rfa_calls(const Trace& t) {
  std::vector<size_t> out;
  for (size_t k = 0; k < t.events.size(); ++k)
    if (t.events[k].kind == EventKind::Enter && t.events[k].alg == algs::random_feature_attention) out.push_back(k);
  return out;
}

// The value `name` bound by line `ref` of the frame entered at `enter` (its lines are at the Enter's
// depth, until the next frame at that depth); nullptr when none.
const Value* frame_value(const Trace& t, size_t enter, LineRef ref, const char* name) {
  const int depth = t.events[enter].depth;
  for (size_t j = enter + 1; j < t.events.size() && t.events[j].depth >= depth; ++j) {
    const Event& e = t.events[j];
    if (e.depth == depth && e.kind == EventKind::Enter) break;  // the next head's frame
    if (e.depth == depth && e.kind == EventKind::Line && e.ref() == ref)
      if (const Value* v = event_value(e, name)) return v;
  }
  return nullptr;
}

Mat<double> as_double(const Value& v) { return MatF(v.m).cast<double>(); }

}  // namespace

std::vector<int> rfa_chart_features() { return {8, 16, 32, 64, 128, 256}; }

std::optional<RfaComparison> rfa_comparison(const Trace& t, size_t cursor, const ModelConfig& c) {
  const std::vector<size_t> calls = rfa_calls(t);
  if (calls.empty()) return std::nullopt;
  size_t enter = calls.front();
  for (size_t k : calls)
    if (k <= cursor) enter = k;
  namespace L = lines::random_feature_attention;
  const Value* Q = frame_value(t, enter, L::Q, "Q");
  const Value* K = frame_value(t, enter, L::K, "K");
  const Value* V = frame_value(t, enter, L::V, "V");
  const Value* A_rf = frame_value(t, enter, L::V_tilde, "Â");
  const Value* A = frame_value(t, enter, L::V_tilde, "softmax(S/√d_attn)");
  const Value* mask = event_value(t.events[enter], "Mask");
  if (!Q || !K || !V || !A_rf || !A || !mask) return std::nullopt;  // a call cut short (an error mid-frame)
  RfaComparison r;
  r.enter = enter;
  r.idx = t.events[enter].idx;
  r.D = static_cast<int>(event_value(t.events[enter], "D")->m(0, 0));
  r.orthogonal = c.rf_orthogonal;
  r.A_exact = MatF(A->m);
  r.A_rf = MatF(A_rf->m);
  r.error = (r.A_rf - r.A_exact).cwiseAbs();
  r.max_v = frame_value(t, enter, L::V_tilde, "max |Ṽ_rfa − Ṽ|")->m(0, 0);
  r.max_weights = frame_value(t, enter, L::V_tilde, "max |Â − softmax|")->m(0, 0);
  r.guarded = static_cast<int>(frame_value(t, enter, L::V_tilde, "guarded columns")->m(0, 0));
  const Mask M = (MatF(mask->m).array() != 0).cast<unsigned char>();
  // The chart runs 36 estimates with their ℓ_z×ℓ_x implied weights, once per call shown: skipped for
  // long sequences, where it would stall the frame for seconds (draw says so).
  if (M.size() > kRfaChartMaxCells) return r;
  r.curve = rf_error_curve<double>(as_double(*Q), as_double(*K), as_double(*V), M, rfa_chart_features(), kRfaChartSeeds,
                                   static_cast<std::uint64_t>(c.rf_seed), std::max(1, r.idx.h), c.rf_orthogonal);
  return r;
}

bool RfaView::draw(App& app) {
  const Session& s = app.session;
  const Trace& t = s.trace();
  if (trace_ != &t || trace_size_ != t.events.size() || !shown_ ||
      rfa_comparison_enter_changed(t, s.cursor())) {
    shown_ = rfa_comparison(t, s.cursor(), s.model().config);
    trace_ = &t, trace_size_ = t.events.size();
  }
  if (!shown_) return false;
  const RfaComparison& r = *shown_;
  const float F = ImGui::GetFontSize();
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextColored(ImColor(accent_color(app.settings.dark)),
                     "Random-feature attention (Algorithm 4-R, not in the paper): layer %d, head %d, D = %d%s", r.idx.l,
                     r.idx.h, r.D, r.orthogonal ? ", orthogonal features" : "");
  ImGui::TextDisabled(
      "The heads ran Algorithm 4-R, an estimate of Algorithm 4 in linear time. The implied weights Â are computed "
      "here for the view only (4-R never builds an ℓ_z×ℓ_x matrix), beside Algorithm 4's softmax on the same Q, K.");
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g", r.max_v);
  math_text(app.fonts, std::string("max |Ṽ_rfa − Ṽ| = ") + buf);
  ImGui::SameLine(0, 2 * F);
  std::snprintf(buf, sizeof buf, "%.3g", r.max_weights);
  math_text(app.fonts, std::string("max |Â − softmax| = ") + buf);
  if (ImGui::GetContentRegionAvail().x > 40 * F) ImGui::SameLine(0, 2 * F);  // else on its own line
  math_text(app.fonts, "guarded columns = " + std::to_string(r.guarded));
  if (r.guarded > 0)
    ImGui::TextColored(ImVec4(1, 0.55f, 0.3f, 1),
                       "%d quer%s had an estimated denominator below 10⁻³ of its key weights (negative or near 0; "
                       "the exact softmax's never is): divided by ε·g instead, as line 12 says.",
                       r.guarded, r.guarded == 1 ? "y" : "ies");
  ImGui::PopTextWrapPos();
  const float w = (ImGui::GetContentRegionAvail().x - 2 * F) / 3;
  const float h = std::clamp(ImGui::GetContentRegionAvail().y - 16 * F, 6 * F, 24 * F);
  const auto view = [&](const char* id, const char* caption, const MatF& m, float hi) {
    ImGui::BeginGroup();
    math_text(app.fonts, caption);
    HeatmapOptions o;
    o.value_name = id;
    const bool titled = w > 16 * F;  // the axis titles only where they fit beside each other
    o.rows = {titled ? "t_z (keys)" : "", "t_z", {}};
    o.cols = {titled ? "t_x (queries)" : "", "t_x", {}};
    o.lo = 0, o.hi = hi;
    o.max_width = w, o.max_height = h, o.fit_height = true;
    heatmap(id, m, app.fonts, o);
    ImGui::EndGroup();
  };
  const float err_hi = std::max(1e-6f, r.error.size() ? r.error.maxCoeff() : 0.0f);
  view("softmax", "softmax(S/√d_attn)", r.A_exact, 1.0f);
  ImGui::SameLine(0, F);
  view("Â", "Â (view only)", r.A_rf, 1.0f);
  ImGui::SameLine(0, F);
  view("|Â − softmax|", "|Â − softmax|", r.error, err_hi);
  draw_chart(app, r);
  return true;
}

// Whether the call the cursor selects is another than the one shown.
bool RfaView::rfa_comparison_enter_changed(const Trace& t, size_t cursor) const {
  if (!shown_) return true;
  size_t enter = SIZE_MAX;
  for (size_t k : rfa_calls(t))
    if (enter == SIZE_MAX || k <= cursor) enter = k;
  return enter != shown_->enter;
}

// The error against D: for each D the mean over the seeds (a point) and ± one standard deviation (a
// bar), of max |Â − softmax| (accent) and max |Ṽ_rfa − Ṽ| (grey), on a log₂ D axis, with the model's D
// marked and a 1/√D reference through the first point.
void RfaView::draw_chart(App& app, const RfaComparison& r) {
  const float F = ImGui::GetFontSize();
  if (r.curve.empty()) {
    ImGui::TextDisabled("The error against D is charted for ℓ_z·ℓ_x ≤ %d (this call has more).", kRfaChartMaxCells);
    return;
  }
  math_text(app.fonts, "Error against D (" + std::to_string(kRfaChartSeeds) + " seeds: mean ± sd; small dots: 1/√D)");
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 size(ImGui::GetContentRegionAvail().x, std::max(8 * F, ImGui::GetContentRegionAvail().y - F));
  ImGui::InvisibleButton("rfa_chart", size);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float left = p0.x + 4 * F, right = p0.x + size.x - 2.5f * F, top = p0.y + F * 0.5f, bottom = p0.y + size.y - 1.5f * F;
  double y_max = 1e-9;
  for (const RfaErrorPoint& p : r.curve) y_max = std::max({y_max, p.weights_mean + p.weights_sd, p.v_mean + p.v_sd});
  const auto X = [&](size_t i) {
    return left + (right - left) * (r.curve.size() > 1 ? static_cast<float>(i) / (r.curve.size() - 1) : 0.5f);
  };
  const auto Y = [&](double v) { return bottom - (bottom - top) * static_cast<float>(std::min(v / y_max, 1.0)); };
  const ImU32 axis = ImGui::GetColorU32(ImGuiCol_TextDisabled), accent = accent_color(app.settings.dark);
  const ImU32 grey = ImGui::GetColorU32(ImGuiCol_Text, 0.55f);
  dl->AddLine({left, top}, {left, bottom}, axis);
  dl->AddLine({left, bottom}, {right, bottom}, axis);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", y_max);
  dl->AddText({p0.x, top}, axis, buf);
  dl->AddText({p0.x + 2 * F, bottom - F}, axis, "0");
  for (size_t i = 0; i < r.curve.size(); ++i) {
    const RfaErrorPoint& p = r.curve[i];
    const std::string d = "D = " + std::to_string(p.D);
    dl->AddText({X(i) - ImGui::CalcTextSize(d.c_str()).x / 2, bottom + 0.2f * F}, p.D == r.D ? accent : axis, d.c_str());
    const double ref = r.curve[0].weights_mean * std::sqrt(static_cast<double>(r.curve[0].D) / p.D);
    dl->AddCircleFilled({X(i), Y(ref)}, 0.12f * F, axis);
    for (int series = 0; series < 2; ++series) {  // 0: the weights' error, 1: Ṽ's
      const float dx = (series == 0 ? -0.25f : 0.25f) * F;
      const ImU32 col = series == 0 ? accent : grey;
      const auto mean = [series](const RfaErrorPoint& q) { return series == 0 ? q.weights_mean : q.v_mean; };
      const double sd = series == 0 ? p.weights_sd : p.v_sd;
      dl->AddLine({X(i) + dx, Y(mean(p) - sd)}, {X(i) + dx, Y(mean(p) + sd)}, col, 2);
      dl->AddCircleFilled({X(i) + dx, Y(mean(p))}, 0.25f * F, col);
      if (i > 0) dl->AddLine({X(i - 1) + dx, Y(mean(r.curve[i - 1]))}, {X(i) + dx, Y(mean(p))}, col, 1.5f);
    }
  }
  const float legend = right - 16 * F;
  dl->AddCircleFilled({legend, top + 0.5f * F}, 0.25f * F, accent);
  dl->AddText({legend + 0.6f * F, top}, accent, "max |Â − softmax|");
  dl->AddCircleFilled({legend, top + 1.5f * F}, 0.25f * F, grey);
  dl->AddText({legend + 0.6f * F, top + F}, grey, "max |Ṽ_rfa − Ṽ|");
}

}  // namespace sf
