// Prints a core Trace as text, one event per line, indented by call depth:
//
//   Alg 10 DTransformer line 6 [l=1]  │ X ← X + MHAttention(X̃ | W_l, Mask[t, t′] = [[t ≤ t′]])  │ Mask ∈ {0,1}^{7×7}, X ∈ ℝ^{64×7}
//
// "call" marks an Enter event (the inputs bound), "line N ▸ label" a SubStep; a backward event
// (Pass::Backward) reads "Alg 4 Attention adjoint of line 6" with the text of Stepformer's backward
// listing (core/pseudocode/backward_listings.hpp, not in the paper); [l= h= t= i=]
// are the loop indices in force (1-based, only those set). Nested calls come before the line
// that made them, because a line event means "this line has run".
#pragma once
#include <iosfwd>

#include "core/trace/trace.hpp"

namespace sf::cli {

struct TracePrintOptions {
  // Show the top-level events, and the nested calls of layer 1 only for t ≤ 1 and h ≤ 1;
  // each run of hidden events becomes one "⋮ not shown: …" line.
  bool abbreviate = false;
  bool pseudocode = true;  // the text of each line, from core/pseudocode.hpp
};

void print_trace(std::ostream& os, const Trace& trace, const TracePrintOptions& opt = {});

// A blank line, "trace of Algorithm N: K events (…how to read it…)", then the whole trace.
void print_algorithm_trace(std::ostream& os, int alg, const Trace& trace);

}  // namespace sf::cli
