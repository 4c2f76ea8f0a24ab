#include "app/app.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>

#include "app/examples.hpp"
#include "backends/imgui_impl_glfw.h"
#include "app/gpu_attention_backend.hpp"
#include "app/panels/all_panels.hpp"
#include "app/panels/gradient_flow_panel.hpp"
#include "app/panels/head_view_panel.hpp"
#include "app/panels/vision_panel.hpp"
#include "app/panels/model_map_panel.hpp"
#include "app/panels/sampling_cut_feature.hpp"
#include "app/panels/logit_lens_feature.hpp"
#include "app/classroom/lesson_feature.hpp"
#include "app/classroom/presentation_feature.hpp"
#include "app/classroom/session_feature.hpp"
#include "app/experiments/experiment_feature.hpp"
#include "app/export/export_feature.hpp"
#include "app/feature.hpp"
#include "app/logic/session_actions.hpp"
#include "app/logic/vision.hpp"
#include "app/panel_registry.hpp"
#include "app/study/study_feature.hpp"
#include "app/widgets/colormap.hpp"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {


const std::vector<std::string>& PanelVisibility::names() {
  static const std::vector<std::string> n = [] {
    std::vector<std::string> v;
    for (const PanelDecl& d : panel_registry()) v.emplace_back(d.name);
    return v;
  }();
  return n;
}

bool* PanelVisibility::by_name(const std::string& name) {
  const PanelDecl* d = find_panel(name);
  return d ? &(this->*(d->open)) : nullptr;
}

App::App() : panels(std::make_unique<Panels>()), gpu_(std::make_unique<GpuAttentionBackend>()) {
  features.push_back(make_session_feature());
  features.push_back(make_lesson_feature());
  features.push_back(make_presentation_feature());
  features.push_back(make_experiment_feature());
  features.push_back(make_study_feature());
  features.push_back(make_export_feature());
  features.push_back(make_gradient_flow_feature());
  features.push_back(make_sampling_cut_feature());
  features.push_back(make_model_map_feature());
  features.push_back(make_head_view_feature());
  features.push_back(make_vision_feature());
  features.push_back(make_logit_lens_feature());
}

void App::set_attention_gpu(bool on) {
  if (!on) {
    if (session.attention_hooked()) session.set_attention_hook({});
    notify("Attention: CPU (Eigen)");
    return;
  }
  if (!gpu_->ensure(ui.gl43)) {
    if (session.attention_hooked()) session.set_attention_hook({});
    notify("GPU attention unavailable: " + gpu_->why_not() + "; using the CPU", true);
    return;
  }
  session.set_attention_hook(gpu_->hook());
  if (!notify_attention_failure()) notify("Attention: GPU (" + gpu_->device() + ")");
}

bool App::notify_attention_failure() {
  const std::string failed = session.take_attention_failure();
  if (!failed.empty()) notify("GPU attention failed at " + failed + "; the whole run was traced on the CPU", true);
  return !failed.empty();
}

void App::release_gl() {
  if (session.attention_hooked()) session.set_attention_hook({});
  gpu_->release();
}

const TrainingPanel& training_panel(const App& app) { return app.panels->training; }
const TokenizerPanel& tokenizer_panel(const App& app) { return app.panels->tokenizer; }
const TensorPanel& tensor_panel(const App& app) { return app.panels->tensor; }
bool App::trace_training_update(std::string& error) { return panels->training.trace_update(*this, error); }
App::~App() = default;

size_t App::shown_event() const {
  const size_t n = session.trace().size();
  if (ui.viewed_event < n) return ui.viewed_event;
  return std::min(session.cursor(), n ? n - 1 : 0);
}

void App::notify(std::string text, bool error) {
  ui.notice = std::move(text);
  ui.notice_is_error = error;
}

bool App::open_example(int n, std::string& error) {
  const std::vector<ExampleModel> ex = load_examples(error);
  if (n < 1 || n > static_cast<int>(ex.size()))
    return error = error.empty() ? "no example " + std::to_string(n) + " (there are " + std::to_string(ex.size()) + ")" : error,
           false;
  const ExampleModel& e = ex[n - 1];
  if (!e.built) return error = e.path() + " is not built yet", false;
  std::string load_error;
  if (!session.load_model(e.path(), load_error)) return error = "could not open " + e.path() + ": " + load_error, false;
  if (session.arch().has_context()) session.set_context(e.context);
  if (!session.reads_image()) session.set_prompt(e.prompt);  // a vision transformer's x is its image
  session.restart();
  ui.viewed_event = SIZE_MAX;
  notify("Example: " + e.title + " (" + std::to_string(session.model().table.total()) + " parameters)");
  return true;
}

void App::open_model(const std::string& path) {
  std::string error;
  if (!session.load_model(path, error)) {
    notify("Could not open " + path + ": " + error, true);
    return;
  }
  auto& r = settings.recent_files;
  r.erase(std::remove(r.begin(), r.end(), path), r.end());
  r.insert(r.begin(), path);
  if (r.size() > 8) r.resize(8);
  ui.viewed_event = SIZE_MAX;
  notify("Opened " + session.model_label() + " (" + std::to_string(session.model().table.total()) + " parameters, " +
         (session.reads_image() ? "no tokenizer: " + vision_model_description(session.model().config)
                               : session.tokenizer().describe()) + ")");
  session.restart();
}

void App::draw_menu_bar() {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("New model…")) panels->builder.open(*this);
    if (ImGui::MenuItem("Open checkpoint or model folder…", "Ctrl+O")) ui.show.files = true;
    if (ImGui::BeginMenu("Examples")) {
      std::string error;
      const std::vector<ExampleModel> ex = load_examples(error);
      if (!error.empty()) ImGui::TextDisabled("%s", error.c_str());
      for (size_t i = 0; i < ex.size(); ++i) {
        const std::string label = ex[i].title + (ex[i].built ? "" : "  (not built)");
        if (ImGui::MenuItem(label.c_str(), nullptr, false, ex[i].built)) open_example(static_cast<int>(i) + 1, error);
        if (!ex[i].built && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
          item_tooltip(ex[i].path() + " does not exist yet (see assets/README.md for how it is trained).");
      }
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Open recent", !settings.recent_files.empty())) {
      for (const auto& r : settings.recent_files)
        if (ImGui::MenuItem(r.c_str())) open_model(r);
      ImGui::EndMenu();
    }
    for (auto& f : features) f->file_menu(*this);
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) ui.want_quit = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Run")) {
    Session& s = session;
    if (ImGui::MenuItem("Step into", "F11")) s.step_into();
    if (ImGui::MenuItem("Step over", "F10")) s.step_over();
    if (ImGui::MenuItem("Step out", "Shift+F11")) s.step_out();
    if (ImGui::MenuItem("Step back", "Shift+F9")) s.step_back();
    if (ImGui::MenuItem("Step back over", "Shift+F10")) s.step_back_over();
    if (ImGui::MenuItem("Continue to breakpoint", "F5")) s.continue_run();
    if (ImGui::MenuItem("Restart", "Ctrl+R")) s.restart();
    ImGui::Separator();
    const std::string fwd = "Trace the forward pass (Algorithm " + std::to_string(s.arch().forward_algorithm()) + ")";
    if (ImGui::MenuItem(fwd.c_str(), nullptr, s.run_kind() == RunKind::Forward)) s.trace_forward();
    switch (s.arch().output()) {
      case OutputKind::Continuation:
        if (ImGui::MenuItem("Generate one token (Algorithm 14)", "Ctrl+G")) s.trace_generate(1, true);
        if (ImGui::MenuItem("Generate ℓ_gen tokens (Algorithm 14)"))
          s.trace_generate(s.generation().settings.l_gen, false);
        break;
      case OutputKind::FillIn:
        if (ImGui::MenuItem("Trace the fill")) s.trace_fill();
        break;
      case OutputKind::Translation:
        if (ImGui::MenuItem("Translate one token (Algorithm 15)", "Ctrl+G")) s.trace_translate(true);
        if (ImGui::MenuItem("Translate until eos_token (Algorithm 15)")) s.trace_translate(false);
        break;
      case OutputKind::Classification:  // the Vision tab chooses the image
        break;
    }
    for (auto& f : features) f->run_menu(*this);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (const PanelDecl& d : panel_registry()) {
      if (!d.in_view_menu) continue;  // opened from File, Help or Lesson
      bool* v = &(ui.show.*d.open);
      std::string label = d.name;
      label[0] = static_cast<char>(std::toupper(label[0]));
      ImGui::MenuItem(label.c_str(), nullptr, v);
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Larger text", "Ctrl+=")) {
      settings.font_px = std::min(48.0f, settings.font_px + 2);
      ui.font_dirty = true;
    }
    if (ImGui::MenuItem("Smaller text", "Ctrl+-")) {
      settings.font_px = std::max(10.0f, settings.font_px - 2);
      ui.font_dirty = true;
    }
    if (ImGui::MenuItem("Default text size", "Ctrl+0")) {
      settings.font_px = 17;
      ui.font_dirty = true;
    }
    if (ImGui::MenuItem("Dark theme", nullptr, settings.dark)) {
      settings.dark = true;
      ui.font_dirty = true;
    }
    if (ImGui::MenuItem("Light theme", nullptr, !settings.dark)) {
      settings.dark = false;
      ui.font_dirty = true;
    }
    for (auto& f : features) f->view_menu(*this);
    ImGui::Separator();
    if (ImGui::MenuItem("Reset layout")) ui.reset_layout = true;
    ImGui::EndMenu();
  }
  for (auto& f : features) f->top_menu(*this);
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Welcome")) panels->welcome.show(true);
    if (ImGui::MenuItem("Errata of the seeds…")) ui.show.errata = true;
    if (ImGui::MenuItem("About Stepformer", "F1")) ui.show.about = true;
    ImGui::EndMenu();
  }
  ImGui::EndMainMenuBar();
}

std::string App::status_info() const {
  const ModelConfig& c = session.model().config;
  std::string keys;  // the architecture's own hyperparameters (L | L, d_f | L_enc, L_dec)
  for (const auto& k : session.arch().config_keys())
    if (const int* v = config_int(c, k)) keys += k + "=" + std::to_string(*v) + " ";
  const std::string output = session.reads_image() ? vision_model_description(c, true) : "N_V=" + std::to_string(c.N_V());
  char info[512];
  std::snprintf(info, sizeof info,
                "%s  ·  %s  ·  %sH=%d d_e=%d d_attn=%d d_mid=%d d_mlp=%d ℓ_max=%d %s ε=%g  ·  trace %.2f ms  ·  %s",
                session.model_label().c_str(), session.arch().name().c_str(), keys.c_str(), c.H, c.d_e, c.d_attn,
                c.d_mid, c.d_mlp, c.l_max, output.c_str(), c.eps, session.last_trace_ms(),
                ui.gl43 ? "OpenGL 4.3" : "no OpenGL 4.3 (CPU only)");
  return info;
}

namespace {

// The status bar's shape: the notice follows the model line when both fit on one line; else,
// where the notice fits the line alone, it comes first and the model line after it is cut at
// the screen's edge (the notice is transient; the panels keep their height); a notice longer
// than the line gets lines of its own above the model line, wrapped in full (up to a third of
// the screen).
struct StatusBarShape {
  bool one_line = true;
  bool notice_first = false;
  float h = 0;
};

StatusBarShape status_bar_shape(const std::string& info, const std::string& notice) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float fs = ImGui::GetFontSize(), pad = ImGui::GetStyle().WindowPadding.x;
  const float line_h = fs * 1.9f, text_w = vp->WorkSize.x - 2 * pad;
  const std::string tail = notice.empty() ? "" : "  " + notice;
  StatusBarShape s;
  // No notice: nothing to wrap (a model line wider than the screen is cut at its right end).
  s.one_line = notice.empty() || ImGui::CalcTextSize((info + tail).c_str()).x <= text_w;
  if (!s.one_line && ImGui::CalcTextSize(notice.c_str()).x <= text_w) s.one_line = s.notice_first = true;
  s.h = line_h;
  if (!s.one_line) {
    const float notice_h = ImGui::CalcTextSize(notice.c_str(), nullptr, false, text_w).y;
    s.h = std::min(line_h + notice_h + ImGui::GetStyle().ItemSpacing.y, vp->WorkSize.y / 3.0f);
  }
  return s;
}

}  // namespace

float App::status_bar_height() const { return status_bar_shape(status_info(), ui.notice).h; }

void App::draw_status_bar() {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const std::string info = status_info();
  // A long notice makes the bar taller; the layout has ended the tiles above it (status_bar_height).
  const StatusBarShape shape = status_bar_shape(info, ui.notice);
  const bool one_line = shape.one_line;
  const std::string notice = ui.notice.empty() ? "" : "  " + ui.notice;
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x, vp->WorkPos.y + vp->WorkSize.y - shape.h));
  ImGui::SetNextWindowSize(ImVec2(vp->WorkSize.x, shape.h));
  ImGui::Begin("##status", nullptr,
               ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | (one_line ? ImGuiWindowFlags_NoBackground : 0) |
                   (one_line ? ImGuiWindowFlags_NoScrollbar : 0));
  if (!one_line) ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());  // over a floating window there
  const ImVec4 notice_col = ui.notice_is_error ? ImVec4(1, 0.4f, 0.35f, 1) : ImVec4(0.5f, 0.85f, 0.5f, 1);
  std::fill(std::begin(ui.notice_rect), std::end(ui.notice_rect), 0.0f);
  auto keep_rect = [&] {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    ui.notice_rect[0] = a.x, ui.notice_rect[1] = a.y, ui.notice_rect[2] = b.x - a.x, ui.notice_rect[3] = b.y - a.y;
  };
  if (!one_line) {
    ImGui::PushStyleColor(ImGuiCol_Text, notice_col);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(ui.notice.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    keep_rect();
  }
  if (shape.notice_first) {
    ImGui::TextColored(notice_col, "%s", ui.notice.c_str());
    keep_rect();
    ImGui::SameLine();
  }
  ImGui::TextDisabled("%s", info.c_str());
  if (session.trace_stale()) {  // the panels show the trace of an earlier prompt (toolbar: why)
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1, 0.4f, 0.35f, 1), "·  trace STALE: fix the prompt");
  }
  if (one_line && !shape.notice_first && !notice.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(notice_col, "%s", notice.c_str());
    keep_rect();
  }
  ImGui::End();
}

void App::handle_shortcuts() {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;  // typing in a text field: keys belong to it
  auto pressed = [](int key) { return ImGui::IsKeyPressed(key, true); };
  Session& s = session;
  const size_t before = s.cursor();
  if (io.KeyShift && pressed(GLFW_KEY_F11)) s.step_out();
  else if (pressed(GLFW_KEY_F11)) s.step_into();
  if (io.KeyShift && pressed(GLFW_KEY_F10)) s.step_back_over();
  else if (pressed(GLFW_KEY_F10)) s.step_over();
  if (io.KeyShift && pressed(GLFW_KEY_F9)) s.step_back();
  if (pressed(GLFW_KEY_F5)) s.continue_run();
  if (pressed(GLFW_KEY_RIGHT) && !io.KeyCtrl) s.step_into();
  if (pressed(GLFW_KEY_LEFT) && !io.KeyCtrl) s.step_back();
  if (pressed(GLFW_KEY_HOME)) s.restart();
  if (pressed(GLFW_KEY_END)) s.jump(s.trace().size());
  if (pressed(GLFW_KEY_F1)) ui.show.about = true;
  if (io.KeyCtrl) {
    if (pressed(GLFW_KEY_EQUAL) || pressed(GLFW_KEY_KP_ADD)) {
      settings.font_px = std::min(48.0f, settings.font_px + 2);
      ui.font_dirty = true;
    }
    if (pressed(GLFW_KEY_MINUS) || pressed(GLFW_KEY_KP_SUBTRACT)) {
      settings.font_px = std::max(10.0f, settings.font_px - 2);
      ui.font_dirty = true;
    }
    if (pressed(GLFW_KEY_0)) {
      settings.font_px = 17;
      ui.font_dirty = true;
    }
    if (pressed(GLFW_KEY_O) && !io.KeyShift) ui.show.files = true;  // Ctrl+Shift+O: Open session
    if (pressed(GLFW_KEY_Q)) ui.want_quit = true;
    if (pressed(GLFW_KEY_R)) s.restart();
    if (pressed(GLFW_KEY_G)) {
      if (s.arch().output() == OutputKind::Continuation) s.trace_generate(1, true);
      if (s.arch().output() == OutputKind::Translation) s.trace_translate(true);
    }
  }
  for (auto& f : features) f->shortcuts(*this);
  if (s.cursor() != before) ui.viewed_event = SIZE_MAX;
}

void App::draw() {
  if (session.poll()) ui.viewed_event = SIZE_MAX;  // a trace made off the UI thread is ready
  notify_attention_failure();  // a re-trace (a new model, prompt or context) the GPU refused
  set_heatmap_palette(settings.colorblind || ui.presentation ? Palette::ColorBlind : Palette::Standard);
  if (ui.sources_frame + 1 < ui.frame_index) {  // dependency tracing: no cell hovered since the last frame
    ui.sources_event = SIZE_MAX;
    ui.sources.clear();
  }
  handle_shortcuts();
  draw_menu_bar();
  layout_windows();
  draw_status_bar();
  for (auto& f : features) f->overlay(*this);
  panels->training.drop_if_stale(*this);
  draw_heatmap_menu();
}

// A heatmap was right-clicked (heatmap_menu_request): each feature adds its items.
void App::draw_heatmap_menu() {
  static HeatmapMenuRequest shown;
  if (auto& req = heatmap_menu_request()) {
    shown = std::move(*req);
    req.reset();
    ImGui::OpenPopup("##heatmap-menu");
  }
  if (!ImGui::BeginPopup("##heatmap-menu")) return;
  ImGui::TextDisabled("%s", shown.opt.caption.empty() ? shown.value.name.c_str() : shown.opt.caption.c_str());
  ImGui::Separator();
  for (auto& f : features) f->heatmap_menu(*this, shown);
  ImGui::EndPopup();
}

bool App::apply_action(const std::string& action, std::string& error) {
  const size_t colon = action.find(':');
  const std::string verb = action.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : action.substr(colon + 1);
  Session& s = session;
  switch (apply_session_action(s, verb, arg, error)) {
    case ActionResult::Failed:
      return false;
    case ActionResult::Done:
      // What the window shows after it.
      if (verb == "wait-trace") ui.viewed_event = SIZE_MAX;
      if (verb == "mask") ui.show.fillin = true;
      if (verb == "translate-one" || verb == "translate-all") ui.show.translation = true;
      return true;
    case ActionResult::NotMine:
      break;
  }
  std::vector<int> v;
  if (verb == "focus") {
    if (arg != "prompt") return error = "focus takes prompt", false;
    ui.focus_prompt = true;
  } else if (verb == "notation") {
    if (!notation_from_key(arg, panels->notation.notation)) return error = "notation takes paper, carpenter or dyz", false;
    ui.show.notation = true;
  } else if (verb == "example") {
    if (!action_ints(arg, v) || v.size() != 1) return error = "example needs a number (1-based, as File › Examples lists them)", false;
    if (!open_example(v[0], error)) return false;
  } else if (verb == "open" || verb == "close") {
    bool* p = ui.show.by_name(arg);
    if (!p) return error = "unknown panel \"" + arg + "\"", false;
    *p = verb == "open";
  } else if (verb == "select") {
    ui.selected_value = arg;
    ui.show.tensor = true;
  } else if (verb == "tensor-view") {  // at a backward event: a gradient's forward value, itself, or their product
    const PairView pv = arg == "value" ? PairView::Value : arg == "gradient" ? PairView::Gradient : PairView::Product;
    if (arg != "value" && arg != "gradient" && arg != "product")
      return error = "tensor-view takes value, gradient or product (value ⊙ gradient)", false;
    panels->tensor.set_pair_view(pv);
    ui.show.tensor = true;
  } else if (verb == "attention-views") {  // after a traced backward: all four of S, A, ∇S, ∇A, or a pair
    using V = AttentionPanel::GradientViews;
    if (arg != "both" && arg != "forward" && arg != "gradient")
      return error = "attention-views takes both (S, A, ∇S and ∇A), forward (S and A) or gradient (∇S and ∇A)", false;
    panels->attention.set_gradient_views(arg == "both" ? V::Both : arg == "forward" ? V::Forward : V::Gradient);
    ui.show.attention = true;
  } else if (verb == "frame") {
    if (!action_ints(arg, v) || v.size() != 1) return error = "frame needs a depth (0 = outermost)", false;
    const auto stack = s.trace().call_stack(s.cursor());
    if (v[0] < 0 || v[0] >= static_cast<int>(stack.size())) return error = "no frame at that depth", false;
    ui.viewed_event = v[0] + 1 == static_cast<int>(stack.size()) ? SIZE_MAX : stack[v[0]];
  } else if (verb == "theme") {
    if (arg != "dark" && arg != "light") return error = "theme is dark or light", false;
    settings.dark = arg == "dark";
    ui.font_dirty = true;
  } else if (verb == "font") {
    if (!action_ints(arg, v) || v.size() != 1) return error = "font needs a size in pixels", false;
    settings.font_px = static_cast<float>(std::clamp(v[0], 10, 48));
    ui.font_dirty = true;
  } else if (verb == "load") {
    open_model(arg);
  } else if (verb == "train-task") {
    ui.show.training = true;
    if (!panels->training.set_task(*this, arg, error)) return false;
  } else if (verb == "train-mode") {
    if (arg != "paper" && arg != "practical") return error = "train-mode is paper or practical", false;
    panels->training.set_mode(*this, arg == "paper" ? TrainMode::Paper : TrainMode::Practical);
  } else if (verb == "train-step") {
    if (!action_ints(arg, v) || v.size() != 1 || v[0] < 1) return error = "train-step needs a number of updates", false;
    panels->training.step_sync(*this, v[0]);
  } else if (verb == "train-trace") {
    if (!panels->training.trace_update(*this, error)) return false;
  } else if (verb == "train-use") {
    if (!panels->training.use_model(*this, error)) return false;
  } else if (verb == "train-play") {
    ui.show.training = true;
    if (!panels->training.play(*this, error)) return false;
  } else if (verb == "train-pause") {
    panels->training.pause();
  } else if (verb == "eta") {
    char* end = nullptr;
    const double eta = std::strtod(arg.c_str(), &end);
    if (arg.empty() || *end != '\0') return error = "eta needs a number (the learning rate η, e.g. eta:0.003)", false;
    if (!panels->training.set_eta(*this, eta, error)) return false;
  } else if (verb == "builder") {
    // builder:open, builder:set:KEY=VALUE, builder:create, builder:save:PATH (File › New model…)
    const size_t c2 = arg.find(':');
    const std::string sub = arg.substr(0, c2), rest = c2 == std::string::npos ? "" : arg.substr(c2 + 1);
    const size_t eq = rest.find('=');
    if (sub == "open") panels->builder.open(*this);
    else if (sub == "set" && eq != std::string::npos) {
      if (!panels->builder.set(rest.substr(0, eq), rest.substr(eq + 1), error)) return false;
    } else if (sub == "create") {
      if (!panels->builder.create(*this, error)) return false;
    } else if (sub == "save") {
      if (!panels->builder.save_as(*this, rest, error)) return false;
    } else return error = "builder takes open, set:KEY=VALUE, create or save:PATH", false;
  } else if (verb == "errata") {
    // errata:show:ID (Help › Errata, "Show me")
    const Erratum* e = arg.rfind("show:", 0) == 0 ? find_erratum(arg.substr(5)) : nullptr;
    if (!e) return error = "errata takes show:ID with the id of an erratum (core/pseudocode/errata.cpp)", false;
    ui.show.errata = true;
    panels->errata.show(*this, *e);  // a model that does not run it is a notice, not a failed action
  } else if (verb == "welcome") {
    if (!panels->welcome.action(*this, arg, error)) return false;
  } else if (verb == "attention") {
    if (arg != "gpu" && arg != "cpu") return error = "attention is gpu or cpu", false;
    set_attention_gpu(arg == "gpu");
  } else if (verb == "tokenizer") {
    panels->tokenizer.set_corpus(arg);
    ui.show.tokenizer = true;
  } else if (verb == "bpe-vocab") {
    if (!action_ints(arg, v) || v.size() != 1 || v[0] < 1) return error = "bpe-vocab needs a vocabulary size", false;
    panels->tokenizer.set_target(v[0]);
    ui.show.tokenizer = true;
  } else if (verb == "bpe-step") {
    if (!action_ints(arg, v) || v.size() != 1 || v[0] < 1) return error = "bpe-step needs a number of merges", false;
    if (!panels->tokenizer.step(v[0], error)) return false;
    ui.show.tokenizer = true;
  } else if (verb == "bpe-run") {
    if (!panels->tokenizer.run(error)) return false;
    ui.show.tokenizer = true;
  } else if (verb == "files") {
    ui.show.files = true;
    if (!panels->files.browse(arg)) return error = "cannot list the folder " + arg, false;
  } else if (verb == "files-open-folder") {
    if (!ui.show.files) return error = "File › Open is not open (files:PATH first)", false;
    panels->files.open_folder(*this);
  } else if (verb == "wheel") {
    if (!action_ints(arg, v) || v.size() != 1) return error = "wheel needs a number of notches (+ zooms in)", false;
    ImGui_ImplGlfw_ScrollCallback(window, 0.0, v[0]);
  } else if (verb == "mouse") {
    if (!action_ints(arg, v) || v.size() != 2) return error = "mouse needs X:Y (window pixels)", false;
    glfwSetCursorPos(window, v[0], v[1]);
  } else {
    for (auto& f : features) switch (f->action(*this, verb, arg, error)) {
        case ActionResult::Done:
          return true;
        case ActionResult::Failed:
          return false;
        case ActionResult::NotMine:
          break;
      }
    return error = "unknown action (see --help)", false;
  }
  return true;
}

}  // namespace sf
