// The pseudocode as a model with variants runs it (docs/variants.md): the paper's algorithm
// with every line a variant changes rewritten and MARKED (PseudoLine::variant names the
// variant and the seed that describes it), and the tensors the variants add or remove listed
// under the header (PseudoAlgorithm::variant_header). Line numbers stay the paper's, because
// the trace names lines by them. For the paper's configuration the result is exactly
// pseudocode(alg), with no marks. Pure data: no Eigen, no I/O.
#pragma once
#include "core/model/config.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace sf {

// Algorithm `alg` (1 … 15) as the model of configuration `c` runs it. The forward algorithms
// 8, 9 and 10 and the training algorithms 11, 12 and 13 change only for their own architecture
// (c.arch). `kv_cache`: the inference algorithms (14, 15) run each step's forward for the new
// column only (not in the paper). An unknown `alg` gives an algorithm numbered 0 with no lines.
PseudoAlgorithm pseudocode_for(int alg, const ModelConfig& c, bool kv_cache = false);

}  // namespace sf
