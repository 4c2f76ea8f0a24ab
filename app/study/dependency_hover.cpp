// Dependency tracing on hover: the hovered cell's rule, its sources framed, and the tooltip line.
#include "app/study/dependency_hover.hpp"

#include "app/app.hpp"
#include "app/mathtext.hpp"
#include "core/trace/dependencies.hpp"

namespace sf {

namespace {

// The event that bound v (v is one of its values), searching back from k; SIZE_MAX if none.
size_t binding_event(const Trace& t, size_t k, const Value& v) {
  for (size_t j = std::min(k + 1, t.size()); j-- > 0;) {
    const auto& vals = t.events[j].values;
    if (!vals.empty() && &v >= vals.data() && &v < vals.data() + vals.size()) return j;
  }
  return SIZE_MAX;
}

// The last cell traced, kept while the pointer stays on it.
struct Traced {
  const Value* v = nullptr;
  size_t trace_size = 0, event = SIZE_MAX;
  int row = -1, col = -1;
  CellDependencies deps;
};

}  // namespace

void trace_dependencies(App& app, size_t k, const Value& v, const HeatmapHover& hover) {
  if (!hover.hovered || v.kind == ValueKind::Mask) return;
  const Trace& t = app.session.trace();
  static Traced last;
  if (last.v != &v || last.trace_size != t.size() || last.row != hover.row || last.col != hover.col) {
    const size_t j = binding_event(t, k, v);
    last = {&v, t.size(), j, hover.row, hover.col,
            j == SIZE_MAX ? CellDependencies{} : cell_dependencies(t, j, v.name, hover.row, hover.col)};
  }
  const CellDependencies& d = last.deps;
  if (!d.rule) return;
  app.ui.sources_event = app.shown_event();
  app.ui.sources_frame = app.ui.frame_index;
  app.ui.sources.clear();
  for (const CellSource& s : d.sources)
    for (const CellBlock& b : s.blocks) app.ui.sources[s.value].push_back({b.row0, b.col0, b.rows, b.cols});
  ImGui::BeginTooltip();
  ImGui::Separator();
  if (!d.sources.empty()) math_text(app.fonts, "computed from " + d.summary());
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
  ImGui::TextDisabled("%s", d.reason.c_str());
  if (!d.tokens.empty()) ImGui::TextDisabled("Through the masks, from the input tokens %s.", d.tokens.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

}  // namespace sf
