// What can be exported from the app and how (ExportFeature's jobs): a traced matrix with its
// labels and caption, the window or a panel (captured by the feature after rendering), the trace.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "app/logic/figure_export.hpp"
#include "core/trace/trace.hpp"

namespace sf {

class App;
struct HeatmapOptions;

enum class ExportKind { Matrix, Window, Panel, Trace };

struct ExportJob {
  ExportKind kind = ExportKind::Matrix;
  ExportFormat format = ExportFormat::Csv;  // Matrix
  Value value;                              // Matrix: a shared copy of the traced value
  ExportMatrix what;                        // Matrix: its labels and caption
  std::string window;                       // Panel: the ImGui window's name
  bool values = false;                      // Trace: with every value's numbers
};
inline ExportJob job_of_kind(ExportKind k) {
  ExportJob j;
  j.kind = k;
  return j;
}

// A matrix job for value v drawn with heatmap options o (its axes, scale and caption).
ExportJob matrix_job(const Value& v, const HeatmapOptions& o, ExportFormat f);
// The Tensor view's value at the shown event, or a value in scope there by name; nullopt with
// `error` (not in scope, a token sequence, no trace).
std::optional<ExportJob> shown_tensor_job(const App& app, ExportFormat f, std::string& error);
std::optional<ExportJob> value_job(const App& app, const std::string& name, ExportFormat f, std::string& error);
// Writes a Matrix or Trace job to path; throws sf::Error.
void run_export(const App& app, const ExportJob& job, const std::string& path);
// "" when path can be written to (a file name in an existing folder), else what is wrong.
std::string check_export_path(const std::string& path);
// "P (64×7) as CSV", "the window as PNG", "the panel Inspector as PNG", "the trace as JSON".
std::string describe_job(const ExportJob& job);

// The open top-level windows by ImGui name, and a window's title (its name before "##").
std::vector<std::string> open_panels();
std::string window_title(const std::string& name);
struct PanelRect {
  bool found = false;
  float x = 0, y = 0, w = 0, h = 0;
};
PanelRect panel_rect(const std::string& name);

}  // namespace sf
