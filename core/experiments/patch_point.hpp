// Patch points: where an experiment (core/experiments/interventions.hpp) may change a value while
// a forward pass (Algorithms 10, 9, 8 and the Algorithms 4 and 5 they call) runs.
//
// Each patch point sits right after the pseudocode line that computes the value and before the
// trace binds it, so the patched run is traced like any run and everything downstream is
// recomputed from the changed value; nothing upstream changes. Without experiments (the fast
// path, training) a patch point costs one null-pointer check.
#pragma once
#include <string>

#include "core/model/types.hpp"
#include "core/trace/vocabulary.hpp"

namespace sf {

class Patches;  // the experiments in force (core/experiments/interventions.hpp)

// A value as the trace names it: the forward algorithm's line that calls MHAttention (`call`,
// e.g. lines::d_transformer::attention, lines::ed_transformer::cross_attention; none for the forward
// algorithm's own lines), the algorithm and line that bind it, the layer l and head h (0: none)
// and the value's name ("Q", "S", "softmax(S/√d_attn)", "Ṽ", "Mask", "X", "X̃", "Z", …).
struct PatchPoint {
  LineRef call{};
  int alg = 0, line = 0, l = 0, h = 0;
  std::string name;
  bool operator==(const PatchPoint&) const = default;
};

// Where a forward pass is, for its patch points: the experiments (nullptr: none), the calling
// line of the forward algorithm (inside Algorithms 4 and 5), the layer and the head.
struct PatchSite {
  const Patches* patches = nullptr;
  LineRef call{};
  int l = 0, h = 0;
  PatchSite at(LineRef call_, int l_, int h_) const { return {patches, call_, l_, h_}; }
};

// Applies the experiments at `at` to the value (core/experiments/interventions.cpp).
void apply_patches(const Patches& p, const PatchPoint& at, MatF& value);
void apply_patches(const Patches& p, const PatchPoint& at, Mat<double>& value);
void apply_patches(const Patches& p, const PatchPoint& at, Mask& value);

// At a patch point: lets the experiments in force change `value` (the line and name that bind it
// in the trace); nothing at all when there are none.
template <class M>
inline void patch(const PatchSite& s, LineRef line, const char* name, M& value) {
  if (s.patches) apply_patches(*s.patches, PatchPoint{s.call, line.alg, line.line, s.l, s.h, name}, value);
}

}  // namespace sf
