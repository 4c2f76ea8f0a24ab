// The application: one Session, the UI state, the panels, and the per-frame drawing.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/session.hpp"
#include "app/widgets/heatmap_region.hpp"

struct GLFWwindow;
struct ImFont;
namespace sf {
class GpuAttentionBackend;
class Feature;
}
#include "imgui.h"

namespace sf {

// Settings persisted in imgui.ini (section [Stepformer][Settings]).
struct Settings {
  float font_px = 17.0f;  // projector-friendly; Ctrl+= / Ctrl+- change it
  bool dark = true;
  bool high_contrast = false;  // the high-contrast theme (presentation mode turns it on)
  bool colorblind = false;     // the colour-blind-safe palette on every heatmap
  std::vector<std::string> recent_files;     // models (File › Open recent)
  std::vector<std::string> recent_sessions;  // sessions and lessons (File › Open recent)
  bool welcome_at_start = false;  // the welcome's "Show at start" (a first launch shows it regardless)
};

struct Fonts {
  ImFont* text = nullptr;   // DejaVu Sans, math glyphs included
  ImFont* small = nullptr;  // sub- and superscripts
  ImFont* mono = nullptr;   // DejaVu Sans Mono, numbers and tensors
  bool from_ttf = false;    // false: the TTF was missing and ImGui's default font is used
};

// Which panels are open (View menu, --actions open:NAME / close:NAME).
struct PanelVisibility {
  bool pseudocode = true, callstack = true, variables = true, tensor = true, attention = false, layernorm = false,
       sampling = false, fillin = false, translation = false, training = false, about = false, files = false, gpu = false,
       builder = false, errata = false, notation = false, tokenizer = false, experiments = false, study = false,
       lesson = false, gradflow = false, lens = false;
  bool modelmap = false, headview = false;  // issue 26: Inspector › Model map, Head view
  bool vision = false;                      // issue 26: Inspector › Vision (a vision transformer)
  bool* by_name(const std::string& name);
  static const std::vector<std::string>& names();
};

struct UiState {
  PanelVisibility show;
  std::string selected_value;  // the value shown in the tensor view (a name in scope)
  size_t viewed_event = SIZE_MAX;  // call-stack frame being viewed; SIZE_MAX: the cursor
  std::string notice;          // message in the status bar (errors, hints), wrapped in full when long
  bool notice_is_error = false;
  float notice_rect[4] = {0, 0, 0, 0};  // where the status bar drew the notice last frame (x, y, w, h)
  bool reset_layout = true;    // lay the windows out again on the next frame
  bool font_dirty = false;     // rebuild the font atlas before the next frame
  // The window's content scale (HiDPI: 2): fonts are settings.font_px × this, spacing scales with
  // them. GLFW's, or --scale's when given (content_scale_forced).
  float content_scale = 1.0f;
  bool content_scale_forced = false;
  bool gl43 = false;           // OpenGL 4.3 (compute shaders) available
  std::string gl_version;
  bool want_quit = false;
  bool focus_prompt = false;   // give the prompt field the keyboard on the next frame
  size_t frame_index = 0;
  float highlight_rect[4] = {0, 0, 0, 0};
  size_t highlight_frame = SIZE_MAX;  // the frame that drew it, in the window highlight_window (--dump-state)
  ImGuiID highlight_window = 0;
  std::map<std::string, size_t> tab_drawn;  // the frame each Inspector tab's body was last drawn (--dump-state)
  std::string inspector_tab;                // the Inspector's selected tab (its title)
  // The Inspector's tab buttons as last drawn (--dump-state): each whole, or not drawn at all.
  struct TabItem {
    std::string label;
    ImVec4 rect;  // x, y, w, h
    bool whole = true, selected = false;
  };
  std::vector<TabItem> inspector_tab_items;
  bool inspector_tab_menu = false;  // the tabs were drawn as one menu button (no room for them all)
  bool presentation = false;    // View › Presentation: projector fonts, high contrast, only the stop's panels
  // The cells of values in scope at event sources_event that the hovered cell was computed from
  // (dependency tracing: value name → blocks); heatmaps of those values frame them.
  size_t sources_event = SIZE_MAX;
  std::map<std::string, std::vector<CellRegion>> sources;
  size_t sources_frame = 0;  // the frame that last set them; App::draw clears them a frame after
  std::map<std::string, ImVec4> tiles;  // each tiled window's rectangle last frame (x, y, w, h)  // the current pseudocode line on screen (x, y, w, h)
};

class App {
 public:
  App();
  ~App();
  Session session;
  Settings settings;
  UiState ui;
  Fonts fonts;
  GLFWwindow* window = nullptr;

  // One frame of UI (between ImGui::NewFrame and ImGui::Render).
  void draw();
  // Applies a scripted action (--actions); returns false with `error` on a bad action.
  bool apply_action(const std::string& action, std::string& error);
  // The event the panels show: the cursor, or a call-stack frame the user clicked.
  size_t shown_event() const;
  void notify(std::string text, bool error = false);
  // Opens a checkpoint (file browser, drop, --model, load: action); errors go to the notice.
  void open_model(const std::string& path);
  // Puts one traced update of the model's training algorithm in the stepper (the Training tab's
  // "Trace one update"); false with `error`.
  bool trace_training_update(std::string& error);
  // Opens File › Examples' n-th model (1-based, assets/examples.json) with its prompt and context.
  bool open_example(int n, std::string& error);
  // Writes the state tests check against a screenshot (see --dump-state).
  bool write_state(const std::string& path, std::string& error) const;

  // The attention of the traced Forward run: the GPU's compute shaders (true) or core's Eigen.
  // When the GPU cannot be had, says why in the status bar and stays on the CPU.
  void set_attention_gpu(bool on);
  // Tells (a notice) which MHAttention call the GPU refused and why, once; true when there was one.
  bool notify_attention_failure();
  const GpuAttentionBackend& gpu_backend() const { return *gpu_; }
  // Frees what lives on the window's GL context; call before the context goes.
  void release_gl();

  struct Panels;
  std::unique_ptr<Panels> panels;
  // The classroom features (sessions, lessons, presentation, experiments, study, export), each
  // adding menu items, keys, actions and windows (app/feature.hpp).
  std::vector<std::unique_ptr<Feature>> features;
  template <class T>
  T* feature() const {
    for (const auto& f : features)
      if (auto* p = dynamic_cast<T*>(f.get())) return p;
    return nullptr;
  }
  // The status bar's height this frame: one line, or more while a long notice wraps above the
  // model line. The tiles and the lesson caption end above it, so that nothing hides under it.
  float status_bar_height() const;

 private:
  std::unique_ptr<GpuAttentionBackend> gpu_;
  void handle_shortcuts();
  void draw_menu_bar();
  void draw_status_bar();
  // The status bar's model line (architecture, hyperparameters, trace time, OpenGL).
  std::string status_info() const;
  void layout_windows();
  void draw_heatmap_menu();
};

}  // namespace sf
