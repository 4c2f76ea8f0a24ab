#include "app/export/export_targets.hpp"

#include <filesystem>

#include "app/app.hpp"
#include "app/panels/tensor_panel.hpp"
#include "app/widgets/colormap.hpp"
#include "app/widgets/heatmap.hpp"
#include "core/model/config.hpp"
#include "core/model/error.hpp"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {

namespace fs = std::filesystem;

ExportJob matrix_job(const Value& v, const HeatmapOptions& o, ExportFormat f) {
  ExportJob job;
  job.kind = ExportKind::Matrix;
  job.format = f;
  job.value = v;
  ExportMatrix& w = job.what;
  w.name = v.name.empty() ? "value" : v.name;
  FigureSpec& s = w.figure;
  s.value_name = w.name;
  s.caption = o.caption.empty() ? w.name : o.caption;
  s.rows = {o.rows.title, o.rows.labels, o.rows.images};
  s.cols = {o.cols.title, o.cols.labels, o.cols.images};
  s.scale = o.scale == ColorScale::Diverging    ? FigureScaleKind::Diverging
            : o.scale == ColorScale::Sequential ? FigureScaleKind::Sequential
                                                : FigureScaleKind::Auto;
  s.lo = o.lo, s.hi = o.hi;
  s.palette = heatmap_palette();
  w.rows = {o.rows.index, o.rows.labels};
  w.cols = {o.cols.index, o.cols.labels};
  return job;
}

namespace {

std::optional<ExportJob> job_for(const App& app, size_t k, const Value* v, ExportFormat f, std::string& error) {
  if (v->kind == ValueKind::Tokens || v->m.size() == 0) {
    error = v->name + " is a token sequence, not a matrix: export the trace as JSON for its ids";
    return std::nullopt;
  }
  return matrix_job(*v, heatmap_options(app, k, *v), f);
}

}  // namespace

std::optional<ExportJob> shown_tensor_job(const App& app, ExportFormat f, std::string& error) {
  const Trace& t = app.session.trace();
  if (t.size() == 0) return error = "there is no trace to export from", std::nullopt;
  const size_t k = app.shown_event();
  const std::vector<const Value*> scope = app.session.scope_for_view(k);
  if (scope.empty()) return error = "nothing is in scope at this step", std::nullopt;
  return job_for(app, k, shown_value(app, k, scope), f, error);  // as the Tensor view chooses
}

std::optional<ExportJob> value_job(const App& app, const std::string& name, ExportFormat f, std::string& error) {
  const size_t k = app.shown_event();
  std::string names;
  for (const Value* x : app.session.scope_for_view(k)) {
    if (x->name == name) return job_for(app, k, x, f, error);
    names += (names.empty() ? "" : ", ") + x->name;
  }
  error = "no value named \"" + name + "\" is in scope at this step (in scope: " + names + ")";
  return std::nullopt;
}

void run_export(const App& app, const ExportJob& job, const std::string& path) {
  const Session& s = app.session;
  if (job.kind == ExportKind::Matrix) {
    export_matrix(job.format, path, job.value.m, job.what);
  } else if (job.kind == ExportKind::Trace) {
    const TraceJsonInfo info{s.model_label(), to_json(s.model().config), s.trace_label(), &s.tokenizer()};
    write_trace_json(path, s.trace(), info, job.values);
  } else {
    throw Error("a window or panel is captured after the frame is rendered");
  }
}

std::string check_export_path(const std::string& path) {
  if (path.empty()) return "no file name: type a path";
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) return path + " is a folder: add a file name";
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) return "the folder " + dir.string() + " does not exist: pick an existing folder";
  return "";
}

std::string describe_job(const ExportJob& job) {
  switch (job.kind) {
    case ExportKind::Matrix:
      return job.what.name + " (" + std::to_string(job.value.m.rows()) + "×" + std::to_string(job.value.m.cols()) +
             ") as " + format_title(job.format);
    case ExportKind::Window: return "The window as PNG";
    case ExportKind::Panel: return "The panel " + window_title(job.window) + " as PNG";
    case ExportKind::Trace: return "The trace as JSON";
  }
  return "";
}

std::string window_title(const std::string& name) { return name.substr(0, name.find("##")); }

namespace {

bool is_panel(const ImGuiWindow* w) {
  return (w->Active || w->WasActive) && !w->Hidden && !w->ParentWindow &&
         !(w->Flags & (ImGuiWindowFlags_ChildWindow | ImGuiWindowFlags_Tooltip | ImGuiWindowFlags_Popup)) &&
         !window_title(w->Name).empty() && std::string(w->Name) != "Debug##Default";
}

}  // namespace

std::vector<std::string> open_panels() {
  std::vector<std::string> out;
  for (const ImGuiWindow* w : ImGui::GetCurrentContext()->Windows)
    if (is_panel(w)) out.push_back(w->Name);
  return out;
}

PanelRect panel_rect(const std::string& name) {
  for (const ImGuiWindow* w : ImGui::GetCurrentContext()->Windows)
    if (is_panel(w) && (name == w->Name || name == window_title(w->Name)))
      return {true, w->Pos.x, w->Pos.y, w->Size.x, w->Size.y};
  return {};
}

}  // namespace sf
