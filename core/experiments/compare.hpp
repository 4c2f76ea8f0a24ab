// Comparing two traces of the same algorithm (issue 12, Experiments): A and B may be two prompts,
// two checkpoints of the same shape, or a run and its patched re-run. Events are matched one by one
// (by position when the traces have the same events, else Trace::find_matching) and values by name.
#pragma once
#include <string>
#include <vector>

#include "core/model/params.hpp"
#include "core/trace/trace.hpp"

namespace sf {

// B − A cell by cell (same shape); 0 where the cells are equal, −∞ = −∞ included (masked scores);
// ±∞ where only one side is −∞ (a toggled mask cell).
MatF difference(const TraceMat& a, const TraceMat& b);
// Cells where a and b differ (−∞ = −∞ counts as equal). Shapes must agree.
int changed_cells(const TraceMat& a, const TraceMat& b);

struct ValueDiff {
  size_t event_a = 0, event_b = 0;  // where A and B bind it
  std::string name;
  bool shape_differs = false;
  float max_abs = 0;  // max |B − A| (∞ when a cell is −∞ on one side only)
  int changed = 0;    // cells that differ
};

struct TraceComparison {
  size_t events = 0, matched = 0;  // events of A, and those matched in B with the same values' names
  std::vector<ValueDiff> diffs;    // every value that differs, in A's order
  float max_abs = 0;               // over every matched value
  MatF dP;                         // P_B − P_A (N_V, ℓ) of the returned P, empty when the shapes differ
  float max_abs_dP = 0;
};

TraceComparison compare_traces(const Trace& a, const Trace& b);

// The last value named P in a trace (the forward algorithm's return line), or nullptr.
const Value* returned_P(const Trace& t);

// One token's probability at a position before (A) and after (B).
struct TokenChange {
  int id = 0;  // 1-based token id
  float before = 0, after = 0;
};
// The k tokens with the largest max(P_A, P_B) in column t (0-based) of P_A and P_B (same shape).
std::vector<TokenChange> top_changes(const TraceMat& P_a, const TraceMat& P_b, int t, int k);

// "" when models a and b have the same parameter table (names and shapes), so that they can be
// compared value by value; else what differs, e.g. "checkpoints differ in shape: W_e is 16×12 in A, 16×20 in B".
std::string shape_mismatch(const Model& a, const Model& b);

}  // namespace sf
