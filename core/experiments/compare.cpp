#include "core/experiments/compare.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sf {

namespace {

std::string dims(const ParamEntry& e) {
  return (e.count > 1 ? std::to_string(e.count) + "×" : "") + std::to_string(e.rows) + "×" + std::to_string(e.cols);
}

// Whether events a and b are the same step of the same algorithm.
bool same_step(const Event& a, const Event& b) {
  return a.kind == b.kind && a.alg == b.alg && a.line == b.line && a.depth == b.depth && a.idx == b.idx;
}

bool same_events(const Trace& a, const Trace& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (!same_step(a.events[k], b.events[k])) return false;
  return true;
}

}  // namespace

MatF difference(const TraceMat& a, const TraceMat& b) {
  MatF d(a.rows(), a.cols());  // (rows, cols) of both
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    for (Eigen::Index i = 0; i < a.rows(); ++i) d(i, j) = a(i, j) == b(i, j) ? 0.0f : b(i, j) - a(i, j);
  return d;
}

int changed_cells(const TraceMat& a, const TraceMat& b) {
  int n = 0;
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    for (Eigen::Index i = 0; i < a.rows(); ++i) n += !(a(i, j) == b(i, j));
  return n;
}

TraceComparison compare_traces(const Trace& a, const Trace& b) {
  TraceComparison out;
  out.events = a.size();
  const bool aligned = same_events(a, b);
  for (size_t k = 0; k < a.size() && b.size() > 0; ++k) {
    const size_t j = aligned ? k : b.find_matching(a.events[k], a.caller_ref(k));
    if (!same_step(a.events[k], b.events[j])) continue;
    ++out.matched;
    for (const Value& va : a.events[k].values) {
      const auto vb = std::find_if(b.events[j].values.begin(), b.events[j].values.end(),
                                   [&](const Value& v) { return v.name == va.name; });
      if (vb == b.events[j].values.end() || va.kind == ValueKind::Tokens) continue;
      ValueDiff d{k, j, va.name};
      if (va.m.rows() != vb->m.rows() || va.m.cols() != vb->m.cols()) {
        d.shape_differs = true;
        out.diffs.push_back(d);
        continue;
      }
      d.changed = changed_cells(va.m, vb->m);
      if (d.changed == 0) continue;
      d.max_abs = difference(va.m, vb->m).cwiseAbs().maxCoeff();
      out.max_abs = std::max(out.max_abs, d.max_abs);
      out.diffs.push_back(d);
    }
  }
  const Value* Pa = returned_P(a);
  const Value* Pb = returned_P(b);
  if (Pa && Pb && Pa->m.rows() == Pb->m.rows() && Pa->m.cols() == Pb->m.cols()) {
    out.dP = difference(Pa->m, Pb->m);
    out.max_abs_dP = out.dP.size() ? out.dP.cwiseAbs().maxCoeff() : 0.0f;
  }
  return out;
}

const Value* returned_P(const Trace& t) {
  for (size_t k = t.size(); k-- > 0;)
    for (const Value& v : t.events[k].values)
      if (v.name == "P" && t.events[k].depth == 0) return &v;
  return nullptr;
}

std::vector<TokenChange> top_changes(const TraceMat& P_a, const TraceMat& P_b, int t, int k) {
  std::vector<int> ids(static_cast<size_t>(P_a.rows()));
  std::iota(ids.begin(), ids.end(), 0);
  auto top = [&](int i) { return std::max(P_a(i, t), P_b(i, t)); };
  const int n = std::min<int>(k, static_cast<int>(ids.size()));
  std::partial_sort(ids.begin(), ids.begin() + n, ids.end(), [&](int x, int y) { return top(x) > top(y); });
  std::vector<TokenChange> out;
  for (int i = 0; i < n; ++i) out.push_back({ids[i] + 1, P_a(ids[i], t), P_b(ids[i], t)});
  return out;
}

std::string shape_mismatch(const Model& a, const Model& b) {
  const auto& ea = a.table.entries();
  const auto& eb = b.table.entries();
  for (size_t i = 0; i < std::max(ea.size(), eb.size()); ++i) {
    if (i >= ea.size()) return "checkpoints differ in shape: B has " + eb[i].name + ", A does not";
    if (i >= eb.size()) return "checkpoints differ in shape: A has " + ea[i].name + ", B does not";
    if (ea[i].name != eb[i].name)
      return "checkpoints differ in shape: A's tensor " + ea[i].name + " is " + eb[i].name + " in B";
    if (ea[i].count != eb[i].count || ea[i].rows != eb[i].rows || ea[i].cols != eb[i].cols)
      return "checkpoints differ in shape: " + ea[i].name + " is " + dims(ea[i]) + " in A, " + dims(eb[i]) + " in B";
  }
  return "";
}

}  // namespace sf
