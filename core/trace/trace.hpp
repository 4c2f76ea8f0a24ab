// The trace: what each executed pseudocode line bound, recorded as events.
//
// Every function that implements a paper algorithm takes a `Tracer*`; nullptr means tracing
// is off (no copies, full speed). With a tracer, it emits:
//   - an Enter event when the algorithm is called (line 0: its inputs and parameters bound),
//   - a Line event when a pseudocode line has finished, with copies of what it assigned,
//   - SubStep events (one level deeper) inside a line that does several things
//     (Algorithm 4 line 6: S/√d_attn, its column softmax, V·softmax(…)).
// Calls made while a line runs (layer_norm for each column t of a `for t ∈ [ℓ]` line,
// Attention for each head) appear as nested events (depth + 1) BEFORE that line's event,
// because a Line event means "this line has run". So stepping over a line skips its nested
// events, and the caller line of a nested frame is the next event at a smaller depth.
// The backward pass (core/backprop/, Stepformer's backward listings: not in the paper) is traced the
// same way, each event in Pass::Backward (made inside a TraceBackward scope): "adjoint of line n" of
// algorithm alg, its frames nested like the forward's (Algorithm 13's line 6 calls Algorithm 10's).
//
// How values are held (TraceMat): every computed value is COPIED into the trace (the trace must
// show it as it was at that line). A parameter tensor of θ (W_e, W_q, γ, …) is copied too, unless
// the Tracer was made with ParamBinding::View: then tparam() binds it BY REFERENCE, a read-only
// view into θ's storage with no copy (GPT-2 124M: W_e alone is 154 MB, and the tied "W_u = W_eᵀ"
// would be another 154 MB; the trace of a 32-token forward drops from over 600 MB to the
// activations). Views are opt-in because they read θ as it is NOW:
//   RULE for whoever keeps a Trace made with ParamBinding::View (the app): the model whose θ it
//   viewed must stay alive and UNCHANGED while the trace is kept. Before θ is updated (a training
//   step, loading weights into the same storage) or the model is freed, drop the trace or re-run
//   it. Trace::holds_views says whether a trace has any view.
// Training traces are always safe: Algorithms 11–13 bind θ with copies whatever the Tracer's mode
// (TraceParamCopies), because their update line changes θ while the trace lives, and the values
// their lines bind (e.g. "θ (before)") are copies made when the line runs.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/model/types.hpp"
#include "core/trace/vocabulary.hpp"

namespace sf {

class ParamTable;

// Loop indices in force, 1-based as in the paper; 0 means "not in force".
struct Indices {
  int l = 0;  // layer
  int h = 0;  // head
  int t = 0;  // token position
  int i = 0;  // generation step (Alg. 14) or epoch (Alg. 13)
  int n = 0;  // training sequence (Alg. 13)
  bool operator==(const Indices&) const = default;
};

// What the rows or columns of a value index, so that a viewer can label them.
enum class Axis { Feature, TokenX, TokenZ, Vocab, Head };

enum class ValueKind { Matrix, Scalar, Tokens, Mask };

// A value's matrix as the trace holds it: read-only and column-major, either OWNED (a copy, kept
// by a shared_ptr that copies of the Value share) or a VIEW into storage owned elsewhere (a
// parameter of θ bound by reference; see the top of this file). It reads as an Eigen matrix
// (m(i, j), m.col(t), m.rows(), m == …, MatF x = m); a view of Wᵀ reads W's storage through
// strides (rows and columns swapped), so data() is contiguous only where inner_stride() == 1.
using TraceMapBase = Eigen::Map<const MatF, Eigen::Unaligned, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;
class TraceMat : public TraceMapBase {
 public:
  TraceMat() : TraceMapBase(nullptr, 0, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(0, 1)) {}
  TraceMat(MatF m);  // owns m (moved in)
  // A view of the column-major (rows, cols) matrix at `data`, or of its transpose (cols, rows).
  static TraceMat view(const float* data, Eigen::Index rows, Eigen::Index cols, bool transposed = false);
  TraceMat(const TraceMat& o) : TraceMat() { *this = o; }
  TraceMat& operator=(const TraceMat& o);
  bool is_view() const { return !own_ && size() > 0; }
  // Bytes of the storage this value owns (0 for a view); storage() identifies it, to count a
  // matrix shared by several Values once.
  size_t bytes() const { return own_ ? static_cast<size_t>(own_->size()) * sizeof(float) : 0; }
  const void* storage() const { return own_.get(); }

 private:
  void bind(const float* data, Eigen::Index rows, Eigen::Index cols, Eigen::Index outer, Eigen::Index inner);
  std::shared_ptr<const MatF> own_;
};

struct Value {
  std::string name;  // the paper's name: "Q", "S", "X̃", "m", "P", …
  ValueKind kind = ValueKind::Matrix;
  TraceMat m;        // Matrix, Scalar (1×1) and Mask (0/1) values; a vector is one column
  Tokens tokens;     // Tokens values (1-based ids)
  Axis rows = Axis::Feature, cols = Axis::Feature;
  std::string note;  // optional: why this value looks as it does (e.g. the ε the paper lacks)
  // Which tensor of θ this value is, when it is one (tparam inside a TraceParameters scope sets
  // both from where its storage lies, never from its name): `param` indexes ParamTable::entries()
  // (−1: not a parameter of θ, e.g. an activation, or a sinusoid computed rather than stored);
  // `head` is the 1-based head within a per-head entry (count > 1), 0 for a whole entry. With
  // H_kv < H the heads that share a key/value head view the same W_k, b_k, W_v, b_v storage, so
  // their `head` is the STORAGE's head (the shared key/value head, 1 … H_kv), not the query head
  // (and 0 when H_kv = 1: the entry is then one matrix).
  // The tied "W_u = W_eᵀ" is W_e's entry.
  int param = -1;
  int head = 0;
};

enum class EventKind { Enter, Line, SubStep };

struct Event {
  EventKind kind = EventKind::Line;
  int alg = 0;   // the paper's algorithm number (1–15)
  int line = 0;  // the paper's line number; 0 for Enter
  // Forward: a line of the paper's pseudocode. Backward: "adjoint of line `line`" of Stepformer's
  // backward listing of algorithm `alg` (not in the paper; core/backprop/), made inside a
  // TraceBackward scope. Nesting, depth and stepping treat both passes alike.
  Pass pass = Pass::Forward;
  int depth = 0;
  LineRef ref() const { return {alg, line, pass}; }  // the line this event is at (line 0: the Enter)
  Indices idx;
  std::string label;  // SubStep only: what this part of the line computes
  std::vector<Value> values;
  // The token sequences that label this event's Axis::TokenX and Axis::TokenZ axes: indices
  // into Trace::sequences, −1 when none is in force (see TraceSequences).
  int seq_x = -1, seq_z = -1;
};

// A finished trace with the navigation a stepper needs (no recomputation).
class Trace {
 public:
  std::vector<Event> events;
  // Whether some value is a view into θ (a Tracer with ParamBinding::View bound a parameter): the
  // model must then outlive the trace, unchanged (see the top of this file).
  bool holds_views = false;
  // Memory held by the values: owned matrices (each counted once) and token lists; views cost 0.
  size_t bytes() const;
  // The value sequence x being processed by the top-level call, for token labels.
  Tokens tokens_x, tokens_z;
  // Every token sequence an event's axes refer to (Event::seq_x, seq_z).
  std::vector<Tokens> sequences;
  // The tokens labelling axis `a` (TokenX or TokenZ) of event k's values; nullptr when none.
  const Tokens* axis_tokens(size_t k, Axis a) const;

  size_t size() const { return events.size(); }
  // The Enter event of the frame that event k belongs to.
  size_t frame_start(size_t k) const;
  // The caller's line event for the frame containing k (the next event at a smaller depth);
  // size() for a top-level frame.
  size_t caller_line(size_t k) const;
  // The frames from the outermost to event k: each element is an event index (the
  // caller-line events of the enclosing frames, then k itself).
  std::vector<size_t> call_stack(size_t k) const;
  // Every variable in scope at event k in its frame: the frame's inputs and each value bound
  // since, the latest binding of each name winning, in first-binding order.
  std::vector<const Value*> scope(size_t k) const;
  // Names bound by event k itself (what this step changed).
  std::vector<std::string> changed(size_t k) const;
  // Stepping, as a debugger does; each returns the new cursor (clamped to [0, size()-1]).
  size_t step_into(size_t k) const { return k + 1 < size() ? k + 1 : k; }
  size_t step_over(size_t k) const;
  size_t step_out(size_t k) const;
  size_t step_back(size_t k) const { return k > 0 ? k - 1 : 0; }
  size_t step_back_over(size_t k) const;
  // First event after k (not a sub-step) whose line is in `breakpoints`; else the last.
  size_t continue_to(size_t k, const std::vector<LineRef>& breakpoints) const;
  // The event in this trace that best matches event `e` of another trace: same algorithm,
  // line, kind, depth, indices and calling line (none at top level) if present;
  // else the closest by (alg, line). Keeps the cursor in place when the prompt changes.
  size_t find_matching(const Event& e, LineRef caller = {}) const;
  // The line that called the frame of event k; none at top level.
  LineRef caller_ref(size_t k) const;
  // The top-level algorithm's line whose call event k runs inside (e.g. Algorithm 10 line 6 for
  // an Algorithm 4 event of layer l); none for the top-level frame's own events.
  LineRef outer_caller_ref(size_t k) const;
};

// Where a parameter tensor lies: the entry of `table` and the head whose storage holds `data` within
// the flat buffer at `base` (elem_bytes per element; θ or a copy of θ laid out by the table).
struct ParamRef {
  int param = -1;  // as Value::param
  int head = 0;    // as Value::head
};
struct ParamSource {
  const ParamTable* table = nullptr;
  const void* base = nullptr;
  size_t elem_bytes = 0;
  // {−1, 0} when data is not inside this buffer (or not on an element boundary).
  ParamRef find(const void* data, size_t elem_bytes) const;
};

// How a Tracer binds the parameters of θ (tparam): copies (the default: safe whatever happens to θ
// afterwards) or views into θ (no copy; θ must outlive the trace, unchanged).
enum class ParamBinding { Copy, View };

class Tracer {
 public:
  explicit Tracer(Trace& t, ParamBinding params = ParamBinding::Copy) : trace_(t), params_(params) {}
  ParamBinding params() const { return params_; }
  void set_params(ParamBinding p) { params_ = p; }
  // The pass of the events the tracer makes (TraceBackward sets Backward for a scope).
  Pass pass() const { return pass_; }
  void set_pass(Pass p) { pass_ = p; }
  void enter(int alg, std::vector<Value> inputs);
  void leave();
  // A line of the frame's algorithm has run (a `lines::` constant of core/trace/vocabulary.hpp, never
  // bare numbers); SubStep: one part of that line. The event is in Pass::Backward inside a
  // TraceBackward scope or when `ref` names an adjoint line (ref.adjoint()), else in Pass::Forward.
  void line(LineRef ref, std::vector<Value> values);
  void substep(LineRef ref, std::string label, std::vector<Value> values);
  Indices& idx() { return idx_; }
  Trace& trace() { return trace_; }
  // The sequences labelling the TokenX and TokenZ axes of the events that follow (indices into
  // Trace::sequences, as add_sequence returns them). An Enter event whose inputs bind Tokens "x"
  // (and "z") sets them itself: TokenX ← x, TokenZ ← z, or x when there is no z.
  int add_sequence(const Tokens& t);
  void set_sequences(int x, int z) { seq_x_ = x, seq_z_ = z; }
  std::pair<int, int> sequences() const { return {seq_x_, seq_z_}; }
  // The parameter buffers in force (TraceParameters): tparam asks which entry and head hold a
  // tensor, the innermost buffer first; {−1, 0} when none does.
  void push_params(ParamSource s) { param_sources_.push_back(s); }
  void pop_params() { param_sources_.pop_back(); }
  ParamRef param_ref(const void* data, size_t elem_bytes) const;

 private:
  Event make(EventKind kind, int alg, int line, int depth, Pass pass);
  Pass pass_of(LineRef ref) const;  // the pass of an event at `ref` (see line)
  Trace& trace_;
  ParamBinding params_;
  Pass pass_ = Pass::Forward;
  int depth_ = -1;
  Indices idx_;
  int seq_x_ = -1, seq_z_ = -1;
  struct Saved {
    Indices idx;
    int seq_x, seq_z;
  };
  std::vector<Saved> saved_;
  std::vector<ParamSource> param_sources_;
};

// RAII frame: Enter on construction, leave on destruction; a no-op without a tracer.
class TraceFrame {
 public:
  TraceFrame(Tracer* tr, int alg, std::vector<Value> inputs) : tr_(tr) {
    if (tr_) tr_->enter(alg, std::move(inputs));
  }
  ~TraceFrame() {
    if (tr_) tr_->leave();
  }
  TraceFrame(const TraceFrame&) = delete;
  TraceFrame& operator=(const TraceFrame&) = delete;

 private:
  Tracer* tr_;
};

// RAII token labels: within its scope, TokenX axes are labelled by `x_axis` and TokenZ axes by
// `z_axis` (e.g. Algorithm 8's encoder: both z; its cross-attention: x and z). No-op without a
// tracer.
class TraceSequences {
 public:
  TraceSequences(Tracer* tr, const Tokens& x_axis, const Tokens& z_axis) : tr_(tr) {
    if (!tr_) return;
    old_ = tr_->sequences();
    tr_->set_sequences(tr_->add_sequence(x_axis), tr_->add_sequence(z_axis));
  }
  ~TraceSequences() {
    if (tr_) tr_->set_sequences(old_.first, old_.second);
  }
  TraceSequences(const TraceSequences&) = delete;
  TraceSequences& operator=(const TraceSequences&) = delete;

 private:
  Tracer* tr_;
  std::pair<int, int> old_{-1, -1};
};

// RAII: within its scope, the tracer binds parameters by copy whatever its mode (Algorithms 11–13:
// their update changes θ while the trace lives). No-op without a tracer.
class TraceParamCopies {
 public:
  explicit TraceParamCopies(Tracer* tr) : tr_(tr) {
    if (!tr_) return;
    old_ = tr_->params();
    tr_->set_params(ParamBinding::Copy);
  }
  ~TraceParamCopies() {
    if (tr_) tr_->set_params(old_);
  }
  TraceParamCopies(const TraceParamCopies&) = delete;
  TraceParamCopies& operator=(const TraceParamCopies&) = delete;

 private:
  Tracer* tr_;
  ParamBinding old_ = ParamBinding::Copy;
};

// RAII: within its scope, every event the tracer makes (Enter, Line, SubStep) is in Pass::Backward:
// a line of a backward listing, "adjoint of line n" (core/backprop/). Nests: the pass in force
// before is restored. No-op without a tracer.
class TraceBackward {
 public:
  explicit TraceBackward(Tracer* tr) : tr_(tr) {
    if (!tr_) return;
    old_ = tr_->pass();
    tr_->set_pass(Pass::Backward);
  }
  ~TraceBackward() {
    if (tr_) tr_->set_pass(old_);
  }
  TraceBackward(const TraceBackward&) = delete;
  TraceBackward& operator=(const TraceBackward&) = delete;

 private:
  Tracer* tr_;
  Pass old_ = Pass::Forward;
};

// RAII: within its scope, tparam knows the parameter table of the θ being bound and where that θ
// lies, so that each bound parameter says which entry (and head) of the table it is (Value::param,
// Value::head). Opened wherever a model's θ (or a copy of it laid out by the same table) is bound
// to an algorithm. Nests: an inner scope is searched first and removed on leaving. No-op without a
// tracer.
class TraceParameters {
 public:
  template <class T>
  TraceParameters(Tracer* tr, const ParamTable& table, const T* theta) : tr_(tr) {
    if (tr_) tr_->push_params({&table, theta, sizeof(T)});
  }
  ~TraceParameters() {
    if (tr_) tr_->pop_params();
  }
  TraceParameters(const TraceParameters&) = delete;
  TraceParameters& operator=(const TraceParameters&) = delete;

 private:
  Tracer* tr_;
};

// RAII loop index: sets idx().*field for the scope of a loop body.
class TraceIndex {
 public:
  TraceIndex(Tracer* tr, int Indices::*field, int value) : tr_(tr), field_(field) {
    if (tr_) {
      old_ = tr_->idx().*field_;
      tr_->idx().*field_ = value;
    }
  }
  ~TraceIndex() {
    if (tr_) tr_->idx().*field_ = old_;
  }
  TraceIndex(const TraceIndex&) = delete;
  TraceIndex& operator=(const TraceIndex&) = delete;

 private:
  Tracer* tr_;
  int Indices::*field_;
  int old_ = 0;
};

// Value constructors (copies, cast to float for display).
template <class Derived>
Value tv(std::string name, const Eigen::MatrixBase<Derived>& m, Axis rows = Axis::Feature, Axis cols = Axis::Feature) {
  Value v;
  v.name = std::move(name);
  v.m = TraceMat(m.template cast<float>());
  v.rows = rows;
  v.cols = cols;
  return v;
}
// A parameter tensor of θ, W (or Wᵀ with `transposed`: the tied "W_u = W_eᵀ"): a view into θ when
// tr binds by reference (ParamBinding::View) and θ is float, else a copy as tv makes.
// Inside a TraceParameters scope it also says which entry and head of the table W is.
template <class T>
Value tparam(Tracer* tr, std::string name, const MapM<const T>& W, Axis rows = Axis::Feature,
             Axis cols = Axis::Feature, bool transposed = false) {
  Value v;
  bool viewed = false;
  if constexpr (std::is_same_v<T, float>) {
    if (tr && tr->params() == ParamBinding::View) {
      tr->trace().holds_views = true;
      v.name = std::move(name);
      v.m = TraceMat::view(W.data(), W.rows(), W.cols(), transposed);
      v.rows = rows;
      v.cols = cols;
      viewed = true;
    }
  }
  if (!viewed)
    v = transposed ? tv(std::move(name), W.transpose(), rows, cols) : tv(std::move(name), W, rows, cols);
  if (tr && W.size() > 0) {
    const ParamRef r = tr->param_ref(W.data(), sizeof(T));
    v.param = r.param;
    v.head = r.head;
  }
  return v;
}
template <class T>
Value tparam(Tracer* tr, std::string name, const MapV<const T>& w, Axis rows = Axis::Feature) {
  return tparam<T>(tr, std::move(name), MapM<const T>(w.data(), w.size(), 1), rows);
}
Value tscalar(std::string name, double x);
Value ttokens(std::string name, const Tokens& t);
Value tmask(std::string name, const Mask& m, Axis rows, Axis cols);
Value with_note(Value v, std::string note);

}  // namespace sf
