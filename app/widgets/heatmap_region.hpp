// A block of a matrix's cells, which a heatmap frames (heatmap.hpp).
#pragma once

namespace sf {

// A block of cells (0-based; rows × cols of them), e.g. column t of K.
struct CellRegion {
  int row0 = 0, col0 = 0, rows = 1, cols = 1;
  bool operator==(const CellRegion&) const = default;
};

}  // namespace sf
