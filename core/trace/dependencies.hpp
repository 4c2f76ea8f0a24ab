// Dependency tracing: for one cell of a value a trace event bound, the cells of EARLIER values it
// was computed from, by the rule of the pseudocode line that bound it (S[t_z, t_x] ← K[:, t_z] and
// Q[:, t_x]; a layer-norm output's column t ← its input's column t; X[:, t] after a causal
// attention line ← X̃[:, 1…t]), and transitively the input tokens it depends on through the
// masks (P[:, t] of a GPT ← x[1…t]). The rules are read off the pseudocode (docs/study.md); they
// are checked by perturbation in tests/core/test_dependencies.cpp. Indices are 0-based here;
// the texts are in the paper's 1-based notation.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/trace/trace.hpp"

namespace sf {

// A block of a matrix's cells (0-based): rows row0…row0+rows−1, columns col0…col0+cols−1.
struct CellBlock {
  int row0 = 0, col0 = 0, rows = 1, cols = 1;
  bool operator==(const CellBlock&) const = default;
};

// An earlier value the cell was computed from, and which of its cells.
struct CellSource {
  std::string value;  // its name as bound ("K", "X̃", "W_q", "x")
  size_t event = 0;   // the event that bound it (an Enter event for a frame input)
  std::vector<CellBlock> blocks;
  std::string text;   // the cells in the paper's notation, e.g. "K[:, 3]", "W_q[2, :]", "x[1…4]"
};

struct CellDependencies {
  bool rule = false;                 // false: no rule for this line (`reason` says so)
  std::string reason;                // e.g. "S[3, 5] = K[:, 3] · Q[:, 5]"
  std::vector<CellSource> sources;   // in the order the reason names them
  std::string tokens;                // transitively, the input tokens through the masks ("x[1…3]"); "" when none
  // "← K[:, 3] and Q[:, 5]" (or the reason when there is no rule).
  std::string summary() const;
};

// The dependencies of cell (row, col) (0-based) of `value` as event k bound it. Sources are
// looked up in k's frame (the latest binding before k of a name k rebinds, e.g. line 5's S ←
// line 4's S), then in the calling frames (W_e for Algorithm 1). A cell outside the value, or a
// value k does not bind, gives rule = false with the reason.
CellDependencies cell_dependencies(const Trace& trace, size_t k, const std::string& value, int row, int col);

// The input token positions (1-based) of the forward pass (Algorithms 10, 9, 8, also as called
// by 13, 12, 11, 14 and 15) that column `col` of `value` at event k depends on, following the
// line rules back through the masks: {"x": […], "z": […]} (names as bound by the forward
// algorithm's Enter event). Empty when k is not in a forward pass's frame.
struct TokenDependencies {
  std::vector<int> x, z;
  bool empty() const { return x.empty() && z.empty(); }
};
TokenDependencies token_dependencies(const Trace& trace, size_t k, const std::string& value, int col);

// The forward counterpart of a gradient (issue 24, not in the paper): for a value ∇N that backward
// event k binds (an adjoint line of Stepformer's backward listing), the value N it is the gradient
// of. It is looked up in the matching forward frame: same algorithm and loop indices (l, h, t, i,
// n), called from the forward line whose adjoint called k's frame; there, N as the forward line
// k.line read it (its latest binding before that line runs, else what that line itself binds, e.g.
// softmax(S/√d_attn) inside line 6). The adjoint frame's Enter (line 0) pairs with what the forward
// frame returned. nullopt when k is not a backward event, the name has no "∇", or nothing matches.
struct ForwardValue {
  const Value* value = nullptr;
  size_t event = 0;  // the forward event that bound it
};
// The Enter event of the forward frame matching backward event k's frame; SIZE_MAX when none.
size_t matching_forward_frame(const Trace& trace, size_t k);
std::optional<ForwardValue> forward_counterpart(const Trace& trace, size_t k, const std::string& grad_name);
// The same in `forward_frame` (matching_forward_frame(trace, k), when the caller has it already).
std::optional<ForwardValue> forward_counterpart_in(const Trace& trace, size_t k, const std::string& grad_name,
                                                   size_t forward_frame);
// "∇S" → "S", "∇X̃ (from line 3)" → "X̃": the forward name a gradient's name is of; "" when the
// name has no leading ∇.
std::string gradient_of(const std::string& grad_name);

// "x[1…3]", "x[1, 3, 5]" (1-based positions).
std::string positions_text(const std::string& name, const std::vector<int>& positions);

}  // namespace sf
