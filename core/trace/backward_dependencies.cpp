// Dependencies on hover for gradient cells (issue 24; Stepformer's backward listings, NOT IN THE
// PAPER): the rule of every adjoint line the traced backward binds (core/backprop/adjoints.hpp says
// what each binds). A gradient cell reads the gradient that reached the line (bound by the line
// before it in reverse order, or a sub-step of its own line), the forward values of the line it is
// the adjoint of, and, where a line sums a nested frame per column, head or token, those frames'
// cells. Checked in tests/core/test_backward_dependencies.cpp.
#include "core/trace/dependency_rules.hpp"
#include "core/trace/value_keys.hpp"

namespace sf::dependency_rules {

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
std::string col_text(const std::string& n, int c) { return n + "[:, " + I(c) + "]"; }
std::string row_text(const std::string& n, int r) { return n + "[" + I(r) + ", :]"; }

// The latest of `names` bound in the frame that calls k's frame, before it: that frame's Enter,
// lines and their sub-steps, not the frames nested in them (an adjoint frame's incoming gradient:
// Algorithm 6's ∇ê is column t of the caller's ∇X̃ or ∇X, Algorithm 7's ∇p of ∇P).
std::optional<Found> caller_binding(const Trace& tr, size_t k, std::initializer_list<const char*> names) {
  const size_t f = tr.frame_start(k);
  const int d = tr.events[f].depth;
  for (size_t j = f; j-- > 0 && tr.events[j].depth >= d - 1;) {
    const Event& x = tr.events[j];
    const bool caller_line = x.depth == d - 1, caller_sub = x.kind == EventKind::SubStep && x.depth == d;
    if (!caller_line && !caller_sub) continue;
    for (const char* n : names)
      if (const Value* v = value_in(x, n)) return Found{j, v};
    if (caller_line && x.kind == EventKind::Enter) break;
  }
  return std::nullopt;
}

// The frames of algorithm `alg` nested in k's frame before k that bind `name` (each frame's latest
// binding, in trace order): only those just before k (nested in k's own line) unless `whole_frame`.
std::vector<Found> nested_bindings(const Trace& tr, size_t k, int alg, const std::string& name, bool whole_frame = false) {
  const int d = tr.events[k].kind == EventKind::SubStep ? tr.events[k].depth - 1 : tr.events[k].depth;
  const size_t stop = whole_frame ? tr.frame_start(k) : 0;
  std::vector<Found> out;
  size_t frame = SIZE_MAX;
  for (size_t j = k; j-- > stop;) {
    const Event& x = tr.events[j];
    if (x.depth <= d && !whole_frame) break;
    if (x.depth != d + 1 || x.alg != alg || x.pass != Pass::Backward || x.kind == EventKind::SubStep) continue;
    const size_t fs = tr.frame_start(j);
    if (fs == frame) continue;
    if (const Value* v = value_in(x, name)) {
      out.insert(out.begin(), Found{j, v});
      frame = fs;
    }
  }
  return out;
}

// A gradient rule being applied: Rule's lookups plus the backward's own.
struct Adjoint {
  Rule& R;
  const std::string& n;
  int r, c;

  // A forward value this adjoint line reads: in the matching forward frame, else as k's frame (or
  // a calling frame) bound it (an adjoint frame's Enter binds the forward values it reads).
  bool forward(const std::string& name, const Blocks& b, const std::string& shown = "") {
    return R.add_forward(name, shown.empty() ? name : shown, b) || R.add(name, b);
  }
  // A forward value the line that calls k's frame reads (Algorithm 7's W_u: the unembedding line's).
  bool forward_at_caller(const std::string& name, const Blocks& b, size_t caller = SIZE_MAX) {
    if (caller == SIZE_MAX) caller = R.tr.caller_line(R.k);
    const std::optional<ForwardValue> f = caller < R.tr.size() ? forward_counterpart(R.tr, caller, "∇" + name) : std::nullopt;
    return f && R.push(name, name, f->event, *f->value, b);
  }
  // The gradient that reached this line: the latest binding of `name` before k.
  bool grad(const std::string& name, const Blocks& b) { return R.add_grad(name, b); }
  // The latest binding of `name` by an earlier line of k's own frame (not a calling frame's).
  bool earlier_in_frame(const std::string& name, const Blocks& b) {
    const int d = R.e.depth;
    for (size_t j = R.k; j-- > R.tr.frame_start(R.k);)
      if (R.tr.events[j].depth == d && R.tr.events[j].kind == EventKind::Line)
        if (const Value* v = value_in(R.tr.events[j], name)) return push({j, v}, name, b), true;
    return false;
  }
  void push(const Found& f, const std::string& name, const Blocks& b, const std::string& suffix = "") {
    R.push(name, name, f.event, *f.v, b);
    R.out.sources.back().text += suffix;
  }
  // One cell of each nested frame's `name`, "(t = 2)" after each.
  void each_nested(int alg, const std::string& name, const Blocks& b, bool whole_frame = false) {
    for (const Found& f : nested_bindings(R.tr, R.k, alg, name, whole_frame)) {
      const Indices& idx = R.tr.events[f.event].idx;
      push(f, name, b, idx.t ? " (t = " + std::to_string(idx.t) + ")" : idx.h ? " (h = " + std::to_string(idx.h) + ")" : "");
    }
  }
  bool ok(const std::string& reason) { return R.ok(reason), true; }
};

// The stream a line of Algorithms 8, 9, 10 carries: "Z" on the encoder's lines of Algorithm 8.
std::string stream_of(const Event& e) {
  return e.alg == 8 && e.line >= lines::ed_transformer::enc_embed.line && e.line <= lines::ed_transformer::enc_end.line ? "Z" : "X";
}

// Algorithm 8's ∇Z as line 9's adjoint receives it: the cross-attention line's ∇Z[:, col] of every
// decoder layer (cell a.r), from the events of k's frame before k. The cross-attention is line 16
// (post-LN, the paper's) or 17 (pre-LN, whose norm comes first): the decoder line that binds ∇Z.
void decoder_layers_dZ(Adjoint& a, size_t k, int col) {
  const Trace& tr = a.R.tr;
  const int d = tr.events[tr.frame_start(k)].depth;
  for (size_t j = tr.frame_start(k); j < k; ++j)
    if (tr.events[j].line > lines::ed_transformer::enc_end.line && tr.events[j].depth == d &&
        tr.events[j].kind == EventKind::Line)
      if (const Value* v = value_in(tr.events[j], "∇Z"))
        a.push({j, v}, "∇Z", cell_of(a.r, col), " (l = " + std::to_string(tr.events[j].idx.l) + ")");
}

// An adjoint frame's line 0: the gradient it receives from its caller and the forward values it reads.
bool enter_rules(Adjoint& a) {
  const Event& e = a.R.e;
  const std::string& n = a.n;
  if (gradient_of(n).empty()) {
    a.R.add_forward(n, n, all_of());  // the matching forward frame's, when there is one
    return a.ok(n + " is the forward pass's value, which this adjoint reads: no gradient flows into it here");
  }
  struct Incoming {
    int alg;
    const char* name;
    std::initializer_list<const char*> from;
    bool column;  // column t of the caller's gradient (a "for t ∈ [ℓ]" frame)
  };
  static const Incoming table[] = {
      {4, "∇Ṽ", {}, false},
      {algs::random_feature_attention, "∇Ṽ", {}, false},
      {5, "∇Ṽ", {"∇X", "∇Z"}, false},
      {6, "∇ê", {"∇X̃", "∇Z̃", "∇X", "∇Z", "∇(e_t + W_s[:, 1])", "∇e_t"}, true},
      {7, "∇p", {"∇P"}, true},
      {1, "∇e", {"∇(e_t + W_s[:, 1])", "∇e_t"}, true},
      {2, "∇e_p", {"∇(e_t + W_s[:, 1])", "∇e_t"}, true},
  };
  for (const Incoming& in : table) {
    if (in.alg != e.alg || n != in.name) continue;
    std::optional<Found> f;
    std::string from;
    const size_t caller = a.R.tr.caller_line(a.R.k);
    if (e.alg == 6 && caller < a.R.tr.size() && a.R.tr.events[caller].ref() == lines::ed_transformer::enc_end.adjoint()) {
      decoder_layers_dZ(a, caller, e.idx.t - 1);  // pre-LN: the encoder's final norm receives the summed ∇Z
      return a.ok(a.R.cell() + " = Σ_l ∇Z[" + I(a.r) + ", " + I(e.idx.t - 1) + "] of the cross-attention line in each decoder layer l");
    }
    if (e.alg == 4 || e.alg == algs::random_feature_attention) {  // head h's part of ∇Y, Algorithm 5's adjoint of line 3
      from = "∇Y^" + std::to_string(e.idx.h);
      f = caller_binding(a.R.tr, a.R.k, {from.c_str()});
    } else {
      f = caller_binding(a.R.tr, a.R.k, in.from);
      if (f) from = f->v->name;
    }
    if (!f) return false;
    const int t = e.idx.t - 1;
    a.push(*f, from, in.column ? cell_of(a.r, t) : cell_of(a.r, a.c));
    return a.ok(a.R.cell() + " = " + (in.column ? from + "[" + I(a.r) + ", " + I(t) + "]" : from + "[" + I(a.r) + ", " + I(a.c) + "]") +
                ": the gradient this adjoint receives from its caller");
  }
  return false;
}

// The adjoint lines of Algorithm 4 (Stepformer's backward listing, not in the paper): each
// gradient cell reads the incoming gradient and the forward values of the line it is the adjoint
// of. A is softmax(S/√d_attn).
void attention_adjoint(Rule& R) {
  const std::string& n = R.v.name;
  const int r = R.r, c = R.c;
  const std::string A = keys::attention_weights.symbol;
  const Value* mask = R.find("Mask");
  const bool masked = mask && r < mask->m.rows() && c < mask->m.cols() && mask->m(r, c) == 0.0f;
  if (n == "∇A") {  // adjoint of line 6, first part: ∇A = Vᵀ ∇Ṽ
    R.add_forward("V", "V", col_of(r));
    R.add_grad("∇Ṽ", col_of(c));
    return R.ok("∇A[" + I(r) + ", " + I(c) + "] = V[:, " + I(r) + "] · ∇Ṽ[:, " + I(c) + "]");
  }
  if (n == "∇V") {  // adjoint of line 6: ∇V = ∇Ṽ Aᵀ
    R.add_grad("∇Ṽ", row_of(r));
    R.add_forward(A, "A", row_of(c));
    return R.ok("∇V[" + I(r) + ", " + I(c) + "] = ∇Ṽ[" + I(r) + ", :] · A[" + I(c) + ", :]");
  }
  if (n == "∇B") {  // relative bias (issue 25, not in the paper): B was added to S/√d_attn
    R.add_grad("∇S", cell_of(r, c));
    return R.ok("∇B[" + I(r) + ", " + I(c) + "] = ∇S[" + I(r) + ", " + I(c) + "]·√d_attn");
  }
  if (n == "∇W_rel[h, :]") {  // … and W_rel[h, k] sits in every cell of bucket k
    R.add_grad("∇B", all_of());
    return R.ok("∇W_rel[h, " + I(c) + "] = Σ of ∇B over the cells (t_z, t_x) in bucket " + I(c) +
                " of t_z − t_x (buckets counted from 1)");
  }
  if (n == "∇S" && masked) {
    R.add("Mask", cell_of(r, c));
    return R.ok("Mask[" + I(r) + ", " + I(c) + "] = 0: S[" + I(r) + ", " + I(c) +
                "] was set to −∞, so the loss does not depend on it: ∇S[" + I(r) + ", " + I(c) + "] is exactly 0");
  }
  if (n == "∇S" && R.e.line == lines::attention::V_tilde.line) {  // the softmax's Jacobian, column by column
    R.add_grad("∇A", col_of(c));
    R.add_forward(A, "A", col_of(c));
    return R.ok("∇S[" + I(r) + ", " + I(c) + "] = A[" + I(r) + ", " + I(c) + "] (∇A[" + I(r) + ", " + I(c) +
                "] − Σ_u A[u, " + I(c) + "] ∇A[u, " + I(c) + "]) / √d_attn: column " + I(c) + " only");
  }
  if (n == "∇S") {  // adjoint of line 5: the unmasked cells pass through
    R.add_grad("∇S", cell_of(r, c));
    if (mask) R.add("Mask", cell_of(r, c));
    return R.ok("Mask[" + I(r) + ", " + I(c) + "] = 1: ∇S[" + I(r) + ", " + I(c) + "] passes through line 5");
  }
  if (n == "∇K") {  // adjoint of line 4, S = KᵀQ
    R.add_forward("Q", "Q", row_of(r));
    R.add_grad("∇S", row_of(c));
    return R.ok("∇K[" + I(r) + ", " + I(c) + "] = Q[" + I(r) + ", :] · ∇S[" + I(c) + ", :]");
  }
  if (n == "∇Q") {
    R.add_forward("K", "K", row_of(r));
    R.add_grad("∇S", col_of(c));
    return R.ok("∇Q[" + I(r) + ", " + I(c) + "] = K[" + I(r) + ", :] · ∇S[:, " + I(c) + "]");
  }
  // Adjoints of lines 1–3, Y = W Y_in + b 1ᵀ: ∇W = ∇Y Y_inᵀ, ∇b = ∇Y 1, ∇Y_in += Wᵀ ∇Y. Under
  // RoPE (variant) ∇Y is the un-rotated ∇(W Y_in + b 1ᵀ) its sub-step binds.
  struct Affine {
    const char *W, *b, *Y, *in;
    std::string pre() const { return std::string("∇(") + W + " " + in + " + " + b + " 1ᵀ)"; }
  };
  auto add_dY = [&](const Affine& a, const Blocks& blocks) {
    if (R.add_grad(a.pre(), blocks)) return a.pre();
    R.add_grad(std::string("∇") + a.Y, blocks);
    return std::string("∇") + a.Y;
  };
  for (const Affine a : {Affine{"W_q", "b_q", "Q", "X"}, Affine{"W_k", "b_k", "K", "Z"}, Affine{"W_v", "b_v", "V", "Z"}}) {
    if (n == std::string("∇") + a.W) {
      const std::string dY = add_dY(a, row_of(r));
      R.add_forward(a.in, a.in, row_of(c));
      return R.ok(n + "[" + I(r) + ", " + I(c) + "] = " + dY + "[" + I(r) + ", :] · " + a.in + "[" + I(c) + ", :]");
    }
    if (n == std::string("∇") + a.b) {
      const std::string dY = add_dY(a, row_of(r));
      return R.ok(n + "[" + I(r) + "] = Σ_t " + dY + "[" + I(r) + ", t]");
    }
    if (n == a.pre()) {  // RoPE: R_tᵀ rotates coordinates (2i−1, 2i) of column t together
      const int lo = r - r % 2, rows = lo + 1 < R.v.m.rows() ? 2 : 1;
      R.add_grad(std::string("∇") + a.Y, [=](const Value&) { return std::vector<CellBlock>{{lo, c, rows, 1}}; });
      return R.ok(R.cell() + " = (R_" + I(c) + "ᵀ ∇" + a.Y + "[:, " + I(c) + "])[" + I(r) + "]: rows " + I(lo) + ", " +
                  I(lo + rows - 1) + " of ∇" + a.Y + "[:, " + I(c) + "], rotated back");
    }
  }
  // ∇X (adjoint of line 1) and ∇Z (line 3: its path; line 2: lines 2 and 3 together). Algorithm 4-R's
  // lines 1–3 are these, with the same numbers.
  const int line = R.e.line;
  const bool dX = gradient_of(n) == "X" && line == lines::attention::Q.line;
  const bool dZ = gradient_of(n) == "Z" && (line == lines::attention::K.line || line == lines::attention::V.line);
  if (!dX && !dZ) return;
  std::vector<Affine> paths;
  if (dX) paths.push_back({"W_q", "b_q", "Q", "X"});
  if (line == lines::attention::K.line) paths.push_back({"W_k", "b_k", "K", "Z"});
  if (dZ) paths.push_back({"W_v", "b_v", "V", "Z"});
  std::string sum;
  for (const Affine& a : paths) {
    R.add_forward(a.W, a.W, col_of(r));
    sum += std::string(sum.empty() ? "" : " + ") + a.W + "[:, " + I(r) + "] · " + add_dY(a, col_of(c)) + "[:, " + I(c) + "]";
  }
  return R.ok(R.cell() + " = " + sum + (dZ && line == lines::attention::V.line ? " (line 3's path only)" : ""));
}

// Algorithm 5's adjoint: line 4 (Ṽ = W_o Y + b_o 1ᵀ), line 3 (Y = [Y^1; …; Y^H]), line 2 (the
// heads' ∇X, ∇Z summed so far).
bool mh_attention_adjoint(Adjoint& a) {
  const std::string& n = a.n;
  const int r = a.r, c = a.c;
  const std::string cell = a.R.cell();
  if (n == "∇W_o") {
    a.grad("∇Ṽ", row_of(r)), a.forward("Y", row_of(c));
    return a.ok(cell + " = ∇Ṽ[" + I(r) + ", :] · Y[" + I(c) + ", :]");
  }
  if (n == "∇b_o") return a.grad("∇Ṽ", row_of(r)), a.ok(cell + " = Σ_t ∇Ṽ[" + I(r) + ", t]");
  if (n == "∇Y") {
    a.forward("W_o", col_of(r)), a.grad("∇Ṽ", col_of(c));
    return a.ok(cell + " = W_o[:, " + I(r) + "] · ∇Ṽ[:, " + I(c) + "]");
  }
  if (starts_with(n, "∇Y^")) {  // rows (h − 1)·d_mid + 1 … h·d_mid of ∇Y
    const int h = std::stoi(n.substr(std::string("∇Y^").size()));
    const int row = (h - 1) * static_cast<int>(a.R.v.m.rows()) + r;
    a.grad("∇Y", cell_of(row, c));
    return a.ok(cell + " = ∇Y[" + I(row) + ", " + I(c) + "]: head " + std::to_string(h) + "'s rows of ∇Y");
  }
  // Line 2: the sum so far over heads H … h, this head's Algorithm 4 adjoint adding its part.
  const bool self = n == "∇X" && a.R.v.note.find("Z is X") != std::string::npos;
  std::vector<std::string> parts;
  if (n == "∇X") parts = self ? std::vector<std::string>{"∇X", "∇Z"} : std::vector<std::string>{"∇X"};
  else if (n == "∇Z") parts = {"∇Z"};
  else if (n == "∇W_k^g" || n == "∇W_v^g") parts = {n == "∇W_k^g" ? "∇W_k" : "∇W_v"};
  else return false;
  const bool earlier = a.earlier_in_frame(n, cell_of(r, c));  // the sum starts at 0 in each frame
  for (const std::string& p : parts) a.each_nested(4, p, cell_of(r, c));
  std::string sum = earlier ? n + "[" + I(r) + ", " + I(c) + "] (heads after h) + " : "";
  for (size_t i = 0; i < parts.size(); ++i) sum += (i ? " + " : "") + parts[i] + "[" + I(r) + ", " + I(c) + "] of head h";
  return a.ok(cell + " = " + sum);
}

// Algorithm 6's adjoint for one column (ê = (e − m)/√(v + ε) ⊙ γ + β; RMSNorm: e/√(v + ε) ⊙ γ):
// m and v read every entry of e, so everything but ∇β and the direct path reads all of e.
bool layer_norm_adjoint(Adjoint& a) {
  const std::string& n = a.n;
  const int r = a.r;
  const std::string cell = a.R.cell();
  const int line = a.R.e.line;
  const bool rms = a.R.find("∇m") == nullptr && line != 3;
  if (line == 3) {
    if (n == "∇β") return a.grad("∇ê", cell_of(r, 0)), a.ok(cell + " = ∇ê[" + I(r) + "] (column t's term)");
    if (n == "∇γ") {
      a.grad("∇ê", cell_of(r, 0)), a.forward("e", all_of());
      return a.ok(cell + " = ∇ê[" + I(r) + "] x̂[" + I(r) + "], x̂ reads all of e through m and v (column t's term)");
    }
    if (n == "∇e") {
      a.grad("∇ê", cell_of(r, 0)), a.forward("γ", cell_of(r, 0)), a.forward("e", all_of());
      return a.ok(cell + " = ∇ê[" + I(r) + "] γ[" + I(r) + "] / √(v + ε): the direct path; v reads all of e");
    }
    if (n == "∇v" || n == "∇m") {
      a.grad("∇ê", all_of()), a.forward("γ", all_of()), a.forward("e", all_of());
      return a.ok(n + " = Σ_i of ∇ê[i] γ[i] times a function of e[i], m and v");
    }
    return false;
  }
  if (line == 2 && n == "∇e") {
    a.grad("∇e", cell_of(r, 0)), a.grad("∇v", all_of());
    if (rms) {
      a.forward("e", cell_of(r, 0));
      return a.ok(cell + " = ∇e[" + I(r) + "] + ∇v · 2 e[" + I(r) + "]/d_e");
    }
    a.forward("e", all_of());
    return a.ok(cell + " = ∇e[" + I(r) + "] + ∇v · 2 (e[" + I(r) + "] − m)/d_e, m reads all of e");
  }
  if (line == 2 && n == "∇m") {
    a.grad("∇m", all_of()), a.grad("∇v", all_of()), a.forward("e", all_of());
    return a.ok("∇m += −∇v · 2 Σ_i (e[i] − m)/d_e (0 up to rounding)");
  }
  if (line == 1 && n == "∇e") {
    a.grad("∇e", cell_of(r, 0)), a.grad("∇m", all_of());
    return a.ok(cell + " = ∇e[" + I(r) + "] + ∇m / d_e");
  }
  return false;
}

// Algorithm 7's adjoint for one column: p = softmax(W_u e) (+ b_u).
bool unembedding_adjoint(Adjoint& a) {
  const std::string& n = a.n;
  const int r = a.r;
  if (starts_with(n, "∇(W_u e")) {
    a.forward("p", all_of()), a.grad("∇p", all_of());
    return a.ok(a.R.cell() + " = p[" + I(r) + "] (∇p[" + I(r) + "] − Σ_v p[v] ∇p[v]): the softmax shares one denominator");
  }
  if (n == "∇e") {
    const std::string logits = a.R.find("∇(W_u e + b_u)") ? "∇(W_u e + b_u)" : "∇(W_u e)";
    if (!a.forward_at_caller("W_u", col_of(r))) a.forward_at_caller(keys::tied_unembedding.symbol, col_of(r));
    a.grad(logits, all_of());
    return a.ok(a.R.cell() + " = W_u[:, " + I(r) + "] · " + logits);
  }
  return false;
}

// The loss lines' adjoint (13 and 11: line 5; 12: line 9): ∇P[y_t, t] = −1/P[y_t, t] at a
// position t with a loss term and target y_t, 0 elsewhere. The target is where the column is not 0.
bool loss_adjoint(Adjoint& a) {
  const Value& v = a.R.v;
  const bool bert = a.R.e.alg == lines::e_training::loss.alg;
  auto target_of = [&](const Value& dP, int col) {
    for (int i = 0; i < dP.m.rows(); ++i)
      if (dP.m(i, col) != 0.0f) return i;
    return -1;
  };
  if (a.n == "loss") {
    const Value* dP = value_in(a.R.e, "∇P");
    if (!dP) return false;
    a.forward("P", [&](const Value&) {
      std::vector<CellBlock> b;
      for (int t = 0; t < dP->m.cols(); ++t)
        if (const int y = target_of(*dP, t); y >= 0) b.push_back({y, t, 1, 1});
      return b;
    });
    return a.ok("loss = −Σ_t log P[y_t, t] over the positions with a loss term");
  }
  if (a.n != "∇P") return false;
  const int y = target_of(v, a.c);
  const std::string where = bert ? "x[" + I(a.c) + "] (a masked position)" : "x[" + I(a.c + 1) + "]";
  if (y < 0)
    return a.ok("column " + I(a.c) + " carries no loss term" + (bert ? " (not a masked position)" : "") +
                ": ∇P[:, " + I(a.c) + "] = 0");
  if (y != a.r) return a.ok("row " + I(a.r) + " is not column " + I(a.c) + "'s target " + where + " = " + I(y) + ": 0");
  a.forward("P", cell_of(a.r, a.c));
  a.forward("x", token_at(bert ? a.c : a.c + 1));
  return a.ok(a.R.cell() + " = −1/P[" + I(a.r) + ", " + I(a.c) + "]: the target of column " + I(a.c) + " is " + where + " = " + I(y));
}

// Tied unembedding (variant, W_u = W_eᵀ): ∇W_e[i, v] also holds ∇W_u[v, i] = Σ_t ∇(W_u e)[v] (column
// t) X[i, t], added at the unembedding line's adjoint, before the embedding line `line_event`
// (whose ∇W_e says "Tied"). Adds those sources; returns the reason's term ("" when not tied).
std::string tied_unembedding_part(Adjoint& a, size_t line_event, int i, int v) {
  const Value* dW_e = value_in(a.R.tr.events[line_event], "∇W_e");
  if (!dW_e || dW_e->note.find("Tied") == std::string::npos) return "";
  std::vector<Found> logits = nested_bindings(a.R.tr, line_event, 7, "∇(W_u e)", true);
  if (logits.empty()) logits = nested_bindings(a.R.tr, line_event, 7, "∇(W_u e + b_u)", true);
  for (const Found& f : logits)
    a.push(f, f.v->name, cell_of(v, 0), " (t = " + std::to_string(a.R.tr.events[f.event].idx.t) + ")");
  if (!logits.empty()) a.forward_at_caller("X", row_of(i), a.R.tr.caller_line(logits.back().event));
  return " + Σ_t X[" + I(i) + ", t] ∇(W_u e)[" + I(v) + "] (column t; tied: ∇W_u[" + I(v) + ", " + I(i) + "])";
}

// Algorithms 1 and 2's adjoints: ∇W_e[:, v] and ∇W_p[:, ℓ] take one position's ∇e.
bool embedding_adjoint(Adjoint& a) {
  const std::string& n = a.n;
  if (n == "∇W_e[:, v]" || n == "∇W_p[:, ℓ]") {
    const std::string in = a.R.e.alg == 1 ? "∇e" : "∇e_p";
    a.grad(in, cell_of(a.r, 0));
    return a.ok(a.R.cell() + " = " + in + "[" + I(a.r) + "]");
  }
  if (n == "∇W_e[:, v] (so far)") {  // every position so far with this token
    const Value* v = a.R.find("v");
    if (!v) return false;
    const size_t caller = a.R.tr.caller_line(a.R.k);
    const int id = static_cast<int>(v->m(0, 0));
    for (size_t j = a.R.tr.frame_start(caller); j < a.R.k; ++j) {
      const Event& x = a.R.tr.events[j];
      if (x.alg != 1 || x.kind != EventKind::Enter || x.pass != Pass::Backward) continue;
      const Value* xv = value_in(x, "v");
      const Value* de = value_in(x, "∇e");
      if (xv && de && static_cast<int>(xv->m(0, 0)) == id) a.push({j, de}, "∇e", cell_of(a.r, 0), " (t = " + std::to_string(x.idx.t) + ")");
    }
    return a.ok(a.R.cell() + " = Σ ∇e[" + I(a.r) + "] over the positions so far with token v = " + std::to_string(id) +
                tied_unembedding_part(a, caller, a.r, id - 1));
  }
  return false;
}

// Lookups within one line of Algorithms 8, 9, 10's adjoint frame: its sub-steps and nested frames.
struct LineScope {
  const Trace& tr;
  size_t k;
  int d;        // the line's depth
  size_t first; // the line's first event (its first sub-step or nested frame)
  LineScope(const Trace& t, size_t k0) : tr(t), k(k0), d(t.events[k0].kind == EventKind::SubStep ? t.events[k0].depth - 1 : t.events[k0].depth) {
    first = k;
    while (first > 0 && tr.events[first - 1].depth > d) --first;
  }
  // `name` as a sub-step of this line bound it before k.
  std::optional<Found> sub(const std::string& name) const {
    const Event& e = tr.events[k];
    for (size_t j = k; j-- > first;) {
      const Event& x = tr.events[j];
      if (x.kind == EventKind::SubStep && x.depth == d + 1 && x.alg == e.alg && x.line == e.line)
        if (const Value* v = value_in(x, name)) return Found{j, v};
    }
    return std::nullopt;
  }
  // `name` as the lines before this one bound it (the gradient that reached this line).
  std::optional<Found> before(const std::string& name) const {
    for (size_t j = first; j-- > tr.frame_start(k);) {
      const Event& x = tr.events[j];
      if (x.depth == d && x.kind != EventKind::SubStep)
        if (const Value* v = value_in(x, name)) return Found{j, v};
    }
    return std::nullopt;
  }
  // The sub-step values of this line, in order.
  std::vector<const Value*> sub_values() const {
    std::vector<const Value*> out;
    size_t j = k;
    while (j + 1 < tr.size() && tr.events[j].kind == EventKind::SubStep) ++j;  // the line's own event
    for (size_t i = first; i < j; ++i)
      if (tr.events[i].kind == EventKind::SubStep && tr.events[i].depth == d + 1)
        for (const Value& v : tr.events[i].values) out.push_back(&v);
    return out;
  }
};

bool push_found(Adjoint& a, const std::optional<Found>& f, const Blocks& b) {
  if (f) a.push(*f, f->v->name, b);
  return f.has_value();
}

// The MLP line X ← X + W_b act(W_a in + b_a 1ᵀ) + b_b 1ᵀ's adjoint (sub-steps and the line).
bool mlp_adjoint(Adjoint& a, const LineScope& L, const std::string& stream) {
  const std::vector<const Value*> subs = L.sub_values();
  if (subs.size() < 3 || !starts_with(subs[0]->name, "∇W_")) return false;
  const std::string& n = a.n;
  const int r = a.r, c = a.c;
  const std::string dS = "∇" + stream, cell = a.R.cell();
  const std::string b_name = subs[0]->name.substr(std::string("∇W_").size());  // "mlp2"
  const std::string H = subs[2]->name;                                           // "∇GELU(…)" …
  // f's input: the line event's first value names it (∇X̃ pre-LN, ∇X post-LN).
  size_t line_event = L.k;
  while (line_event + 1 < L.tr.size() && L.tr.events[line_event].kind == EventKind::SubStep) ++line_event;
  const std::string in = gradient_of(L.tr.events[line_event].values.front().name);
  auto pre_of = [&](const std::string& w) {  // "∇(W_mlp1 X̃ + b_mlp1 1ᵀ)" for "mlp1"
    for (const Value* v : subs)
      if (starts_with(v->name, "∇(W_" + w + " ")) return v->name;
    return std::string();
  };
  if (n == "∇W_" + b_name || n == "∇b_" + b_name) {
    push_found(a, L.before(dS), row_of(r));
    if (n[3] == 'b') return a.ok(cell + " = Σ_t " + dS + "[" + I(r) + ", t]");
    a.forward(in, all_of());
    return a.ok(cell + " = " + row_text(dS, r) + " · act(…)[" + I(c) + ", :]; act(…)[" + I(c) + ", t] reads all of " + in + "[:, t]");
  }
  if (n == H) {
    a.forward("W_" + b_name, col_of(r)), push_found(a, L.before(dS), col_of(c));
    return a.ok(cell + " = W_" + b_name + "[:, " + I(r) + "] · " + col_text(dS, c));
  }
  if (starts_with(n, "∇(W_") || n == "∇SiLU(…)") {  // element-wise: the activation's derivative at [r, c]
    const std::string from = n == "∇SiLU(…)" ? H : starts_with(n, "∇(W_gate") ? "∇SiLU(…)" : H;
    push_found(a, L.sub(from), cell_of(r, c));
    a.forward(in, col_of(c));
    return a.ok(cell + " = " + from + "[" + I(r) + ", " + I(c) + "] times a derivative at the pre-activation [" + I(r) + ", " + I(c) + "], which reads " + col_text(in, c));
  }
  if (starts_with(n, "∇W_") || starts_with(n, "∇b_")) {  // W_a, b_a (and SwiGLU's W_gate, b_gate)
    const std::string w = n.substr(std::string("∇W_").size());
    const std::string pre = pre_of(w);
    if (pre.empty()) return false;
    push_found(a, L.sub(pre), row_of(r));
    if (n[3] == 'b') return a.ok(cell + " = Σ_t " + pre + "[" + I(r) + ", t]");
    a.forward(in, row_of(c));
    return a.ok(cell + " = " + row_text(pre, r) + " · " + row_text(in, c));
  }
  if (n == "∇" + in) {  // f's input: W_aᵀ ∇(pre) (+ W_gateᵀ ∇(gate)); post-LN the residual's ∇X too
    std::string sum;
    if (in == stream) push_found(a, L.before(dS), cell_of(r, c)), sum = dS + "[" + I(r) + ", " + I(c) + "] + ";
    for (const Value* v : subs)
      if (starts_with(v->name, "∇(W_") && v->name.find(" " + in + " ") != std::string::npos) {
        push_found(a, L.sub(v->name), col_of(c));
        const std::string W = v->name.substr(std::string("∇(").size(), v->name.find(' ') - std::string("∇(").size());
        sum += std::string(sum.empty() || sum.back() == ' ' ? "" : " + ") + W + "[:, " + I(r) + "] · " + col_text(v->name, c);
      }
    return a.ok(cell + " = " + sum + ": column " + I(c) + " only");
  }
  return false;
}

// The per-column Algorithm 6 frames nested in a norm line: ∇X[:, t] ← the frame of column t's ∇e
// (pre-LN: added to the residual's ∇X); ∇γ, ∇β ← Σ over the frames.
bool norm_adjoint(Adjoint& a, const LineScope& L, const std::string& stream) {
  const std::vector<Found> de = nested_bindings(a.R.tr, L.k, 6, "∇e");
  if (de.empty()) return false;
  const std::string& n = a.n;
  const std::string cell = a.R.cell();
  if (starts_with(n, "∇γ") || starts_with(n, "∇β")) {
    const std::string part = starts_with(n, "∇γ") ? "∇γ" : "∇β";
    a.each_nested(6, part, cell_of(a.r, 0));
    return a.ok(cell + " = Σ_t " + part + "[" + I(a.r) + "] of Algorithm 6's adjoint for each column t");
  }
  if (n != "∇" + stream && n != "∇(e_t + W_s[:, 1])" && n != "∇e_t") return false;
  for (const Found& f : de)
    if (a.R.tr.events[f.event].idx.t == a.c + 1) {
      // Pre-LN's X̃[:, t] ← norm(X[:, t]): the line just before the frames (X ← X + f(X̃)) bound ∇X̃,
      // their ∇ê, and the residual's ∇X adds to the norm's path. Every other norm line replaces it.
      const Event& before = a.R.tr.events[a.R.tr.frame_start(de.front().event) - 1];
      const bool residual = value_in(before, "∇X̃") || value_in(before, "∇Z̃");
      std::string sum;
      if (residual && push_found(a, L.before(n), cell_of(a.r, a.c))) sum = n + "[" + I(a.r) + ", " + I(a.c) + "] + ";
      a.push(f, "∇e", cell_of(a.r, 0), " (t = " + I(a.c) + ")");
      return a.ok(cell + " = " + sum + "∇e[" + I(a.r) + "] of Algorithm 6's adjoint for column " + I(a.c));
    }
  return false;
}

// An attention line (self or cross): ∇ of f's input from Algorithm 5's adjoint; pre-LN the
// residual's partial ∇X; post-LN both; cross-attention also this layer's ∇Z.
bool attention_line_adjoint(Adjoint& a, const LineScope& L, const std::string& stream) {
  const std::string& n = a.n;
  const std::string dS = "∇" + stream, tilde = dS == "∇X" ? "∇X̃" : "∇Z̃";
  const std::vector<Found> dX = nested_bindings(a.R.tr, L.k, 5, n == "∇Z" && stream == "X" ? "∇Z" : "∇X");
  if (dX.empty()) return false;
  const std::string cell = a.R.cell(), at = "[" + I(a.r) + ", " + I(a.c) + "]";
  const bool pre = value_in(a.R.e, tilde) != nullptr;
  if (n == "∇Z" && stream == "X") {
    a.push(dX.back(), "∇Z", cell_of(a.r, a.c));
    return a.ok(cell + " = ∇Z" + at + " of Algorithm 5's adjoint: this layer's cross-attention's keys and values");
  }
  if (n == dS && pre) {
    push_found(a, L.before(dS), cell_of(a.r, a.c));
    return a.ok(cell + " = " + dS + at + ": the residual passes it on unchanged (partial)");
  }
  std::string sum;
  if (n == dS && push_found(a, L.before(dS), cell_of(a.r, a.c))) sum = dS + at + " (the residual) + ";
  a.push(dX.back(), "∇X", cell_of(a.r, a.c));
  const bool cross = stream == "X" && value_in(a.R.e, "∇Z");
  return a.ok(cell + " = " + sum + "∇X" + at + " of Algorithm 5's adjoint (every head" +
              (cross ? "; the queries' path: Z's is ∇Z)" : ", both paths of a self-attention)"));
}

// "return P = softmax(W_u X)": one Algorithm 7 adjoint frame per column t.
bool unembed_line_adjoint(Adjoint& a, const LineScope& L) {
  if (nested_bindings(a.R.tr, L.k, 7, "∇e").empty()) return false;
  const std::string& n = a.n;
  const std::string cell = a.R.cell();
  const std::string logits = value_in(a.R.e, "∇b_u") ? "∇(W_u e + b_u)" : "∇(W_u e)";
  if (n == "∇X") {
    for (const Found& f : nested_bindings(a.R.tr, L.k, 7, "∇e"))
      if (a.R.tr.events[f.event].idx.t == a.c + 1) a.push(f, "∇e", cell_of(a.r, 0), " (t = " + I(a.c) + ")");
    return a.ok(cell + " = ∇e[" + I(a.r) + "] of Algorithm 7's adjoint for column " + I(a.c));
  }
  if (n == "∇W_u" || n == "∇b_u") {
    a.each_nested(7, logits, cell_of(a.r, 0));
    if (n == "∇b_u") return a.ok(cell + " = Σ_t " + logits + "[" + I(a.r) + "] over the columns t");
    a.forward("X", row_of(a.c));
    return a.ok(cell + " = Σ_t " + logits + "[" + I(a.r) + "] (column t) · X[" + I(a.c) + ", t]");
  }
  return false;
}

// The embedding lines: X = [e_1, …, e_ℓ] and e_t ← W_e[:, x[t]] + W_p[:, t] (and the extras).
bool embedding_lines_adjoint(Adjoint& a, const LineScope& L, const std::string& stream) {
  const std::string& n = a.n;
  const std::string cell = a.R.cell();
  if (n == "∇e_t" && a.R.e.kind == EventKind::Line) {
    push_found(a, L.before("∇" + stream), cell_of(a.r, a.c));
    return a.ok(cell + " = ∇" + stream + "[" + I(a.r) + ", " + I(a.c) + "]: e_t is column t of " + stream);
  }
  if (n == "∇W_e" || n == "∇W_p") {
    // Another embedding line before this one (Algorithm 8's x, then z) or a tied W_u added first.
    std::string sum;
    if (push_found(a, L.before(n), cell_of(a.r, a.c))) sum = n + "[" + I(a.r) + ", " + I(a.c) + "] (the lines before) + ";
    if (n == "∇W_p") {
      for (const Found& f : nested_bindings(a.R.tr, L.k, 2, "∇W_p[:, ℓ]"))
        if (a.R.tr.events[f.event].idx.t == a.c + 1) {
          a.push(f, "∇W_p[:, ℓ]", cell_of(a.r, 0), " (t = " + I(a.c) + ")");
          return a.ok(cell + " = " + sum + "∇e_t[" + I(a.r) + ", " + I(a.c) + "]: position " + I(a.c) + " adds W_p[:, " + I(a.c) + "]");
        }
      return a.ok(cell + " = " + sum + "0: this sequence has no position " + I(a.c));
    }
    int uses = 0;  // the columns gather: every position with token v
    for (const Found& f : nested_bindings(a.R.tr, L.k, 1, "∇W_e[:, v]")) {
      const Value* v = value_in(a.R.tr.events[a.R.tr.frame_start(f.event)], "v");
      if (v && static_cast<int>(v->m(0, 0)) == a.c + 1)
        ++uses, a.push(f, "∇W_e[:, v]", cell_of(a.r, 0), " (t = " + std::to_string(a.R.tr.events[f.event].idx.t) + ")");
    }
    sum += uses ? "Σ over the positions t with token " + I(a.c) + " of ∇e_t[" + I(a.r) + ", t]" : "0 from this line (no position has token " + I(a.c) + ")";
    return a.ok(cell + " = " + sum + tied_unembedding_part(a, L.k, a.r, a.c));
  }
  if (n == "∇W_s[:, 1]") {
    if (!push_found(a, L.sub("∇(e_t + W_s[:, 1])"), row_of(a.r))) push_found(a, L.before("∇e_t"), row_of(a.r));
    return a.ok(cell + " = Σ_t ∇e_t[" + I(a.r) + ", t]: every position adds W_s[:, 1]");
  }
  if (n == "∇W_s") {
    if (a.c != 0) return a.ok("no token has type " + I(a.c) + ": " + cell + " = 0");
    push_found(a, L.sub("∇W_s[:, 1]"), cell_of(a.r, 0));
    return a.ok(cell + " = ∇W_s[:, 1][" + I(a.r) + "]");
  }
  if ((n == "∇γ_emb" || n == "∇β_emb") && a.R.e.kind == EventKind::Line) {
    push_found(a, L.sub(n), cell_of(a.r, 0));
    return a.ok(cell + " = the embedding norm's " + n + "[" + I(a.r) + "]");
  }
  return false;
}

// Algorithm 9's line 10, X ← GELU(W_f X + b_f 1ᵀ) (its sub-steps; the line's own ∇X, ∇W_f, ∇b_f).
bool final_gelu_adjoint(Adjoint& a, const LineScope& L) {
  if (a.R.e.ref() != lines::e_transformer::final_gelu.adjoint()) return false;
  const std::string& n = a.n;
  const std::string cell = a.R.cell(), pre = "∇(W_f X + b_f 1ᵀ)";
  if (n == pre) {
    push_found(a, L.before("∇X"), cell_of(a.r, a.c)), a.forward("X", col_of(a.c));
    return a.ok(cell + " = ∇X[" + I(a.r) + ", " + I(a.c) + "] GELU′(W_f[" + I(a.r) + ", :] · X[:, " + I(a.c) + "] + b_f[" + I(a.r) + "])");
  }
  auto d = [&](const Blocks& b) { return push_found(a, L.sub(pre), b); };
  if (n == "∇W_f") return d(row_of(a.r)), a.forward("X", row_of(a.c)), a.ok(cell + " = " + row_text(pre, a.r) + " · " + row_text("X", a.c));
  if (n == "∇b_f") return d(row_of(a.r)), a.ok(cell + " = Σ_t " + pre + "[" + I(a.r) + ", t]");
  // Pre-LN (variant): the sub-step's ∇ of the final norm's output is W_fᵀ ∇(…); the line's ∇X is of the
  // norm's input, its Algorithm 6 frames' (norm_adjoint).
  const bool pre_ln_line = value_in(a.R.e, "∇γ_enc") != nullptr;
  if (n == "∇X (final norm's output)" || (n == "∇X" && !pre_ln_line))
    return d(col_of(a.c)), a.ok(cell + " = W_f[:, " + I(a.r) + "] · " + col_text(pre, a.c));
  return false;
}

// Algorithm 8's line 9 (post-LN): ∇Z = Σ over the decoder's layers of the cross-attention line's ∇Z.
bool encoder_output_adjoint(Adjoint& a) {
  if (a.R.e.ref() != lines::ed_transformer::enc_end.adjoint() || a.n != "∇Z" ||
      !nested_bindings(a.R.tr, a.R.k, 6, "∇e").empty())  // pre-LN: a norm line (norm_adjoint)
    return false;
  decoder_layers_dZ(a, a.R.k, a.c);
  return a.ok(a.R.cell() + " = Σ_l ∇Z[" + I(a.r) + ", " + I(a.c) + "] of the cross-attention line in each decoder layer l: Z gives every cross-attention its keys and values");
}

bool architecture_adjoint(Adjoint& a) {
  const Event& e = a.R.e;
  if (a.n == "l") return a.ok("the loop index l: the layers run backwards, L … 1");
  const LineScope L(a.R.tr, a.R.k);
  const std::string stream = stream_of(e);
  if (e.kind == EventKind::Line && encoder_output_adjoint(a)) return true;
  return final_gelu_adjoint(a, L) || norm_adjoint(a, L, stream) || mlp_adjoint(a, L, stream) ||
         attention_line_adjoint(a, L, stream) || unembed_line_adjoint(a, L) || embedding_lines_adjoint(a, L, stream);
}

}  // namespace

void backward_rules(Rule& R) {
  Adjoint a{R, R.v.name, R.r, R.c};
  const Event& e = R.e;
  const int alg = e.alg;
  bool found = false;
  if (e.kind == EventKind::Enter) found = enter_rules(a);
  else if (alg == 4) attention_adjoint(R), found = R.out.rule;
  else if (alg == algs::random_feature_attention) found = rf_attention_adjoint(R) || (attention_adjoint(R), R.out.rule);
  else if (alg == 5) found = a.n == "h" ? a.ok("the loop index h: the heads run backwards, H … 1") : mh_attention_adjoint(a);
  else if (alg == 6) found = layer_norm_adjoint(a);
  else if (alg == 7) found = unembedding_adjoint(a);
  else if (alg == 1 || alg == 2) found = embedding_adjoint(a);
  else if (alg >= 11) found = loss_adjoint(a);
  else found = architecture_adjoint(a);
  if (found && e.line > 0) R.out.reason += " (adjoint of line " + std::to_string(e.line) + ")";
}

}  // namespace sf::dependency_rules
