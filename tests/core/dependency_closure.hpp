// For the dependency tests (test_dependencies.cpp, test_backward_dependencies.cpp): the frame inputs a
// cell is computed from, found by following the rules of core/trace/dependencies.hpp back.
#pragma once
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

#include "core/trace/dependencies.hpp"

namespace sf::test {

using DependencyCell = std::tuple<std::string, int, int>;  // an input's name and 0-based cell

// The inputs (cells of values the Enter event `frame` binds) that cell (r, c) of `value` at event k
// is computed from, following the rules back through the frame's earlier lines and sub-steps.
inline void dependency_closure(const Trace& tr, size_t k, const std::string& value, int r, int c, size_t frame,
                               std::set<DependencyCell>& inputs,
                               std::set<std::tuple<size_t, std::string, int, int>>& seen) {
  if (!seen.insert({k, value, r, c}).second) return;
  const CellDependencies d = cell_dependencies(tr, k, value, r, c);
  ASSERT_TRUE(d.rule) << d.reason;
  for (const CellSource& s : d.sources)
    for (const CellBlock& b : s.blocks)
      for (int i = b.row0; i < b.row0 + b.rows; ++i)
        for (int j = b.col0; j < b.col0 + b.cols; ++j)
          if (s.event == frame)
            inputs.insert({s.value, i, j});
          else
            dependency_closure(tr, s.event, s.value, i, j, frame, inputs, seen);
}

inline std::set<DependencyCell> dependency_inputs(const Trace& tr, size_t k, const std::string& value, int r, int c,
                                                  size_t frame) {
  std::set<DependencyCell> in;
  std::set<std::tuple<size_t, std::string, int, int>> seen;
  dependency_closure(tr, k, value, r, c, frame, in, seen);
  return in;
}

}  // namespace sf::test
