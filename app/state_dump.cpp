// --dump-state: what a test needs to check a screenshot's structure without golden images.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "app/app.hpp"
#include "app/attention_calls.hpp"
#include "app/feature.hpp"
#include "app/gpu_attention_backend.hpp"
#include "app/gui_support.hpp"
#include "app/logic/gradient_pairs.hpp"
#include "app/logic/speculative_state.hpp"
#include "app/logic/vision.hpp"
#include "app/panels/all_panels.hpp"
#include "app/panels/gpu_text.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/tensor_panel.hpp"
#include "app/panels/tokenizer_panel.hpp"
#include "app/panels/training_panel.hpp"
#include "app/panels/welcome_panel.hpp"
#include "app/widgets/heatmap_report.hpp"
#include "app/ui_probe.hpp"
#include "core/io/fileio.hpp"
#include "core/trace/value_keys.hpp"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {

namespace {

nlohmann::ordered_json number_or_null(double x) {
  return std::isnan(x) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(x);
}

nlohmann::ordered_json rows_of(const MatF& m) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    nlohmann::ordered_json r = nlohmann::ordered_json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c) r.push_back(number_or_null(m(i, c)));
    rows.push_back(std::move(r));
  }
  return rows;
}

// What the trace holds inside a hooked call's Algorithm 5 frame (from its Enter event at `enter`):
// its heads' Algorithm 4 frames, the first head's S (ℓ_z × ℓ_x) and A (its values: the GPU guard's tests compare
// them with core's), and the variant's sub-steps (RoPE's "before RoPE" on lines 1 and 2, ALiBi's B on line 6).
nlohmann::ordered_json traced_call(const Trace& t, size_t enter) {
  const size_t end = frame_end(t, enter);
  if (end == enter) return nullptr;
  const Event& e = t.events[enter];
  int heads = 0, rope = 0, alibi = 0;
  nlohmann::ordered_json S = nullptr, A = nullptr;
  for (size_t k = enter + 1; k < end; ++k) {
    const Event& ev = t.events[k];
    if (ev.alg != 4) continue;  // inside Algorithm 5, Algorithm 4 is its heads' (sub-steps one level deeper)
    if (ev.kind == EventKind::Enter) ++heads;
    if (ev.kind == EventKind::Line && ev.ref() == lines::attention::S && S.is_null())
      S = {ev.values.at(0).m.rows(), ev.values.at(0).m.cols()};
    if (ev.kind == EventKind::Line && ev.ref() == lines::attention::V_tilde && A.is_null())
      if (const Value* a = event_value(ev, keys::attention_weights)) A = rows_of(a->m);
    if (ev.kind == EventKind::SubStep && ev.label.find("before RoPE") != std::string::npos) ++rope;
    if (ev.kind == EventKind::SubStep && ev.ref() == lines::attention::V_tilde && !ev.values.empty() && ev.values[0].name == "B") ++alibi;
  }
  return {{"alg", e.alg}, {"heads", heads}, {"S", S}, {"A", A}, {"rope_substeps", rope}, {"alibi_substeps", alibi}};
}

// The GPU tab's figures: every hooked call with its dispatches (times as the tab writes them),
// where it sits in the trace, max |P_gpu − P_cpu|, and the call the GPU refused.
void gpu_state(const Session& s, nlohmann::ordered_json& j) {
  nlohmann::ordered_json calls = nlohmann::ordered_json::array(), times = nlohmann::ordered_json::array();
  for (const AttentionCall& c : s.attention_calls()) {
    nlohmann::ordered_json ds = nlohmann::ordered_json::array();
    for (const AttentionDispatch& d : c.dispatches) {
      nlohmann::ordered_json dj = {{"algorithm", d.algorithm}, {"lines", dispatch_lines_text(d)}, {"heads", d.heads},
                                   {"what", d.what},           {"gpu_ms", number_or_null(d.gpu_ms)},
                                   {"cpu_ms", number_or_null(d.cpu_ms)},
                                   {"gpu", gpu_time_text(d.gpu_ms)}, {"cpu", gpu_time_text(d.cpu_ms)}};
      times.push_back(dj);
      ds.push_back(std::move(dj));
    }
    const CallTimes ct = call_times(c);
    calls.push_back({{"alg", c.alg}, {"line", c.line}, {"l", c.layer}, {"site", call_site_text(c)}, {"kind", c.kind},
                     {"max_diff", number_or_null(c.max_diff)}, {"gpu", gpu_time_text(ct.gpu_ms)},
                     {"cpu", gpu_time_text(ct.cpu_ms)}, {"enter", c.enter}, {"end", frame_end(s.trace(), c.enter)},
                     {"trace", traced_call(s.trace(), c.enter)}, {"dispatches", std::move(ds)}});
  }
  j["gpu_dispatches"] = times.size();
  j["gpu_times"] = std::move(times);
  j["gpu_calls"] = std::move(calls);
  const CallTimes rt = run_times(s.attention_calls());
  j["gpu_total"] = {{"gpu", gpu_time_text(rt.gpu_ms)}, {"cpu", gpu_time_text(rt.cpu_ms)}};
  j["gpu_max_diff_P"] = number_or_null(s.attention_max_diff());
  const AttentionFailure* f = s.attention_failed_call();
  j["gpu_failure"] = f ? nlohmann::ordered_json{{"alg", f->alg}, {"line", f->line}, {"l", f->layer}, {"kind", f->kind},
                                                {"why", f->why}, {"text", to_text(*f)}}
                       : nlohmann::ordered_json(nullptr);
}


// The traced backward (issue 24): the gradients paired with their forward values at the shown
// event (the Variables view), what the Tensor view shows of a pair, and the Attention tab's ∇S, ∇A.
void backprop_state(const App& app, nlohmann::ordered_json& j) {
  const Session& s = app.session;
  const size_t k = app.shown_event();
  nlohmann::ordered_json pairs = nlohmann::ordered_json::array();
  if (k < s.trace().size())
    for (const GradientPair& p : gradient_pairs(s.trace(), k, s.scope_for_view(k)))
      pairs.push_back({{"gradient", p.grad->name},
                       {"value", p.value->name},
                       {"gradient_event", p.grad_event},
                       {"value_event", p.value_event}});
  j["gradient_pairs"] = std::move(pairs);
  j["tensor_view"]["pair_view"] = pair_view_name(tensor_panel(app).pair_view());
  j["tensor_view"]["shown"] = tensor_panel(app).shown_name();
  j["tensor_view"]["parameter"] = tensor_panel(app).parameter();
  const AttentionPanel::Shown& a = app.panels->attention.shown();
  j["attention_view"] = {{"l", a.l}, {"h", a.h}, {"gradients", a.gradients}, {"A", rows_of(a.A)}, {"grad_S", rows_of(a.dS)},
                         {"grad_A", rows_of(a.dA)}, {"mask", rows_of(a.mask)},
                         {"views", a.views}, {"columns", a.columns}};
  app.panels->attention.flash().dump(app, j["flash_blocks"]);  // Algorithm 4-F's blocks at the cursor
  // Random-feature attention's comparison view (Algorithm 4-R; null when the Attention tab has not shown it).
  if (const auto& rf = app.panels->attention.rfa().shown()) {
    nlohmann::ordered_json curve = nlohmann::ordered_json::array();
    for (const RfaErrorPoint& p : rf->curve)
      curve.push_back({{"D", p.D}, {"weights_mean", p.weights_mean}, {"weights_sd", p.weights_sd},
                       {"v_mean", p.v_mean}, {"v_sd", p.v_sd}});
    j["rfa_view"] = {{"l", rf->idx.l}, {"h", rf->idx.h}, {"D", rf->D}, {"max_v", rf->max_v},
                     {"max_weights", rf->max_weights}, {"guarded", rf->guarded}, {"A", rows_of(rf->A_exact)},
                     {"A_rf", rows_of(rf->A_rf)}, {"curve", std::move(curve)}};
  } else {
    j["rfa_view"] = nullptr;
  }
  // Dependencies on hover: the cells (0-based blocks) the hovered cell was computed from, framed.
  nlohmann::ordered_json sources = nlohmann::ordered_json::object();
  for (const auto& [name, regions] : app.ui.sources)
    for (const CellRegion& r : regions) sources[name].push_back({r.row0, r.col0, r.rows, r.cols});
  j["hover_sources"] = std::move(sources);
}

}  // namespace

bool App::write_state(const std::string& path, std::string& error) const {
  nlohmann::ordered_json j;
  const Trace& t = session.trace();
  const size_t k = session.cursor();
  j["cursor"] = k;
  j["steps"] = t.size();
  if (k < t.size()) {
    const Event& e = t.events[k];
    j["event"] = {{"alg", e.alg},       {"line", e.line},   {"depth", e.depth},
                  {"kind", static_cast<int>(e.kind)},       {"l", e.idx.l},
                  {"h", e.idx.h},       {"t", e.idx.t},     {"i", e.idx.i},
                  {"pass", e.pass == Pass::Backward ? "backward" : "forward"}};
  }
  j["shown_event"] = shown_event();
  j["prompt"] = session.prompt();
  j["prompt_error"] = session.prompt_input().error;
  j["unknown_chars"] = session.prompt_input().unknown.size();
  j["notice"] = ui.notice;
  j["font_px"] = settings.font_px;
  j["dark"] = settings.dark;
  j["gl43"] = ui.gl43;
  j["attention_backend"] = session.attention_hooked() ? "gpu" : "cpu";
  gpu_state(session, j);
  {
    const ModelConfig& c = session.model().config;
    const int shared = gpu_backend().max_shared_bytes();
    j["gpu_fused_form"] = {{"title", fused_form_title(c.d_attn, c.d_mid, shared)},
                           {"text", fused_form_text(c.d_attn, c.d_mid, shared)}};
    // The teaching form's guard against core, since the GPU was set up (app/gpu_attention_backend.hpp).
    const GpuGuardStats& g = gpu_backend().guard();
    // JSON has no ∞: a GPU output that was not finite is said in words (JSON's null would read as "none").
    const nlohmann::ordered_json largest =
        std::isfinite(g.largest_diff) ? nlohmann::ordered_json(g.largest_diff) : nlohmann::ordered_json(kNotFiniteDiff);
    j["gpu_guard"] = {{"checked", g.checked},     {"disagreed", g.disagreed},
                      {"largest_diff", largest},  {"largest_tolerance", g.largest_tolerance},
                      {"check_ms", g.check_ms},         {"device", gpu_backend().device()},
                      {"text", guard_text(g, gpu_backend().device())}};
  }
  j["model"] = session.model_label();
  j["layout"] = to_string(session.origin().layout);
  // A vit reads an image, not text: what its input is instead (the "Opened …" notice's words).
  j["tokenizer"] = session.reads_image() ? "none: " + vision_model_description(session.model().config)
                                         : session.tokenizer().describe();
  j["tokens"] = session.tokens();
  {
    nlohmann::ordered_json labels = nlohmann::ordered_json::array();
    for (int id : session.tokens()) labels.push_back(token_label(session.tokenizer(), id));
    j["token_labels"] = labels;
  }
  j["tracing"] = session.tracing();
  {
    const MatWindow& z = tensor_panel(*this).zoom();
    const HeatmapHover& h = tensor_panel(*this).last_heatmap();
    j["tensor_view"] = {{"value", tensor_panel(*this).zoom_value()},
                        {"window", {z.r0, z.r1, z.c0, z.c1}},
                        {"caption", h.caption},
                        {"cells", {h.cells.x, h.cells.y, h.cells.z, h.cells.w}}};
  }
  backprop_state(*this, j);
  if (const BpeTrainer* b = tokenizer_panel(*this).trainer()) {
    j["bpe"] = {{"vocab", b->vocab().size()}, {"merges", b->merges().size()},
                {"last", b->merges().empty() ? "" : b->merges().back().merged}};
  }
  j["generated"] = session.generation().generated().size();
  j["run_kind"] = static_cast<int>(session.run_kind());
  j["arch"] = session.arch().name();
  j["params"] = session.model().table.total();  // ParamTable(c).total() of the session's model
  j["config"] = nlohmann::ordered_json::parse(to_json(session.model().config));
  j["variants"] = variant_summary(session.model().config);
  j["context"] = session.context();
  j["context_error"] = session.context_input().error;
  j["tokens_z"] = session.tokens_z().size();
  j["fill"] = session.tokenizer().decode(session.fill().filled);
  j["fill_positions"] = session.fill().positions.size();
  j["translated"] = session.tokenizer().decode(session.translation().translated());
  j["translation_shown"] = session.translation().shown();
  j["translation_stopped"] = session.translation().result().stopped;
  {
    nlohmann::ordered_json tabs = nlohmann::ordered_json::array();
    for (const auto& [name, frame] : ui.tab_drawn)
      if (frame == ui.frame_index) tabs.push_back(name);
    j["tabs_shown"] = tabs;
  }
  {
    const TrainSnapshot& ts = training_panel(*this).snapshot();
    j["train_ready"] = ts.ready;  // a trainer exists (configured, not let go for another model)
    j["train_step"] = ts.step;
    j["train_loss"] = ts.train.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(ts.train.back().loss);
    j["train_first_loss"] =
        ts.train.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(ts.train.front().loss);
    j["train_val_points"] = ts.val.size();
    nlohmann::ordered_json accuracy = nlohmann::ordered_json::array();
    for (const AccuracyPoint& p : ts.accuracy)
      accuracy.push_back({{"step", p.step}, {"correct", p.accuracy.correct}, {"total", p.accuracy.total}});
    j["train_accuracy"] = accuracy;
    j["train_reached_step"] = ts.reached.step;
    j["train_mode"] = to_string(ts.mode);
    j["train_playing"] = ts.playing;
    j["train_eta"] = training_panel(*this).eta();
    j["train_task"] = training_panel(*this).task_label();
    j["training_tab_shown"] = training_panel(*this).drawn_frame() == ui.frame_index;
    const Batch b = training_panel(*this).last_minibatch();  // the padding view's minibatch
    j["train_batch"] = {{"B", b.B}, {"l", b.l}, {"lengths", b.lengths}, {"real_tokens", b.real_tokens()},
                        {"targets", b.n_targets()}};
  }
  // issue 21 welcome: whether it is open, "Show at start", whether it fits without scrolling, and the
  // buttons drawn in the last frame (each starting point's name for welcome:NAME, its label, its rectangle).
  {
    const WelcomePanel& w = welcome_panel(*this);
    nlohmann::ordered_json buttons = nlohmann::ordered_json::array();
    for (const WelcomePanel::Start& s : WelcomePanel::starts(session.arch().name()))
      if (auto it = w.button_rects().find(s.name); it != w.button_rects().end())
        buttons.push_back({{"name", s.name},
                           {"label", s.label},
                           {"rect", {it->second.x, it->second.y, it->second.z, it->second.w}}});
    j["welcome"] = {{"open", w.is_open()},
                    {"show_at_start", settings.welcome_at_start},
                    {"fits", w.fits()},
                    {"buttons", buttons}};
  }
  j["highlight"] = {ui.highlight_rect[0], ui.highlight_rect[1], ui.highlight_rect[2], ui.highlight_rect[3]};
  // The layout: the content scale and the text size on screen, and the Inspector's tab buttons
  // (each drawn whole: "whole" false would be a cut label).
  j["content_scale"] = ui.content_scale;
  j["font_px_on_screen"] = font_px_on_screen(*this);
  j["inspector_tab"] = ui.inspector_tab;
  j["inspector_tabs_as"] = ui.inspector_tab_menu ? "menu" : "buttons";
  {
    nlohmann::ordered_json tabs = nlohmann::ordered_json::array();
    for (const UiState::TabItem& t : ui.inspector_tab_items)
      tabs.push_back({{"label", t.label},
                      {"rect", {t.rect.x, t.rect.y, t.rect.z, t.rect.w}},
                      {"whole", t.whole},
                      {"selected", t.selected}});
    j["inspector_tabs"] = tabs;
  }
  nlohmann::ordered_json windows = nlohmann::ordered_json::object();
  for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows) {
    if (!w->WasActive || w->Hidden || (w->Flags & ImGuiWindowFlags_Tooltip)) continue;
    windows[w->Name] = {w->Pos.x, w->Pos.y, w->Size.x, w->Size.y};
  }
  j["windows"] = windows;
  // issue 21 heatmaps: each heatmap drawn in the last frame, whether it is fully visible, its
  // colour scale, its legend's ends and where they were written, the token labels it drew.
  {
    auto rect = [](const ImVec4& r) { return nlohmann::ordered_json::array({r.x, r.y, r.z, r.w}); };
    nlohmann::ordered_json heatmaps = nlohmann::ordered_json::array();
    for (const HeatmapRecord& h : heatmaps_drawn()) {
      nlohmann::ordered_json e = {{"value", h.value}, {"rect", rect(h.rect)}, {"visible", fully_visible(h)}};
      if (h.thumbnail) e["thumbnail"] = true;
      e["scale"] = {{"lo", h.lo}, {"hi", h.hi}, {"diverging", h.diverging}};
      if (!h.thumbnail)
        e["legend"] = {{"lo", h.lo_text}, {"hi", h.hi_text}, {"lo_rect", rect(h.lo_rect)}, {"hi_rect", rect(h.hi_rect)}};
      if (!h.row_labels.empty()) e["row_labels"] = h.row_labels;
      if (!h.col_labels.empty()) e["col_labels"] = h.col_labels;
      auto images = [&rect](const std::vector<ImVec4>& v) {  // null where an index has no image
        nlohmann::ordered_json a = nlohmann::ordered_json::array();
        for (const ImVec4& r : v) a.push_back(r.z > 0 ? rect(r) : nlohmann::ordered_json());
        return a;
      };
      if (!h.row_images.empty()) e["row_label_images"] = images(h.row_images);
      if (!h.col_images.empty()) e["col_label_images"] = images(h.col_images);
      heatmaps.push_back(std::move(e));
    }
    j["heatmaps"] = heatmaps;
    const DrawListBytes d = draw_list_bytes();  // what Dear ImGui's draw buffers hold (trim_draw_lists)
    j["draw_lists"] = {{"capacity_bytes", d.capacity}, {"used_bytes", d.used},
                       {"largest", {{"window", d.largest}, {"capacity_bytes", d.largest_capacity}, {"used_bytes", d.largest_used}}}};
  }
  {  // issue 21 bugs
    j["fillin_buttons"] = panels->fillin.button_labels();
    j["sampling_heading"] = panels->sampling.heading();
    j["stop_at_eos"] = session.generation().settings.stop_at_eos;
    nlohmann::ordered_json gen = nlohmann::ordered_json::array();
    for (int id : session.generation().generated()) gen.push_back(token_label(session.tokenizer(), id));
    j["generated_labels"] = gen;
    j["generation_stopped"] = session.generation().result().stopped;
    j["speculative"] = speculative_state(session);  // Algorithm 14-S (not in the paper)
    j["speculative"]["heading"] = panels->sampling.speculative().heading();
    j["notice_rect"] = ui.notice_rect;
    {  // the status bar's model line and the room a line of the bar has (a notice may come first)
      const std::string info = status_info();
      const float w = ImGui::CalcTextSize(info.c_str()).x;
      const float room = ImGui::GetMainViewport()->WorkSize.x - 2 * ImGui::GetStyle().WindowPadding.x;
      j["status_line"] = {{"text", info}, {"width", w}, {"room", room}, {"fits", w <= room}};
    }
    j["trace_stale"] = session.trace_stale();
    nlohmann::ordered_json stepped = nlohmann::ordered_json::array();
    for (int id : session.stepped_sequence()) stepped.push_back(token_label(session.tokenizer(), id));
    j["stepped_sequence"] = stepped;
    if (const BpeTrainer* b = tokenizer_panel(*this).trainer(); b && !b->merges().empty())
      j["bpe_merge_heading"] = merge_heading(b->merges().back());
    const ChartDrawn& acc = panels->training.accuracy_chart();
    nlohmann::ordered_json ticks = nlohmann::ordered_json::array();
    for (size_t i = 0; i < acc.x_ticks.size(); ++i) {
      const ImVec4& r = acc.x_ticks[i];
      ticks.push_back({{"text", acc.x_labels[i]}, {"rect", {r.x, r.y, r.z, r.w}}});
    }
    // How far each window's items reach past its visible width (ImGui's ContentSize: where the
    // cursor went, unwrapped text included; not ContentSizeIdeal, which counts a tab bar's tabs at
    // their full width although they shrink to fit); 0 when everything fits.
    nlohmann::ordered_json overflow = nlohmann::ordered_json::object();
    for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows)
      if (w->WasActive && !w->Hidden && !(w->Flags & ImGuiWindowFlags_Tooltip))
        overflow[w->Name] = std::max(0.0f, w->ContentSize.x - w->ContentRegionRect.GetWidth());
    j["content_overflow"] = overflow;
    j["accuracy_chart"] = {{"rect", {acc.rect.x, acc.rect.y, acc.rect.z, acc.rect.w}},
                           {"x_ticks", ticks},
                           {"target_y", std::isfinite(acc.target_y) ? nlohmann::ordered_json(acc.target_y) : nullptr}};
  }
  // issue 21 verbs
  {
    // The highlighted pseudocode line, visible when it shows whole; null when this frame drew none
    // (the pseudocode panel is closed, or the cursor enters an algorithm: no numbered line yet).
    const ImGuiWindow* w = ui.highlight_frame == ui.frame_index ? ImGui::FindWindowByID(ui.highlight_window) : nullptr;
    const ImRect r(ui.highlight_rect[0], ui.highlight_rect[1], ui.highlight_rect[0] + ui.highlight_rect[2],
                   ui.highlight_rect[1] + ui.highlight_rect[3]);
    j["current_line"] = w ? nlohmann::ordered_json{{"rect", j["highlight"]}, {"visible", ui_probe::fully_visible(w, r)}}
                          : nlohmann::ordered_json(nullptr);
    // The listing the pseudocode panel drew this frame: the paper's or Stepformer's backward
    // listing (issue 24), its current line and sub-step; null when the panel drew none.
    const PseudocodePanel::Shown& p = panels->pseudocode.shown();
    j["pseudocode"] = p.frame == ui.frame_index
                          ? nlohmann::ordered_json{{"alg", p.alg},       {"line", p.line},           {"backward", p.pass == Pass::Backward},
                                                   {"label", p.label},   {"title", p.title},         {"line_text", p.line_text},
                                                   {"step", p.step},     {"step_text", p.step_text}}
                          : nlohmann::ordered_json(nullptr);
    nlohmann::ordered_json clipped = nlohmann::ordered_json::array();
    for (const ui_probe::ClippedText& c : ui_probe::clipped_texts())
      clipped.push_back({{"window", c.window},
                         {"text", c.text},
                         {"rect", {c.rect.Min.x, c.rect.Min.y, c.rect.GetWidth(), c.rect.GetHeight()}},
                         {"clip", {c.clip.Min.x, c.clip.Min.y, c.clip.GetWidth(), c.clip.GetHeight()}},
                         {"ellipsis", c.ellipsis}});
    j["clipped_text"] = clipped;
    // The labelled widgets drawn (what click-item:LABEL can click), for tests that click by position.
    nlohmann::ordered_json widgets = nlohmann::ordered_json::array();
    for (const ui_probe::LabelledItem& item : ui_probe::labelled_items()) {
      const ImGuiWindow* iw = ImGui::FindWindowByID(item.window);
      widgets.push_back({{"window", iw ? iw->Name : ""},
                         {"label", item.label},
                         {"rect", {item.rect.Min.x, item.rect.Min.y, item.rect.GetWidth(), item.rect.GetHeight()}}});
    }
    j["widgets"] = widgets;
  }
  for (const auto& f : features) f->dump(*this, j);
  try {
    // A text that is not UTF-8 (a prompt or context set by a script) is written with U+FFFD.
    write_file_atomic(path, j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  } catch (const std::exception& ex) {
    error = ex.what();
    return false;
  }
  return true;
}

}  // namespace sf
