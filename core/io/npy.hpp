// NumPy .npy (version 1.0) writer and reader for float32 matrices, row-major (C order),
// so that numpy.load gives the paper's shape, e.g. P as (N_V, ℓ).
#pragma once
#include <string>

#include "core/model/types.hpp"

namespace sf {
// Writes atomically (temporary file, then rename); throws sf::Error on failure.
void write_npy(const std::string& path, const MatF& m);
// Reads a float32 or float64 1-D or 2-D array; a 1-D array becomes one column.
MatF read_npy(const std::string& path);
}  // namespace sf
