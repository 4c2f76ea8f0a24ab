// What identifies a value the traced backward binds (core/backprop/, Stepformer's backward listings:
// not in the paper): ONE definition, used by the torch reference test (tests/core/test_backprop_torch.cpp,
// its data keyed the same way by tests/reference/gen_backprop_reference.py) and by the uniqueness tests.
//
// The contract of issue 24 keyed a value by (alg, line, Pass::Backward, l, h, t, name). That repeats:
// Algorithm 8's decoder layer l runs Algorithm 5's adjoint for its self-attention (line 14) and its
// cross-attention (line 16) with the same l; its encoder's layer l and decoder's layer l both do; BERT's
// Algorithm 6 frames run for the stack's final norm (line 10) and for line 11 with the same t. What
// tells them apart is the line of the architecture's backward (Algorithm 8, 9 or 10's adjoint) whose
// call the event runs inside, so the key carries it first:
//   (call, at, l, h, t, i, n, name)
//   call  the backward's top-level line the event runs inside: the first Pass::Backward event of its
//         call stack (e.g. Algorithm 10's adjoint of line 6 for an Attention adjoint event of layer l);
//         none for that frame's own events (its lines, the loss line's adjoint, its Enter). A backward
//         nested in a training algorithm (Algorithm 13 line 6) keys as one run on its own.
//   at    the event's own line, Event::ref() (line 0: the frame's Enter, which binds ∇ of the frame's
//         output and the forward values it reads)
//   l, h, t, i, n  the loop indices in force (Indices; i, n: a training trace's epoch and sequence)
//   name  the value's name, "∇" + the forward name, a partial's own name ("∇X (…)") or a forward value
// Within one backward, one key names one value: a sub-step may show a value its line binds again, but
// never another one under the same key (tests/core/test_backprop_keys.cpp).
#pragma once
#include <string>

#include "core/trace/trace.hpp"

namespace sf {

struct BoundValueKey {
  LineRef call;
  LineRef at;
  int l = 0, h = 0, t = 0, i = 0, n = 0;
  std::string name;
  friend auto operator<=>(const BoundValueKey&, const BoundValueKey&) = default;
  friend bool operator==(const BoundValueKey&, const BoundValueKey&) = default;
};

// The key of value v bound by event k of tr (k a Pass::Backward event).
BoundValueKey bound_value_key(const Trace& tr, size_t k, const Value& v);

// One line for a message: "Algorithm 4 adjoint of line 6 (inside Algorithm 8 adjoint of line 16) l=2 h=1 t=0 ∇S".
std::string describe(const BoundValueKey& key);

}  // namespace sf
