// Reading the PyTorch reference data of tests/data/*.json (made by tests/reference/gen_*.py).
//
// Conventions of those files: matrices in the paper's shapes, rows × columns (tokens are
// columns), as nested row-major lists; −∞ is the string "-inf". Parameters (and their
// gradients) are keyed by the checkpoint names of core/params.cpp (ParamTable) with its shapes:
// [rows, cols] matrices, [rows] vectors, per-head tensors [H, rows, cols] (biases [H, rows]).
#pragma once
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/model/params.hpp"

namespace sf::test {

using json = nlohmann::json;

// tests/data/NAME, parsed.
inline json load_test_json(const std::string& name) {
  const std::string path = std::string(STEPFORMER_TEST_DATA) + "/" + name;
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return json::parse(ss.str());
}

inline double json_number(const json& v) {
  if (v.is_string()) {
    if (v.get<std::string>() != "-inf") throw std::runtime_error("unexpected string " + v.dump());
    return neg_inf<double>();
  }
  return v.get<double>();
}

// A rows × cols matrix from nested row-major lists (a flat list is one column).
inline Mat<double> json_matrix(const json& rows) {
  if (!rows.is_array() || rows.empty()) throw std::runtime_error("not a matrix");
  if (!rows[0].is_array()) {
    Mat<double> m(rows.size(), 1);
    for (size_t i = 0; i < rows.size(); ++i) m(i, 0) = json_number(rows[i]);
    return m;
  }
  Mat<double> m(rows.size(), rows[0].size());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].size() != rows[0].size()) throw std::runtime_error("ragged matrix");
    for (size_t j = 0; j < rows[i].size(); ++j) m(i, j) = json_number(rows[i][j]);
  }
  return m;
}

// Every tensor of the table from `tensors` ({name: {"shape", "data"}}) into a flat buffer in
// the table's layout (θ is column-major per matrix: element (row, col) of matrix h is at
// offset + h·rows·cols + col·rows + row). Throws when a name or shape does not match.
inline std::vector<double> json_tensors(const json& tensors, const ParamTable& table) {
  std::vector<double> flat(table.total(), 0.0);
  for (const ParamEntry& e : table.entries()) {
    const json& p = tensors.at(e.name);
    if (p.at("shape").get<std::vector<int64_t>>() != e.shape())
      throw std::runtime_error(e.name + ": shape " + p.at("shape").dump() + " differs from the table's");
    const json& data = p.at("data");
    for (int h = 0; h < e.count; ++h) {
      const Mat<double> m = json_matrix(e.count > 1 ? data.at(h) : data);  // per-head: [H, rows(, cols)]
      if (m.rows() != e.rows || m.cols() != e.cols) throw std::runtime_error(e.name + ": bad data size");
      for (int col = 0; col < e.cols; ++col)
        for (int row = 0; row < e.rows; ++row)
          flat[e.offset + static_cast<size_t>(h) * e.matrix_size() + static_cast<size_t>(col) * e.rows + row] =
              m(row, col);
    }
  }
  return flat;
}

// The same parameters as float; throws unless every value is a float32 (the generators round
// them so, so that a float θ holds exactly what the double reference used).
inline std::vector<float> exact_floats(const std::vector<double>& theta) {
  std::vector<float> out(theta.size());
  for (size_t k = 0; k < theta.size(); ++k) {
    out[k] = static_cast<float>(theta[k]);
    if (static_cast<double>(out[k]) != theta[k]) throw std::runtime_error("a parameter is not a float32 value");
  }
  return out;
}

}  // namespace sf::test
