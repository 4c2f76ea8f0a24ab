#include "core/backprop/bound_value_key.hpp"

namespace sf {

namespace {

// The first Pass::Backward event of k's call stack other than k: the backward's top-level line.
LineRef backward_call(const Trace& tr, size_t k) {
  for (size_t j : tr.call_stack(k))
    if (j != k && tr.events[j].pass == Pass::Backward) return tr.events[j].ref();
  return {};
}

std::string line_words(LineRef r) {
  const std::string line = r.line == 0 ? "entry" : "line " + std::to_string(r.line);
  return "Algorithm " + std::to_string(r.alg) + (r.pass == Pass::Backward ? " adjoint of " : " ") + line;
}

}  // namespace

BoundValueKey bound_value_key(const Trace& tr, size_t k, const Value& v) {
  const Event& e = tr.events[k];
  return {backward_call(tr, k), e.ref(), e.idx.l, e.idx.h, e.idx.t, e.idx.i, e.idx.n, v.name};
}

std::string describe(const BoundValueKey& key) {
  std::string s = line_words(key.at);
  if (!key.call.none()) s += " (inside " + line_words(key.call) + ")";
  s += " l=" + std::to_string(key.l) + " h=" + std::to_string(key.h) + " t=" + std::to_string(key.t);
  if (key.i || key.n) s += " i=" + std::to_string(key.i) + " n=" + std::to_string(key.n);
  return s + " " + key.name;
}

}  // namespace sf
