#include "app/script_runner.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <cstdio>
#include <map>

#include "app/gui_support.hpp"
#include "app/logic/session_actions.hpp"
#include "app/ui_probe.hpp"
#include "backends/imgui_impl_glfw.h"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {

namespace {

// A menu opens the frame after its click and an auto-sized window (a menu, a popup) is hidden on
// its first frame while ImGui measures it: a widget not drawn within this many frames is not there.
constexpr int kMaxWaitFrames = 8;
// A drag moves the pointer over this many frames with the button held, so that ImGui sees it pass
// its drag threshold and every widget that follows the pointer gets several positions.
constexpr int kDragFrames = 4;

using Stage = ScriptRunner::Stage;
using StageFn = ScriptRunner::StageFn;

int key_code(const std::string& name, int& mods) {
  static const std::map<std::string, int> keys{
      {"F1", GLFW_KEY_F1},       {"F5", GLFW_KEY_F5},         {"F10", GLFW_KEY_F10},     {"F11", GLFW_KEY_F11},
      {"Space", GLFW_KEY_SPACE}, {"Left", GLFW_KEY_LEFT},     {"Right", GLFW_KEY_RIGHT}, {"Home", GLFW_KEY_HOME},
      {"End", GLFW_KEY_END},     {"=", GLFW_KEY_EQUAL},       {"-", GLFW_KEY_MINUS},     {"0", GLFW_KEY_0},
      {"O", GLFW_KEY_O},         {"Q", GLFW_KEY_Q},           {"G", GLFW_KEY_G},         {"R", GLFW_KEY_R},         {"S", GLFW_KEY_S},
      {"Escape", GLFW_KEY_ESCAPE}, {"B", GLFW_KEY_B},      {"PageDown", GLFW_KEY_PAGE_DOWN},
      {"PageUp", GLFW_KEY_PAGE_UP}, {"F6", GLFW_KEY_F6}, {"F7", GLFW_KEY_F7}};
  std::string k = name;
  mods = 0;
  while (k.size() > 2 && k[1] == '-') {
    if (k[0] == 'C') mods |= GLFW_MOD_CONTROL;
    if (k[0] == 'S') mods |= GLFW_MOD_SHIFT;
    k = k.substr(2);
  }
  auto it = keys.find(k);
  return it == keys.end() ? -1 : it->second;
}

// The pointer, as the X server has it: ImGui's GLFW backend reads its position with
// glfwGetCursorPos on each new frame.
StageFn move_to(GLFWwindow* w, float x, float y) {
  return [=](std::string&) {
    glfwSetCursorPos(w, x, y);
    return Stage::Done;
  };
}

// A press through the backend's callback counts as "held" on the next new frame (ImGui 1.86's
// backend ORs its "just pressed" flag with the device state), so a button stays down for as long
// as it is pressed again each frame.
StageFn press(GLFWwindow* w, int button) {
  return [=](std::string&) {
    ImGui_ImplGlfw_MouseButtonCallback(w, button, GLFW_PRESS, 0);
    return Stage::Done;
  };
}

StageFn release(GLFWwindow* w, int button) {
  return [=](std::string&) {
    ImGui_ImplGlfw_MouseButtonCallback(w, button, GLFW_RELEASE, 0);
    return Stage::Done;
  };
}

StageFn move_held(GLFWwindow* w, int button, float x, float y) {
  return [=](std::string&) {
    glfwSetCursorPos(w, x, y);
    ImGui_ImplGlfw_MouseButtonCallback(w, button, GLFW_PRESS, 0);
    return Stage::Done;
  };
}

// Position in ImGui's display order (back to front) of a window's root.
int display_order(const ImGuiWindow* w) {
  const ImVector<ImGuiWindow*>& all = GImGui->Windows;
  for (int i = 0; i < all.Size; ++i)
    if (all[i] == w->RootWindow) return i;
  return -1;
}

// The widget labelled `label` that the last frame drew and that shows at least in part, the one
// in the front-most window when several have that label; null when there is none.
const ui_probe::LabelledItem* find_item(const std::string& label) {
  const ui_probe::LabelledItem* best = nullptr;
  int best_order = -1;
  for (const ui_probe::LabelledItem& item : ui_probe::labelled_items()) {
    if (item.label != label || item.visible.GetWidth() < 1 || item.visible.GetHeight() < 1) continue;
    const ImGuiWindow* w = ImGui::FindWindowByID(item.window);
    if (!w || !w->Active || w->Hidden) continue;  // a menu on its first, measuring frame
    if (const int order = display_order(w); order > best_order) best = &item, best_order = order;
  }
  return best;
}

StageFn move_to_item(GLFWwindow* w, const std::string& label) {
  return [=](std::string& error) {
    const ui_probe::LabelledItem* item = find_item(label);
    if (!item) {
      error = "no widget labelled \"" + label + "\" was drawn in " + std::to_string(kMaxWaitFrames) +
              " frames (click-item matches a widget's whole label as shown, without its ##id; a menu item "
              "is a path from the menu bar, e.g. click-item:View/Presentation)";
      return Stage::Wait;
    }
    const ImVec2 c = item->visible.GetCenter();
    glfwSetCursorPos(w, c.x, c.y);
    return Stage::Done;
  };
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t slash; (slash = path.find('/', from)) != std::string::npos; from = slash + 1)
    out.push_back(path.substr(from, slash - from));
  out.push_back(path.substr(from));
  return out;
}

}  // namespace

void ScriptRunner::fail(const std::string& action, const std::string& error) {
  errors_.push_back("action " + action + ": " + error);
}

// Queues the stages of click:, right-click:, drag: and click-item:; false with `error` when the
// verb is one of them and its argument is wrong, or when the verb is another's (error empty).
bool ScriptRunner::queue_pointer_verb(const std::string& verb, const std::string& arg, std::string& error) {
  GLFWwindow* w = app_.window;
  if (verb == "click-item") {
    const std::vector<std::string> path = split_path(arg);
    for (const std::string& label : path)
      if (label.empty()) return error = "click-item needs a label, or a menu path such as View/Presentation", false;
    ui_probe::set_enabled(true);  // the labels are recorded from the next frame on
    for (const std::string& label : path) {
      stages_.push_back(move_to_item(w, label));
      stages_.push_back(press(w, GLFW_MOUSE_BUTTON_LEFT));
      stages_.push_back(release(w, GLFW_MOUSE_BUTTON_LEFT));
    }
    return true;
  }
  if (verb != "click" && verb != "right-click" && verb != "drag") return false;
  std::vector<int> v;
  const size_t n = verb == "drag" ? 4 : 2;
  if (!action_ints(arg, v) || v.size() != n)
    return error = verb + (n == 4 ? " needs X1:Y1:X2:Y2" : " needs X:Y") + " (window pixels from the top left)", false;
  int ww = 0, wh = 0;
  glfwGetWindowSize(w, &ww, &wh);
  for (size_t i = 0; i < n; i += 2)
    if (v[i] < 0 || v[i + 1] < 0 || v[i] >= ww || v[i + 1] >= wh)
      return error = std::to_string(v[i]) + ":" + std::to_string(v[i + 1]) + " is outside the " + std::to_string(ww) +
                     "x" + std::to_string(wh) + " window",
             false;
  const int button = verb == "right-click" ? GLFW_MOUSE_BUTTON_RIGHT : GLFW_MOUSE_BUTTON_LEFT;
  stages_.push_back(move_to(w, v[0], v[1]));
  stages_.push_back(press(w, button));
  if (verb == "drag")
    for (int k = 1; k <= kDragFrames; ++k) {
      const float t = static_cast<float>(k) / kDragFrames;
      stages_.push_back(move_held(w, button, v[0] + t * (v[2] - v[0]), v[1] + t * (v[3] - v[1])));
    }
  stages_.push_back(release(w, button));
  return true;
}

void ScriptRunner::start(const std::string& a) {
  const size_t colon = a.find(':');
  const std::string verb = a.substr(0, colon), arg = colon == std::string::npos ? "" : a.substr(colon + 1);
  if (verb == "key") {
    int mods = 0;
    const int key = key_code(arg, mods);
    if (key < 0) return fail(a, "unknown key");
    auto press_key = [&](int k) {
      ImGui_ImplGlfw_KeyCallback(app_.window, k, 0, GLFW_PRESS, mods);
      held_keys_.push_back(k);
    };
    if (mods & GLFW_MOD_CONTROL) press_key(GLFW_KEY_LEFT_CONTROL);
    if (mods & GLFW_MOD_SHIFT) press_key(GLFW_KEY_LEFT_SHIFT);
    press_key(key);
    return;
  }
  if (verb == "dump-state" || verb == "screenshot") {
    if (arg.empty()) return fail(a, verb + " needs a file name");
    if (verb == "dump-state") ui_probe::set_enabled(true), dump_path_ = arg;
    else screenshot_path_ = arg;
    return;
  }
  std::string error;
  current_ = a;
  if (queue_pointer_verb(verb, arg, error)) return;
  if (!error.empty()) return fail(a, error);
  if (!app_.apply_action(a, error)) fail(a, error);
}

void ScriptRunner::run_stage() {
  std::string error;
  switch (stages_.front()(error)) {
    case Stage::Done:
      stages_.pop_front();
      waited_ = 0;
      return;
    case Stage::Wait:
      if (++waited_ < kMaxWaitFrames) return;
      break;
    case Stage::Failed:
      break;
  }
  fail(current_, error);
  stages_.clear();
  waited_ = 0;
}

void ScriptRunner::step(int frame) {
  // Release what the previous action pressed.
  for (int key : held_keys_) ImGui_ImplGlfw_KeyCallback(app_.window, key, 0, GLFW_RELEASE, 0);
  held_keys_.clear();
  if (!stages_.empty()) {
    run_stage();
    if (stages_.empty()) next_frame_ = frame + 1;  // the gesture's last frame was its gap
    return;
  }
  if (frame < next_frame_ || next_ >= actions_.size()) return;
  start(actions_[next_++]);
  next_frame_ = frame + 2;  // a frame for the UI to show it (and a key to be released)
  if (!stages_.empty()) run_stage();
}

void ScriptRunner::after_render(int w, int h) {
  std::string error;
  if (!dump_path_.empty() && !app_.write_state(dump_path_, error)) fail("dump-state:" + dump_path_, error);
  if (!screenshot_path_.empty() && !save_screenshot(screenshot_path_, w, h, error))
    fail("screenshot:" + screenshot_path_, error);
  dump_path_.clear();
  screenshot_path_.clear();
}

}  // namespace sf
