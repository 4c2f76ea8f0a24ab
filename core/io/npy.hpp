// NumPy .npy (version 1.0) writer and reader for float32 matrices, row-major (C order),
// so that numpy.load gives the paper's shape, e.g. P as (N_V, ℓ). The bits are written as they
// are: −∞ (masked scores), +∞ and NaN read back as themselves.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/model/types.hpp"

namespace sf {
// A read-only matrix of any strides: a MatF, or a trace value (a view of Wᵀ into θ included).
using ConstMatRef = Eigen::Ref<const MatF, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;
// Writes atomically (temporary file, then rename); throws sf::Error on failure.
void write_npy(const std::string& path, const ConstMatRef& m);
// A float64 array of any shape ({} for a scalar, {n} for a vector, {H, rows, cols}, …): `data` holds
// its elements in C order (the last index fastest, as numpy lays them out). Written atomically;
// throws sf::Error on failure or when data's size is not the shape's product.
void write_npy(const std::string& path, const std::vector<int64_t>& shape, const std::vector<double>& data);
// Reads a float32 or float64 1-D or 2-D array; a 1-D array becomes one column.
MatF read_npy(const std::string& path);
}  // namespace sf
