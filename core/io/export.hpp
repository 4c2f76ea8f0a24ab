// Exporting what the stepper shows, for numpy, pandas, spreadsheets and browsers
// (docs/export.md): a matrix as CSV, the whole trace as JSON. The .npy writer is core/io/npy.hpp.
//
// Numbers are written as the shortest decimal that reads back as exactly the same float32
// ("0.8", "-1.2345678"); −∞ is "-inf", +∞ "inf", NaN "nan" (what numpy, pandas and Python's
// float() read). Every file is written atomically: a failed write leaves an older file whole.
#pragma once
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/io/npy.hpp"
#include "core/model/types.hpp"
#include "core/trace/trace.hpp"

namespace sf {

class Tokenizer;

// The shortest decimal that reads back as exactly x; "-inf", "inf", "nan".
std::string export_number(float x);

// --- CSV (RFC 4180, UTF-8) ----------------------------------------------------------------

// One side of a matrix: the name of its index ("t_x", "token id"; empty: plain numbers) and,
// optionally, one label per index (token pieces).
struct CsvAxis {
  std::string index;
  std::vector<std::string> labels;
};
// The label of 0-based index i: "t_x=3 'l'", "token id=5", "3" (1-based, as in the paper).
std::string csv_axis_label(const CsvAxis& a, Eigen::Index i);
// A field quoted when it holds a comma, a quote, a newline or leading/trailing spaces.
std::string csv_field(const std::string& s);
// A header row (`corner`, then the column labels) and one row per matrix row (its label, then
// its values), lines ending in CRLF as RFC 4180 says.
std::string matrix_csv(const ConstMatRef& m, const std::string& corner, const CsvAxis& rows, const CsvAxis& cols);
void write_csv(const std::string& path, const ConstMatRef& m, const std::string& corner, const CsvAxis& rows,
               const CsvAxis& cols);

// A parsed CSV file (the tests read exports back with it): rows of fields, quotes removed.
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

// --- the trace as JSON --------------------------------------------------------------------

// What the trace JSON says about the run besides its events.
struct TraceJsonInfo {
  std::string model_label;   // "default.safetensors"
  std::string config_json;   // to_json(ModelConfig); empty: none
  std::string run;           // "Forward (Algorithm 10)", the trace's label
  const Tokenizer* tokenizer = nullptr;  // token labels; nullptr: ids only
};
// Every event (its algorithm, line, kind, depth, the indices in force, its label) with the
// values it bound (name, kind, shape, axes, and with `values` their numbers, row-major); the
// tokens of the run with their labels; the model's label and configuration. Streamed to a
// temporary file and renamed over `path` (a GPT-2 trace's values are hundreds of MB of text).
// Throws sf::Error when the file cannot be written.
void write_trace_json(const std::string& path, const Trace& t, const TraceJsonInfo& info, bool values);

}  // namespace sf
