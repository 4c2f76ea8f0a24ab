// The rules' shared machinery (internal to core/trace/: dependencies.cpp's forward rules and
// backward_dependencies.cpp's adjoint rules): the paper's notation for cells, the lookup of the
// latest binding of a name visible at an event, the blocks a rule names, and Rule, one cell's rule
// being applied.
#pragma once
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/trace/dependencies.hpp"

namespace sf::dependency_rules {

inline std::string I(int i0) { return std::to_string(i0 + 1); }  // 0-based → the paper's 1-based

// The part of one axis a block covers, in the paper's notation: ":", "3", "2…5".
inline std::string span(int first, int count, int size) {
  if (first == 0 && count == size && size > 1) return ":";
  if (count == 1) return I(first);
  return I(first) + "…" + I(first + count - 1);
}

inline std::string block_text(const std::string& name, const Value& v, const CellBlock& b) {
  if (v.kind == ValueKind::Tokens) return name + "[" + span(b.col0, b.cols, -1) + "]";
  if (v.kind == ValueKind::Scalar) return name;
  const int rows = static_cast<int>(v.m.rows()), cols = static_cast<int>(v.m.cols());
  if (b.row0 == 0 && b.rows == rows && b.col0 == 0 && b.cols == cols && (rows > 1 || cols > 1)) return name;
  if (cols == 1) return name + "[" + span(b.row0, b.rows, rows) + "]";
  return name + "[" + span(b.row0, b.rows, rows) + ", " + span(b.col0, b.cols, cols) + "]";
}

// Contiguous runs of the rows t_z with mask(t_z, col) ≠ 0, as (first, count).
inline std::vector<std::pair<int, int>> unmasked_runs(const Value& mask, int col) {
  std::vector<std::pair<int, int>> runs;
  for (int r = 0; r < mask.m.rows(); ++r)
    if (mask.m(r, col) != 0.0f) {
      if (!runs.empty() && runs.back().first + runs.back().second == r)
        ++runs.back().second;
      else
        runs.push_back({r, 1});
    }
  return runs;
}

struct Found {
  size_t event;
  const Value* v;
};

inline bool visible(const Trace& tr, size_t j, int d, size_t first_sub) {
  return tr.events[j].depth == d && tr.events[j].kind != EventKind::SubStep ? true : j >= first_sub;
}

// The latest binding of `name` visible at event k: k's frame (k itself when include_k; the
// sub-steps of k's line before k), then the calling frames.
inline std::optional<Found> lookup(const Trace& tr, size_t k, const std::string& name, bool include_k) {
  size_t j = k;
  bool include = include_k;
  while (true) {
    const Event& e = tr.events[j];
    const int d = e.kind == EventKind::SubStep ? e.depth - 1 : e.depth;
    const size_t start = tr.frame_start(j);
    size_t first_sub = j + 1;
    if (e.kind == EventKind::SubStep)
      for (first_sub = j; first_sub > start && tr.events[first_sub - 1].kind == EventKind::SubStep &&
                          tr.events[first_sub - 1].depth == e.depth;)
        --first_sub;
    for (size_t i = include ? j + 1 : j; i-- > start;) {
      if (!visible(tr, i, d, first_sub)) continue;
      for (const Value& v : tr.events[i].values)
        if (v.name == name) return Found{i, &v};
    }
    const size_t c = tr.caller_line(j);
    if (c >= tr.size()) return std::nullopt;
    j = c;
    include = false;
  }
}

using Blocks = std::function<std::vector<CellBlock>(const Value&)>;
inline CellBlock whole(const Value& s) { return {0, 0, static_cast<int>(s.m.rows()), static_cast<int>(s.m.cols())}; }
inline Blocks col_of(int c) {
  return [c](const Value& s) { return std::vector<CellBlock>{{0, c, static_cast<int>(s.m.rows()), 1}}; };
}
inline Blocks row_of(int r) {
  return [r](const Value& s) { return std::vector<CellBlock>{{r, 0, 1, static_cast<int>(s.m.cols())}}; };
}
inline Blocks cell_of(int r, int c) {
  return [r, c](const Value&) { return std::vector<CellBlock>{{r, c, 1, 1}}; };
}
inline Blocks all_of() {
  return [](const Value& s) {
    if (s.kind == ValueKind::Tokens) return std::vector<CellBlock>{{0, 0, 1, static_cast<int>(s.tokens.size())}};
    return std::vector<CellBlock>{whole(s)};
  };
}
inline Blocks token_at(int t) {
  return [t](const Value&) { return std::vector<CellBlock>{{0, t, 1, 1}}; };
}

// The rows t_z of column c with Mask[t_z, c] = 1 (a column of S or of the weights).
inline Blocks rows_in_col(const Value& mask, int c) {
  return [&mask, c](const Value&) {
    std::vector<CellBlock> b;
    for (auto [first, n] : unmasked_runs(mask, c)) b.push_back({first, c, n, 1});
    return b;
  };
}

// One cell's rule being applied: the target, and the sources found so far.
struct Rule {
  const Trace& tr;
  size_t k;
  const Event& e;
  const Value& v;
  int r, c;
  CellDependencies out;

  const Value* find(const std::string& name) const {
    auto f = lookup(tr, k, name, name != v.name);
    return f ? f->v : nullptr;
  }
  // Adds the cells `blocks` of the latest `name` (before k when k rebinds it); false when none.
  bool add(const std::string& name, const Blocks& blocks) {
    auto f = lookup(tr, k, name, name != v.name);
    if (!f) return false;
    CellSource s{name, f->event, blocks(*f->v), ""};
    for (const CellBlock& b : s.blocks) s.text += (s.text.empty() ? "" : ", ") + block_text(name, *f->v, b);
    out.sources.push_back(std::move(s));
    return true;
  }
  // The first of `names` bound (e.g. W_u, or "W_u = W_eᵀ" when tied).
  bool add_any(std::initializer_list<const char*> names, const Blocks& blocks) {
    for (const char* n : names)
      if (add(n, blocks)) return true;
    return false;
  }
  // Columns t_z of `name` with Mask[t_z, c] = 1 (row `row` only, or whole columns).
  void add_unmasked_cols(const std::string& name, const Value& mask, int row = -1) {
    add(name, [&, row](const Value& s) {
      std::vector<CellBlock> b;
      for (auto [first, n] : unmasked_runs(mask, c))
        b.push_back(row < 0 ? CellBlock{0, first, static_cast<int>(s.m.rows()), n} : CellBlock{row, first, 1, n});
      return b;
    });
  }
  // Adds the cells `blocks` of a gradient bound earlier in this backward frame, or by a sub-step of
  // k's own line (the sub-steps just before k: "∇A from ∇Ṽ" before line 6's "∇S").
  bool add_grad(const std::string& name, const Blocks& blocks) {
    if (add(name, blocks)) return true;
    for (size_t j = k; j-- > 0 && tr.events[j].kind == EventKind::SubStep && tr.events[j].line == e.line &&
                       tr.events[j].alg == e.alg;)
      for (const Value& x : tr.events[j].values)
        if (x.name == name) return push(name, name, j, x, blocks);
    return false;
  }
  // Adds the cells `blocks` of the forward value `name` that this adjoint line reads (found in the
  // matching forward frame: forward_counterpart), written `shown` (e.g. A for softmax(S/√d_attn)).
  bool add_forward(const std::string& name, const std::string& shown, const Blocks& blocks) {
    const std::optional<ForwardValue> f = forward_counterpart(tr, k, "∇" + name);
    return f && push(name, shown, f->event, *f->value, blocks);
  }
  bool push(const std::string& name, const std::string& shown, size_t event, const Value& x, const Blocks& blocks) {
    CellSource s{name, event, blocks(x), ""};
    for (const CellBlock& b : s.blocks) s.text += (s.text.empty() ? "" : ", ") + block_text(shown, x, b);
    out.sources.push_back(std::move(s));
    return true;
  }
  void ok(std::string reason) {
    out.rule = true;
    out.reason = std::move(reason);
  }
  std::string cell() const { return v.name + "[" + I(r) + (v.m.cols() > 1 ? ", " + I(c) : "") + "]"; }
};

inline bool is_token_matrix(const std::string& n) { return n == "X" || n == "Z" || n == "X̃" || n == "Z̃"; }

// The value named `name` that e binds; nullptr when none.
inline const Value* value_in(const Event& e, const std::string& name) {
  for (const Value& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}
inline bool binds(const Event& e, const std::string& name) { return value_in(e, name) != nullptr; }

// The previous Line event of k's frame (same depth), or SIZE_MAX.
inline size_t previous_line(const Trace& tr, size_t k) {
  const int d = tr.events[k].depth;
  for (size_t j = k; j-- > 0;) {
    if (tr.events[j].depth < d) return SIZE_MAX;
    if (tr.events[j].depth == d && tr.events[j].kind == EventKind::Line) return j;
  }
  return SIZE_MAX;
}
// The adjoint lines of Stepformer's backward listings (backward_dependencies.cpp): the rule of
// backward event R.k for R's cell; leaves R.out.rule false when the line has none.
void backward_rules(Rule& R);
// Algorithm 4-R's adjoint lines 12 … 5 (rf_backward_dependencies.cpp; a variant, not in the paper):
// true when R's value has a rule there; its lines 3, 2, 1 are Algorithm 4's (backward_rules).
bool rf_attention_adjoint(Rule& R);

}  // namespace sf::dependency_rules
