// The focal value of a lesson stop (LessonStop::focus, the value its note talks about), as
// presentation mode shows it beside the pseudocode: its name and shape in the paper's notation,
// then the value itself as large as the window allows: a heatmap with its legend (matrices and
// masks), the number (scalars), the token chips (token sequences).
#pragma once
#include <cstddef>
#include <string>

#include "imgui.h"

namespace sf {

class App;
struct Value;

// The focal value's name at a stop shown at event k: the stop's own `focus`, else the first value
// event k bound ("" : none).
std::string focal_value_name(const App& app, const std::string& stop_focus, size_t k);
// That value among those in scope at event k (nullptr: not in scope).
const Value* find_in_scope(const App& app, size_t k, const std::string& name);

class FocusView {
 public:
  // Draws `v` (in scope at event k) in the current window, filling it.
  void draw(App& app, size_t k, const Value& v);
  // What the last draw covered on screen (x, y, w, h), and whether all of it was inside the
  // window's visible region (no part scrolled away or cut at an edge).
  const ImVec4& rect() const { return rect_; }
  bool whole() const { return whole_; }

 private:
  ImVec4 rect_{0, 0, 0, 0};
  bool whole_ = false;
};

}  // namespace sf
