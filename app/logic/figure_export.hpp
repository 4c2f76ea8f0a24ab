// One matrix exported in the format a user picks (CSV, NPY, PNG figure, SVG figure): what the
// heatmap right-click menu, File › Export and the export actions share. No ImGui, no GL.
#pragma once
#include <optional>
#include <string>

#include "app/logic/figure_layout.hpp"
#include "core/io/export.hpp"

namespace sf {

enum class ExportFormat { Csv, Npy, Png, Svg };
// "csv", "npy", "png", "svg" (also the file extension); nullopt for anything else.
std::optional<ExportFormat> parse_export_format(const std::string& s);
const char* extension(ExportFormat f);
// "CSV", "NPY", "PNG figure", "SVG figure".
const char* format_title(ExportFormat f);

// A matrix and how to label it: the figure's axes and caption, the CSV's index names and labels.
struct ExportMatrix {
  std::string name;  // the value's name (the CSV's corner cell), "P"
  FigureSpec figure;
  CsvAxis rows, cols;
};

// Writes m as `format` to path (atomically: on failure an existing file is left whole); throws sf::Error.
void export_matrix(ExportFormat format, const std::string& path, const MatView& m, const ExportMatrix& what);

// A file name (no folder, no extension) made from a figure caption in the paper's notation:
// "softmax(S/√d_attn), layer 2, head 3, Algorithm 4 line 6, prompt 'hello='" →
// "softmax_S_sqrt_d_attn_l2_h3" (the value and the indices in force; ASCII letters, digits, _).
std::string file_stem(const std::string& caption);

}  // namespace sf
