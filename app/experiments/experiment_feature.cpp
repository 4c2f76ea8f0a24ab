// The Experiments tab, the heatmap menu's experiment items, the Experiment menu, the banner, the
// exp-* actions and the "experiments" part of --dump-state. The logic is app/logic/experiment_session.
#include "app/experiments/experiment_feature.hpp"

#include <nlohmann/json.hpp>

#include "app/app.hpp"
#include "app/logic/experiment_session.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/flow.hpp"
#include "app/widgets/heatmap.hpp"
#include "imgui.h"
#include "imgui_stdlib.h"

namespace sf {

namespace {

// "A:B:C:D" → the last n fields (numbers) and the rest before them (a name or a text that may hold ':').
bool split_tail(const std::string& arg, size_t n, std::string& head, std::vector<std::string>& tail) {
  tail.assign(n, "");
  std::string rest = arg;
  for (size_t i = n; i-- > 0;) {
    const size_t colon = rest.rfind(':');
    if (colon == std::string::npos) return false;
    tail[i] = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
  }
  head = rest;
  return !head.empty();
}

bool to_int(const std::string& s, int& out) {
  try {
    size_t used = 0;
    out = std::stoi(s, &used);
    return used == s.size();
  } catch (...) {
    return false;
  }
}

bool to_float(const std::string& s, float& out) {
  try {
    size_t used = 0;
    out = std::stof(s, &used);
    return used == s.size();
  } catch (...) {
    return false;
  }
}

// The value `name` in scope at event k of t, or nullptr.
const Value* in_scope(const Trace& t, size_t k, const std::string& name) {
  if (k >= t.size()) return nullptr;
  for (const Value* v : t.scope(k))
    if (v->name == name) return v;
  return nullptr;
}

// The changed cells (nonzero in `diff`), as runs down each column, for a heatmap to frame; the
// whole matrix as one block when there are too many runs to draw.
std::vector<CellRegion> changed_regions(const MatF& diff) {
  std::vector<CellRegion> out;
  for (int c = 0; c < diff.cols(); ++c)
    for (int r = 0; r < diff.rows(); ++r) {
      if (diff(r, c) == 0) continue;
      int n = 1;
      while (r + n < diff.rows() && diff(r + n, c) != 0) ++n;
      out.push_back({r, c, n, 1});
      r += n;
    }
  if (out.size() > 2000) out = {{0, 0, static_cast<int>(diff.rows()), static_cast<int>(diff.cols())}};
  return out;
}

class ExperimentFeature : public Feature {
 public:
  void top_menu(App& app) override {
    if (!ImGui::BeginMenu("Experiment")) return;
    if (ImGui::MenuItem("Experiments tab")) app.ui.show.experiments = true;
    if (ImGui::MenuItem("Undo the last change", nullptr, false, exp_.active())) undo(app);
    if (ImGui::MenuItem("Return to the original", nullptr, false, exp_.active())) exp_.reset(app.session);
    ImGui::EndMenu();
  }

  void overlay(App& app) override {
    if (exp_.sync(app.session)) app.notify("Experiments dropped: the stepper shows another run or model now");
    if (!exp_.active()) return;
    // The banner, over everything, while an experiment is in force.
    ImDrawList* dl = ImGui::GetForegroundDrawList();
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    const std::string text = std::string(ExperimentSession::kLabel) + " (" + std::to_string(exp_.list().size()) +
                             " change" + (exp_.list().size() > 1 ? "s" : "") + ")";
    const ImVec2 size = ImGui::CalcTextSize(text.c_str());
    const ImVec2 at(vp->Pos.x + (vp->Size.x - size.x) / 2, vp->Pos.y + vp->Size.y - 2 * size.y - 12);
    dl->AddRectFilled(ImVec2(at.x - 10, at.y - 4), ImVec2(at.x + size.x + 10, at.y + size.y + 4), IM_COL32(200, 120, 0, 235), 4);
    dl->AddText(at, IM_COL32(0, 0, 0, 255), text.c_str());
  }

  const char* tab_panel() const override { return "experiments"; }

  void draw_tab(App& app) override {
    Session& s = app.session;
    if (exp_.active()) {
      ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(240, 160, 0, 255));
      ImGui::TextWrapped("%s", ExperimentSession::kLabel);
      ImGui::PopStyleColor();
    } else {
      ImGui::TextWrapped("No experiment: the stepper shows the model's own run. Right-click any heatmap to edit a "
                         "value, ablate a head, toggle a mask cell%s.", s.reads_image() ? "" : " or patch from prompt B");
    }
    draw_list(app);
    ImGui::Separator();
    draw_controls(app);
    const size_t k = app.shown_event();
    if (k >= s.trace().size()) return;
    const std::string name = shown_value(app, k);
    if (exp_.active()) {
      ImGui::Separator();
      draw_value_change(app, k, name);
      ImGui::Separator();
      draw_dP(app);
    }
    if (const CompareRun* c = exp_.compare()) {
      ImGui::Separator();
      draw_compare(app, *c, k, name);
    }
  }

  void heatmap_menu(App& app, const HeatmapMenuRequest& r) override {
    if (r.opt.event == SIZE_MAX || r.value.kind == ValueKind::Tokens) return;
    Session& s = app.session;
    const size_t k = r.opt.event;
    const Event& e = s.trace().events.at(k);
    ImGui::Separator();
    if (r.row >= 0 && r.col >= 0 && ImGui::BeginMenu("Edit this value…")) {
      const std::string cell = r.value.name + "[" + std::to_string(r.row + 1) + ", " + std::to_string(r.col + 1) + "]";
      if (menu_cell_ != cell + std::to_string(k)) menu_cell_ = cell + std::to_string(k), new_value_ = r.value.m(r.row, r.col);
      ImGui::Text("%s = %s", cell.c_str(), exact_number(r.value.m(r.row, r.col)).c_str());
      ImGui::SetNextItemWidth(160);
      ImGui::InputFloat("new value", &new_value_, 0, 0, "%.6g");
      if (ImGui::Button("Set and re-run")) {
        std::string error;
        const bool weight = !weight_entry(s.model(), s.trace(), k, r.value.name, error).empty();
        report(app, weight ? exp_.edit_weight(s, k, r.value.name, r.row + 1, r.col + 1, new_value_, error)
                           : exp_.edit(s, k, r.value.name, r.row + 1, r.col + 1, new_value_, error),
               error);
        ImGui::CloseCurrentPopup();
      }
      ImGui::EndMenu();
    }
    if (e.idx.h > 0 && e.idx.l > 0) {
      const std::string label = "Ablate head " + std::to_string(e.idx.h) + " of layer " + std::to_string(e.idx.l);
      if (ImGui::MenuItem(label.c_str())) {
        std::string error;
        report(app, exp_.ablate(s, k, e.idx.l, e.idx.h, error), error);
      }
    }
    if (r.value.kind == ValueKind::Mask && e.idx.l > 0 && r.row >= 0 && r.col >= 0 &&
        ImGui::MenuItem(e.idx.h ? "Toggle this mask cell" : "Toggle this mask cell (every head of the layer)")) {
      std::string error;
      report(app, exp_.toggle_mask(s, k, e.idx.l, e.idx.h, r.row + 1, r.col + 1, error), error);
    }
    if (!s.reads_image() && ImGui::BeginMenu("Patch from prompt B…")) {  // a vit reads an image: no prompt B
      ImGui::SetNextItemWidth(200);
      ImGui::InputText("prompt B", &prompt_b_);
      std::string error;
      if (r.col >= 0 && ImGui::Button(("Patch column " + std::to_string(r.col + 1)).c_str())) {
        report(app, exp_.patch_value(s, k, r.value.name, prompt_b_, r.col + 1, error), error);
        ImGui::CloseCurrentPopup();
      }
      ImGui::SameLine();
      if (ImGui::Button("Patch every column")) {
        report(app, exp_.patch_value(s, k, r.value.name, prompt_b_, 0, error), error);
        ImGui::CloseCurrentPopup();
      }
      ImGui::EndMenu();
    }
  }

  ActionResult action(App& app, const std::string& verb, const std::string& arg, std::string& error) override {
    if (verb.rfind("exp-", 0) != 0) return ActionResult::NotMine;
    Session& s = app.session;
    s.wait_for_trace();
    const size_t k = app.shown_event();
    std::string head;
    std::vector<std::string> f;
    std::vector<int> n(4, 0);
    float value = 0;
    auto ints = [&](size_t count) {  // the first `count` fields as integers into n
      for (size_t i = 0; i < count; ++i)
        if (!to_int(f[i], n[i])) return false;
      return true;
    };
    bool ok = false;
    if (verb == "exp-edit" || verb == "exp-weight") {
      if (!split_tail(arg, 3, head, f) || !ints(2) || !to_float(f[2], value))
        return error = verb + " needs NAME:ROW:COL:VALUE (1-based row and column)", ActionResult::Failed;
      ok = verb == "exp-edit" ? exp_.edit(s, k, head, n[0], n[1], value, error)
                              : exp_.edit_weight(s, k, head, n[0], n[1], value, error);
    } else if (verb == "exp-ablate") {
      if (!split_tail("x:" + arg, 2, head, f) || !ints(2)) return error = "exp-ablate needs L:H", ActionResult::Failed;
      ok = exp_.ablate(s, k, n[0], n[1], error);
    } else if (verb == "exp-mask") {
      if (!split_tail("x:" + arg, 4, head, f) || !ints(4)) return error = "exp-mask needs L:H:TZ:TX", ActionResult::Failed;
      ok = exp_.toggle_mask(s, k, n[0], n[1], n[2], n[3], error);
    } else if (verb == "exp-patch") {
      if (!split_tail(arg, 3, head, f) || !to_int(f[1], n[1]) || !to_int(f[2], n[2]))
        return error = "exp-patch needs PROMPT_B:WHAT:L:T (WHAT: X or Vt; T = 0: every position)", ActionResult::Failed;
      ok = exp_.patch(s, k, head, f[0], n[1], n[2], error);
    } else if (verb == "exp-compare-prompt") {
      ok = exp_.compare_prompt(s, arg, error);
    } else if (verb == "exp-compare-model") {
      ok = exp_.compare_model(s, arg, error);
    } else if (verb == "exp-undo") {
      ok = exp_.undo(s, error) || error.empty();
    } else if (verb == "exp-reset") {
      exp_.reset(s);
      ok = true;
    } else {
      error = "unknown experiment action \"" + verb + "\"";
    }
    if (ok) app.ui.show.experiments = true;
    return ok ? ActionResult::Done : ActionResult::Failed;
  }

  void dump(const App& app, nlohmann::ordered_json& j) const override {
    nlohmann::ordered_json e;
    e["count"] = exp_.list().size();
    e["list"] = nlohmann::ordered_json::array();
    for (const Intervention& i : exp_.list()) e["list"].push_back(i.label);
    e["max_abs_dP"] = exp_.active() ? exp_.changes().max_abs_dP : 0.0f;
    e["changed_values"] = exp_.active() ? exp_.changes().diffs.size() : 0;
    e["label"] = app.session.trace_label();
    if (const CompareRun* c = exp_.compare())
      e["compare"] = {{"with", c->what},
                      {"max_abs_dP", c->comparison.max_abs_dP},
                      {"changed_values", c->comparison.diffs.size()},
                      {"matched", c->comparison.matched}};
    else
      e["compare"] = nullptr;
    j["experiments"] = e;
  }

 private:
  void report(App& app, bool ok, const std::string& error) {
    if (ok) app.ui.show.experiments = true;
    else if (!error.empty()) app.notify(error, true);
  }

  void undo(App& app) {
    std::string error;
    if (!exp_.undo(app.session, error) && !error.empty()) app.notify(error, true);
  }

  // The value the comparison heatmaps show: the tensor view's selection when in scope, else the
  // first matrix the shown step binds (or any in scope).
  std::string shown_value(const App& app, size_t k) const {
    const Trace& t = app.session.trace();
    if (in_scope(t, k, app.ui.selected_value)) return app.ui.selected_value;
    for (const Value& v : t.events[k].values)
      if (v.kind == ValueKind::Matrix && v.m.size() > 1) return v.name;
    for (const Value* v : t.scope(k))
      if (v->kind == ValueKind::Matrix && v->m.size() > 1) return v->name;
    return "";
  }

  void draw_list(App& app) {
    Session& s = app.session;
    std::string error;
    for (size_t i = 0; i < exp_.list().size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      if (ImGui::SmallButton("undo")) exp_.remove(s, i, error);
      ImGui::SameLine();
      ImGui::TextWrapped("%zu. %s", i + 1, exp_.list()[i].label.c_str());
      ImGui::PopID();
    }
    if (!error.empty()) app.notify(error, true);
    ImGui::BeginDisabled(!exp_.active());
    if (ImGui::Button("Re-run") && !exp_.rerun(s, error)) app.notify(error, true);
    ImGui::SameLine();
    if (ImGui::Button("Undo")) undo(app);
    ImGui::SameLine();
    if (ImGui::Button("Return to the original")) exp_.reset(s);
    ImGui::EndDisabled();
  }

  void draw_controls(App& app) {
    Session& s = app.session;
    std::string error;
    if (s.reads_image()) {
      wrapped_note("No prompt B: a vision transformer reads an image (the Vision tab), not text.");
    } else {
      draw_prompt_b_controls(app);
    }
    ImGui::SetNextItemWidth(200);
    ImGui::InputText("checkpoint B", &model_b_);
    ImGui::SameLine();
    if (ImGui::Button("Compare checkpoints") && !exp_.compare_model(s, model_b_, error)) app.notify(error, true);
    if (exp_.compare()) {
      ImGui::SameLine();
      if (ImGui::Button("Close comparison")) exp_.clear_compare();
    }
  }

  // Prompt B: compare its run, or patch layer l's input X from it.
  void draw_prompt_b_controls(App& app) {
    Session& s = app.session;
    std::string error;
    ImGui::SetNextItemWidth(200);
    ImGui::InputText("prompt B", &prompt_b_);
    ImGui::SameLine();
    if (ImGui::Button("Compare prompts") && !exp_.compare_prompt(s, prompt_b_, error)) app.notify(error, true);
    ImGui::SetNextItemWidth(100);
    ImGui::InputInt("layer l", &patch_l_);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(100);
    ImGui::InputInt("position t (0: all)", &patch_t_);
    ImGui::SameLine();
    if (ImGui::Button("Patch X from B") && !exp_.patch(s, app.shown_event(), prompt_b_, "X", patch_l_, patch_t_, error))
      app.notify(error, true);
  }

  // Before, after and after − before for the value `name` at the shown event.
  void draw_value_change(App& app, size_t k, const std::string& name) {
    const Value* before = in_scope(exp_.original(), k, name);
    const Value* after = in_scope(app.session.trace(), k, name);
    if (!before || !after || before->m.rows() != after->m.rows() || before->m.cols() != after->m.cols()) return;
    const int changed = changed_cells(before->m, after->m);
    ImGui::Text("%s at this step: %d of %lld cells changed", name.c_str(), changed,
                static_cast<long long>(before->m.size()));
    side_by_side(app, k, {{"before", before->m}, {"after", after->m}, {"after − before", difference(before->m, after->m)}},
                 *after, 1);
  }

  // Three heatmaps in a row, the last (a difference) diverging about 0, the changed cells framed in
  // the second; ms[live] is v, the shown run's value (its right-click menu edits it), the others
  // are matrices of their own. `second_x`: the second's own tokens x (prompt B), else the shown run's.
  void side_by_side(App& app, size_t k, const std::vector<std::pair<const char*, MatF>>& ms, const Value& v,
                    size_t live, const Tokens* second_x = nullptr) {
    const float w = (ImGui::GetContentRegionAvail().x - 2 * ImGui::GetStyle().ItemSpacing.x) / ms.size();
    for (size_t i = 0; i < ms.size(); ++i) {
      if (i) ImGui::SameLine();
      ImGui::BeginGroup();
      ImGui::TextUnformatted(ms[i].first);
      HeatmapOptions o = heatmap_options(app, k, v);
      o.max_width = w;
      o.max_height = 220;
      if (i + 1 == ms.size()) o.scale = ColorScale::Diverging;
      if (i != live) o.value = nullptr, o.event = SIZE_MAX;
      if (i == 1) o.regions = changed_regions(ms.back().second);  // the changed cells, framed
      if (i == 1 && second_x) {
        std::vector<std::string> labels;
        for (int id : *second_x) labels.push_back(token_label(app.session.tokenizer(), id));
        if (v.rows == Axis::TokenX) o.rows.labels = labels;
        if (v.cols == Axis::TokenX) o.cols.labels = labels;
      }
      ImGui::PushID(static_cast<int>(i));
      heatmap(ms[i].first, ms[i].second, app.fonts, o);
      ImGui::PopID();
      ImGui::EndGroup();
    }
  }

  // The change in P: at the last position (a vit's prediction: the class token's, t = 1), the top tokens (a
  // vit's classes) before and after; ΔP as a heatmap.
  void draw_dP(App& app) {
    const Value* Pa = returned_P(exp_.original());
    const Value* Pb = returned_P(app.session.trace());
    if (!Pa || !Pb) return;
    const bool image = app.session.reads_image();
    const int t = image ? 0 : static_cast<int>(Pa->m.cols()) - 1;
    ImGui::TextWrapped("Change in P (max |ΔP| = %s); position t = %d%s:", exact_number(exp_.changes().max_abs_dP).c_str(), t + 1,
                image ? " (the class token)" : "");
    if (ImGui::BeginTable("dP", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
      for (const char* h : {image ? "class" : "token", "P before", "P after", "ΔP"}) ImGui::TableSetupColumn(h);
      ImGui::TableHeadersRow();
      for (const TokenChange& c : top_changes(Pa->m, Pb->m, t, 5)) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(token_label(app.session.tokenizer(), c.id).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%.4f", c.before);
        ImGui::TableNextColumn();
        ImGui::Text("%.4f", c.after);
        ImGui::TableNextColumn();
        ImGui::Text("%+.4f", c.after - c.before);
      }
      ImGui::EndTable();
    }
    HeatmapOptions o = heatmap_options(app, app.session.trace().size() - 1, *Pb);
    o.value_name = "ΔP";
    o.scale = ColorScale::Diverging;
    o.max_height = 260;
    heatmap("dP", exp_.changes().dP, app.fonts, o);
  }

  // Compare mode: A (the shown run), B and A − B for the value at the shown event.
  void draw_compare(App& app, const CompareRun& c, size_t k, const std::string& name) {
    const Trace& a = app.session.trace();
    ImGui::Text("Compare with %s: %zu values differ, max |ΔP| = %s", c.what.c_str(), c.comparison.diffs.size(),
                exact_number(c.comparison.max_abs_dP).c_str());
    const size_t j = c.trace.find_matching(a.events[k], a.caller_ref(k));
    const Value* va = in_scope(a, k, name);
    const Value* vb = in_scope(c.trace, j, name);
    if (!va || !vb) return;
    if (va->m.rows() != vb->m.rows() || va->m.cols() != vb->m.cols()) {
      ImGui::TextWrapped("%s is %lld×%lld in A and %lld×%lld in B: no difference to show (the prompts differ in length)",
                         name.c_str(), static_cast<long long>(va->m.rows()), static_cast<long long>(va->m.cols()),
                         static_cast<long long>(vb->m.rows()), static_cast<long long>(vb->m.cols()));
      return;
    }
    ImGui::Text("%s: %d cells differ", name.c_str(), changed_cells(va->m, vb->m));
    side_by_side(app, k, {{"A", va->m}, {"B", vb->m}, {"A − B", difference(vb->m, va->m)}}, *va, 0,
                 c.model ? nullptr : &c.trace.tokens_x);
  }

  ExperimentSession exp_;
  std::string prompt_b_ = "world=";
  std::string model_b_;
  std::string menu_cell_;
  float new_value_ = 0;
  int patch_l_ = 1, patch_t_ = 0;
};

}  // namespace

std::unique_ptr<Feature> make_experiment_feature() { return std::make_unique<ExperimentFeature>(); }

}  // namespace sf
