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

// Tolerances against these references. Their models are small (d_e = 8, d_mlp ≤ 16, H = 2, at most
// 2 + 2 layers, ℓ ≤ 8), with parameters that are float32 values of size ≤ 2.5; intermediates reach 18
// (attention scores; everything else ≤ 4.4, P ≤ 1). A value is at most D ≈ 2·(2L + 1) + 2 ≈ 24
// chained sums deep (forward and backward), each of n ≤ 16 terms.
// - In double (u = 2⁻⁵³ ≈ 1.1e-16) both sides compute the same operations in another order. A sum
//   is within γ_16·Σ|terms| ≤ 16u·16·18·2.5 ≈ 2e-12 of exact; carried through D sums at a gain of
//   about 1 (layer norm renormalises, softmax averages) that is ≤ 5e-11: kRefDouble = 1e-10 (P and
//   every intermediate), and 1e-9 relative for a gradient, whose small entries cancel more.
// - In float (u = 2⁻²⁴ ≈ 6e-8) only core's side rounds (the reference is exact to 1e-10). The worst
//   case (the bound above at float's u) is never approached: each addition rounds by ≤ u of its
//   partial sum, independently and with either sign (Higham & Mary 2019), so a sum of n terms has a
//   relative error of σ ≈ u·√(n/3) ≤ 1.4e-7, and D of them in quadrature ≈ 7e-7 relative. On P
//   (≤ 1; softmax moves p by ≤ ½·max|δlogit|, logits ≤ 4.4) that is ≲ 1.5e-6: kRefFloat = 1e-5 is
//   6σ. On the scores (≤ 18, but only ≈ 12 sums deep: ≈ 5e-7 relative, 9e-6) the same 1e-5 is
//   tight; it holds at every SIMD width scripts/isa_tests.sh runs (the scores' partial sums are
//   smaller than 18). A gradient's error relative to its 2-norm: the same 7e-7, ×10 for the
//   cancellation in a gradient's sums: kRefFloatGradient = 1e-4 relative.
// A real fault (a transposed weight, a wrong mask, a missed scale) is off by O(0.1) relative.
constexpr double kRefDouble = 1e-10;
constexpr double kRefDoubleGradient = 1e-9;
constexpr double kRefFloat = 1e-5;
constexpr double kRefFloatGradient = 1e-4;

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
