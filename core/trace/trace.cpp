#include "core/trace/trace.hpp"

#include "core/model/params.hpp"

#include <algorithm>
#include <cstdlib>
#include <unordered_set>

namespace sf {

TraceMat::TraceMat(MatF m) : TraceMat() {
  own_ = std::make_shared<const MatF>(std::move(m));
  bind(own_->data(), own_->rows(), own_->cols(), own_->rows(), 1);
}

TraceMat TraceMat::view(const float* data, Eigen::Index rows, Eigen::Index cols, bool transposed) {
  TraceMat v;
  if (transposed)  // Wᵀ (cols, rows): its (i, j) is W(j, i), at data[i·rows + j]
    v.bind(data, cols, rows, 1, rows);
  else
    v.bind(data, rows, cols, rows, 1);
  return v;
}

TraceMat& TraceMat::operator=(const TraceMat& o) {
  own_ = o.own_;
  bind(o.data(), o.rows(), o.cols(), o.outerStride(), o.innerStride());
  return *this;
}

void TraceMat::bind(const float* data, Eigen::Index rows, Eigen::Index cols, Eigen::Index outer, Eigen::Index inner) {
  // Eigen's way to re-point a Map: construct it again in place (a Map has no storage to free).
  new (static_cast<TraceMapBase*>(this))
      TraceMapBase(data, rows, cols, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(std::max<Eigen::Index>(outer, 1), inner));
}

size_t Trace::bytes() const {
  size_t n = 0;
  std::unordered_set<const void*> seen;
  for (const Tokens& s : sequences) n += s.size() * sizeof(int);
  for (const Event& e : events)
    for (const Value& v : e.values) {
      n += v.tokens.size() * sizeof(int);
      if (v.m.bytes() > 0 && seen.insert(v.m.storage()).second) n += v.m.bytes();
    }
  return n;
}

Value tscalar(std::string name, double x) {
  Value v;
  v.name = std::move(name);
  v.kind = ValueKind::Scalar;
  v.m = TraceMat(MatF::Constant(1, 1, static_cast<float>(x)));
  return v;
}

Value ttokens(std::string name, const Tokens& t) {
  Value v;
  v.name = std::move(name);
  v.kind = ValueKind::Tokens;
  v.tokens = t;
  return v;
}

Value tmask(std::string name, const Mask& m, Axis rows, Axis cols) {
  Value v;
  v.name = std::move(name);
  v.kind = ValueKind::Mask;
  v.m = TraceMat(m.cast<float>());
  v.rows = rows;
  v.cols = cols;
  return v;
}

Value with_note(Value v, std::string note) {
  v.note = std::move(note);
  return v;
}

Event Tracer::make(EventKind kind, int alg, int line, int depth, Pass pass) {
  Event e;
  e.kind = kind;
  e.alg = alg;
  e.line = line;
  e.pass = pass;
  e.depth = depth;
  e.idx = idx_;
  e.seq_x = seq_x_;
  e.seq_z = seq_z_;
  return e;
}

ParamRef ParamSource::find(const void* data, size_t bytes) const {
  if (!table || bytes != elem_bytes) return {};
  const auto* p = static_cast<const char*>(data);
  const auto* b = static_cast<const char*>(base);
  if (p < b || p >= b + table->total() * elem_bytes) return {};
  const size_t d = static_cast<size_t>(p - b);
  if (d % elem_bytes != 0) return {};
  const size_t e = d / elem_bytes;  // the element offset into the flat buffer
  const std::vector<ParamEntry>& entries = table->entries();
  for (size_t i = 0; i < entries.size(); ++i) {
    const ParamEntry& entry = entries[i];
    if (e < entry.offset || e >= entry.offset + entry.size()) continue;
    const int head = entry.count > 1 ? static_cast<int>((e - entry.offset) / entry.matrix_size()) + 1 : 0;
    return {static_cast<int>(i), head};
  }
  return {};
}

ParamRef Tracer::param_ref(const void* data, size_t elem_bytes) const {
  for (auto s = param_sources_.rbegin(); s != param_sources_.rend(); ++s)
    if (const ParamRef r = s->find(data, elem_bytes); r.param >= 0) return r;
  return {};
}

int Tracer::add_sequence(const Tokens& t) {
  auto& seqs = trace_.sequences;
  for (size_t i = seqs.size(); i-- > 0 && i + 4 >= seqs.size();)  // the recent ones: reuse a repeat
    if (seqs[i] == t) return static_cast<int>(i);
  seqs.push_back(t);
  return static_cast<int>(seqs.size()) - 1;
}

void Tracer::enter(int alg, std::vector<Value> inputs) {
  saved_.push_back({idx_, seq_x_, seq_z_});
  ++depth_;
  const Tokens *x = nullptr, *z = nullptr;
  for (const Value& v : inputs) {
    if (v.kind != ValueKind::Tokens) continue;
    if (v.name == "x") x = &v.tokens;
    if (v.name == "z") z = &v.tokens;
  }
  if (x) set_sequences(add_sequence(*x), z ? add_sequence(*z) : add_sequence(*x));
  Event e = make(EventKind::Enter, alg, 0, depth_, pass_);
  e.values = std::move(inputs);
  trace_.events.push_back(std::move(e));
}

void Tracer::leave() {
  --depth_;
  idx_ = saved_.back().idx;
  set_sequences(saved_.back().seq_x, saved_.back().seq_z);
  saved_.pop_back();
}

Pass Tracer::pass_of(LineRef ref) const { return ref.pass == Pass::Backward ? Pass::Backward : pass_; }

void Tracer::line(LineRef ref, std::vector<Value> values) {
  Event e = make(EventKind::Line, ref.alg, ref.line, depth_, pass_of(ref));
  e.values = std::move(values);
  trace_.events.push_back(std::move(e));
}

void Tracer::substep(LineRef ref, std::string label, std::vector<Value> values) {
  Event e = make(EventKind::SubStep, ref.alg, ref.line, depth_ + 1, pass_of(ref));
  e.label = std::move(label);
  e.values = std::move(values);
  trace_.events.push_back(std::move(e));
}

const Tokens* Trace::axis_tokens(size_t k, Axis a) const {
  if (k >= events.size()) return nullptr;
  const int s = a == Axis::TokenZ ? events[k].seq_z : a == Axis::TokenX ? events[k].seq_x : -1;
  return s >= 0 && s < static_cast<int>(sequences.size()) ? &sequences[s] : nullptr;
}

size_t Trace::frame_start(size_t k) const {
  if (k >= size()) return 0;
  const int d = events[k].kind == EventKind::SubStep ? events[k].depth - 1 : events[k].depth;
  for (size_t j = k + 1; j-- > 0;)
    if (events[j].depth == d && events[j].kind == EventKind::Enter) return j;
  return 0;
}

size_t Trace::caller_line(size_t k) const {
  if (k >= size()) return size();
  const int d = events[k].kind == EventKind::SubStep ? events[k].depth - 1 : events[k].depth;
  for (size_t j = k + 1; j < size(); ++j)
    if (events[j].depth < d) return j;
  return size();
}

std::vector<size_t> Trace::call_stack(size_t k) const {
  std::vector<size_t> out;
  if (k >= size()) return out;
  out.push_back(k);
  size_t cur = k;
  while (true) {
    const size_t c = caller_line(cur);
    if (c >= size()) break;
    out.push_back(c);
    cur = c;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<const Value*> Trace::scope(size_t k) const {
  std::vector<const Value*> out;
  if (k >= size()) return out;
  const size_t start = frame_start(k);
  const int d = events[start].depth;
  auto bind = [&](const Value& v) {
    for (auto& p : out)
      if (p->name == v.name) {
        p = &v;
        return;
      }
    out.push_back(&v);
  };
  // At a sub-step, the earlier sub-steps of the same line are in scope too.
  size_t first_sub = k + 1;
  if (events[k].kind == EventKind::SubStep)
    for (first_sub = k; first_sub > start && events[first_sub - 1].kind == EventKind::SubStep &&
                        events[first_sub - 1].depth == events[k].depth;)
      --first_sub;
  for (size_t j = start; j <= k; ++j) {
    const Event& e = events[j];
    if (e.depth == d || j >= first_sub)
      for (const auto& v : e.values) bind(v);
  }
  return out;
}

std::vector<std::string> Trace::changed(size_t k) const {
  std::vector<std::string> out;
  if (k < size())
    for (const auto& v : events[k].values) out.push_back(v.name);
  return out;
}

size_t Trace::step_over(size_t k) const {
  if (k >= size()) return k;
  const int d = events[k].depth;
  for (size_t j = k + 1; j < size(); ++j)
    if (events[j].depth <= d) return j;
  return k;
}

size_t Trace::step_out(size_t k) const {
  if (k >= size()) return k;
  const size_t c = caller_line(k);
  return c < size() ? c : size() - 1;
}

size_t Trace::step_back_over(size_t k) const {
  if (k == 0 || k >= size()) return 0;
  const int d = events[k].depth;
  for (size_t j = k; j-- > 0;)
    if (events[j].depth <= d) return j;
  return 0;
}

size_t Trace::continue_to(size_t k, const std::vector<LineRef>& breakpoints) const {
  for (size_t j = k + 1; j < size(); ++j) {
    const Event& e = events[j];
    if (e.kind == EventKind::SubStep) continue;
    if (std::find(breakpoints.begin(), breakpoints.end(), e.ref()) != breakpoints.end()) return j;
  }
  return size() ? size() - 1 : 0;
}

LineRef Trace::caller_ref(size_t k) const {
  const size_t c = caller_line(k);
  return c < size() ? events[c].ref() : LineRef{};
}

LineRef Trace::outer_caller_ref(size_t k) const {
  const std::vector<size_t> stack = call_stack(k);
  return stack.size() > 1 ? events[stack[0]].ref() : LineRef{};
}

size_t Trace::find_matching(const Event& e, LineRef caller) const {
  size_t best = 0;
  int best_score = -1;
  for (size_t j = 0; j < size(); ++j) {
    const Event& c = events[j];
    int score = 0;
    if (c.alg == e.alg) score += 8;
    if (c.ref() == e.ref()) score += 8;  // the same line of the same listing (forward or backward)
    if (c.kind == e.kind) score += 2;
    if (c.depth == e.depth) score += 2;
    if (c.label == e.label) score += 1;
    if (c.idx == e.idx) score += 16;
    else if (c.idx.l == e.idx.l && c.idx.h == e.idx.h && c.idx.i == e.idx.i) score += 4;
    // Only candidates that already match well pay for the caller lookup (a forward scan).
    if (score >= 36 && !caller.none() && caller_ref(j) == caller) score += 4;
    if (score > best_score) {
      best_score = score;
      best = j;
    }
  }
  return best;
}

}  // namespace sf
