#include "app/logic/figure_export.hpp"

#include <cctype>
#include <utility>

#include "app/logic/figure_png.hpp"
#include "app/logic/figure_svg.hpp"
#include "core/io/npy.hpp"

namespace sf {

std::optional<ExportFormat> parse_export_format(const std::string& s) {
  for (ExportFormat f : {ExportFormat::Csv, ExportFormat::Npy, ExportFormat::Png, ExportFormat::Svg})
    if (s == extension(f)) return f;
  return std::nullopt;
}

const char* extension(ExportFormat f) {
  switch (f) {
    case ExportFormat::Csv: return "csv";
    case ExportFormat::Npy: return "npy";
    case ExportFormat::Png: return "png";
    case ExportFormat::Svg: return "svg";
  }
  return "csv";
}

const char* format_title(ExportFormat f) {
  switch (f) {
    case ExportFormat::Csv: return "CSV";
    case ExportFormat::Npy: return "NPY";
    case ExportFormat::Png: return "PNG figure";
    case ExportFormat::Svg: return "SVG figure";
  }
  return "CSV";
}

void export_matrix(ExportFormat format, const std::string& path, const MatView& m, const ExportMatrix& what) {
  switch (format) {
    case ExportFormat::Csv: write_csv(path, m, what.name, what.rows, what.cols); break;
    case ExportFormat::Npy: write_npy(path, m); break;
    case ExportFormat::Png: write_png_figure(path, m, what.figure); break;
    case ExportFormat::Svg: write_svg_figure(path, m, what.figure); break;
  }
}

std::string file_stem(const std::string& caption) {
  // The value and its indices: the caption up to its algorithm or prompt.
  std::string s = caption;
  for (const char* cut : {", Algorithm", ", prompt", ", context"})
    if (const size_t p = s.find(cut); p != std::string::npos) s = s.substr(0, p);
  for (const auto& [from, to] : {std::pair{"layer ", "l"}, {"head ", "h"}, {"t = ", "t"}, {"step ", "i"},
                                 {"√", "sqrt_"}, {"ℓ", "l"}, {"ᵀ", "T"}, {"\u0303", "_tilde"}, {"θ", "theta"},
                                 {"γ", "gamma"}, {"β", "beta"}, {"τ", "tau"}, {"∞", "inf"}})
    for (size_t p; (p = s.find(from)) != std::string::npos;) s.replace(p, std::string(from).size(), to);
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c)) out += static_cast<char>(c);
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "value" : out;
}

}  // namespace sf
