// --dump-state: what a test needs to check a screenshot's structure without golden images.
#include <nlohmann/json.hpp>

#include "app/app.hpp"
#include "app/feature.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/tensor_panel.hpp"
#include "app/panels/tokenizer_panel.hpp"
#include "app/panels/training_panel.hpp"
#include "app/ui_probe.hpp"
#include "core/io/fileio.hpp"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {

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
                  {"h", e.idx.h},       {"t", e.idx.t},     {"i", e.idx.i}};
  }
  j["shown_event"] = shown_event();
  j["prompt"] = session.prompt();
  j["prompt_error"] = session.prompt_error();
  j["unknown_chars"] = session.unknown_chars().size();
  j["notice"] = ui.notice;
  j["font_px"] = settings.font_px;
  j["dark"] = settings.dark;
  j["gl43"] = ui.gl43;
  j["attention_backend"] = session.attention_hooked() ? "gpu" : "cpu";
  j["gpu_dispatches"] = session.attention_dispatches().size();
  j["model"] = session.model_label();
  j["layout"] = to_string(session.origin().layout);
  j["tokenizer"] = session.tokenizer().describe();
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
  if (const BpeTrainer* b = tokenizer_panel(*this).trainer()) {
    j["bpe"] = {{"vocab", b->vocab().size()}, {"merges", b->merges().size()},
                {"last", b->merges().empty() ? "" : b->merges().back().merged}};
  }
  j["generated"] = session.generated().size();
  j["run_kind"] = static_cast<int>(session.run_kind());
  j["arch"] = session.arch().name();
  j["params"] = session.model().table.total();  // ParamTable(c).total() of the session's model
  j["config"] = nlohmann::ordered_json::parse(to_json(session.model().config));
  j["variants"] = variant_summary(session.model().config);
  j["context"] = session.context();
  j["context_error"] = session.context_error();
  j["tokens_z"] = session.tokens_z().size();
  j["fill"] = session.tokenizer().decode(session.fill().filled);
  j["fill_positions"] = session.fill().positions.size();
  j["translated"] = session.tokenizer().decode(session.translated());
  j["translation_shown"] = session.translation_shown();
  j["translation_stopped"] = session.translation().stopped;
  {
    nlohmann::ordered_json tabs = nlohmann::ordered_json::array();
    for (const auto& [name, frame] : ui.tab_drawn)
      if (frame == ui.frame_index) tabs.push_back(name);
    j["tabs_shown"] = tabs;
  }
  {
    const TrainSnapshot& ts = training_panel(*this).snapshot();
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
  j["highlight"] = {ui.highlight_rect[0], ui.highlight_rect[1], ui.highlight_rect[2], ui.highlight_rect[3]};
  nlohmann::ordered_json windows = nlohmann::ordered_json::object();
  for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows) {
    if (!w->WasActive || w->Hidden || (w->Flags & ImGuiWindowFlags_Tooltip)) continue;
    windows[w->Name] = {w->Pos.x, w->Pos.y, w->Size.x, w->Size.y};
  }
  j["windows"] = windows;
  // issue 21 verbs
  {
    // The highlighted pseudocode line, visible when it shows whole; null when this frame drew none
    // (the pseudocode panel is closed, or the cursor enters an algorithm: no numbered line yet).
    const ImGuiWindow* w = ui.highlight_frame == ui.frame_index ? ImGui::FindWindowByID(ui.highlight_window) : nullptr;
    const ImRect r(ui.highlight_rect[0], ui.highlight_rect[1], ui.highlight_rect[0] + ui.highlight_rect[2],
                   ui.highlight_rect[1] + ui.highlight_rect[3]);
    j["current_line"] = w ? nlohmann::ordered_json{{"rect", j["highlight"]}, {"visible", ui_probe::fully_visible(w, r)}}
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
