#include "core/experiments/interventions.hpp"

#include "core/model/error.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace sf {

namespace {

// "[row, col]", 1-based (built by appending: GCC 12 warns falsely on "[" + std::to_string(…)).
std::string cell(int row, int col) {
  std::string s(1, '[');
  s += std::to_string(row + 1);
  s += ", ";
  s += std::to_string(col + 1);
  return s += ']';
}

std::string shape(Eigen::Index rows, Eigen::Index cols) {
  return std::to_string(rows) + "×" + std::to_string(cols);
}

// The block of `e` written into `value`, after checking that it fits.
template <class M>
void write_block(const Intervention& e, M& value) {
  if (e.row < 0 || e.col < 0 || e.row + e.block.rows() > value.rows() || e.col + e.block.cols() > value.cols())
    throw Error("experiment \"" + e.label + "\": " + shape(e.block.rows(), e.block.cols()) + " at " +
                cell(e.row, e.col) + " does not fit " + e.at.name + " (" + shape(value.rows(), value.cols()) +
                "): choose a cell inside it");
  value.block(e.row, e.col, e.block.rows(), e.block.cols()) = e.block.template cast<typename M::Scalar>();
}

template <class M>
void apply_one(const Intervention& e, M& value) {
  switch (e.kind) {
    case Intervention::Kind::Edit:
    case Intervention::Kind::Patch:
      write_block(e, value);
      break;
    case Intervention::Kind::Ablate:
      value.setZero();  // Ṽ^h ← 0
      break;
    case Intervention::Kind::Mask:
      if constexpr (std::is_same_v<M, Mask>) {
        if (e.row < 0 || e.col < 0 || e.row >= value.rows() || e.col >= value.cols())
          throw Error("experiment \"" + e.label + "\": Mask" + cell(e.row, e.col) + " is outside the mask (ℓ_z×ℓ_x = " +
                      shape(value.rows(), value.cols()) + ")");
        value(e.row, e.col) = value(e.row, e.col) ? 0 : 1;
      }
      break;
    case Intervention::Kind::Weight:
      break;  // applied to a copy of θ (edited_model), not at a patch point
  }
}

std::string called_from(LineRef call) {
  return "called from Alg. " + std::to_string(call.alg) + " line " + std::to_string(call.line);
}

}  // namespace

std::string describe(const PatchPoint& at) {
  std::string s = at.name + ", Alg. " + std::to_string(at.alg) + " line " + std::to_string(at.line);
  if (at.l) s += ", layer " + std::to_string(at.l);
  if (at.h) s += ", head " + std::to_string(at.h);
  if (!at.call.none()) s += " (" + called_from(at.call) + ")";
  return s;
}

Intervention edit_cell(const PatchPoint& at, int row, int col, float value) {
  Intervention e;
  e.at = at;
  e.row = row - 1, e.col = col - 1;
  e.block = MatF::Constant(1, 1, value);
  e.label = at.name + cell(e.row, e.col) + " ← " + std::to_string(value) + " (" + describe(at) + ")";
  return e;
}

Intervention edit_value(const PatchPoint& at, MatF value) {
  Intervention e;
  e.at = at;
  e.block = std::move(value);
  e.label = at.name + " ← a " + shape(e.block.rows(), e.block.cols()) + " matrix (" + describe(at) + ")";
  return e;
}

Intervention ablate_head(LineRef call, int l, int h) {
  Intervention e;
  e.kind = Intervention::Kind::Ablate;
  e.at = {call, lines::attention::V_tilde.alg, lines::attention::V_tilde.line, l, h, "Ṽ"};
  e.label = "ablate head " + std::to_string(h) + " of layer " + std::to_string(l) + ": Ṽ ← 0 (Alg. 4 line 6" +
            (call.none() ? "" : ", " + called_from(call)) + ")";
  return e;
}

Intervention toggle_mask(LineRef call, int l, int h, int t_z, int t_x) {
  Intervention e;
  e.kind = Intervention::Kind::Mask;
  e.at = {call, lines::attention::mask.alg, lines::attention::mask.line, l, h, "Mask"};
  e.row = t_z - 1, e.col = t_x - 1;
  e.label = "toggle Mask" + cell(e.row, e.col) + " (" + describe(e.at) + ")";
  return e;
}

Intervention patch_from(const PatchPoint& at, const TraceMat& value, int t, const std::string& prompt_b) {
  if (t < 0 || t > value.cols())
    throw Error("activation patching: position " + std::to_string(t) + " is outside " + at.name + " (" +
                std::to_string(value.cols()) + " columns in prompt B's run): choose 1…" + std::to_string(value.cols()));
  Intervention e;
  e.kind = Intervention::Kind::Patch;
  e.at = at;
  e.col = t > 0 ? t - 1 : 0;
  e.block = t > 0 ? MatF(value.col(t - 1)) : MatF(value);
  e.label = at.name + (t > 0 ? "[:, " + std::to_string(t) + "]" : "") + " ← prompt B '" + prompt_b + "' (" +
            describe(at) + ")";
  return e;
}

Intervention edit_weight(const std::string& tensor, int k, int row, int col, float value, const std::string& symbol) {
  Intervention e;
  e.kind = Intervention::Kind::Weight;
  e.tensor = tensor;
  e.k = k;
  e.row = row - 1, e.col = col - 1;
  e.value = value;
  e.label = symbol + cell(e.row, e.col) + " ← " + std::to_string(value) + " (θ: " + tensor +
            (k ? ", head " + std::to_string(k + 1) : "") + ")";
  return e;
}

Patches::Patches(const std::vector<Intervention>& list) {
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i].kind != Intervention::Kind::Weight) list_.push_back(&list[i]), index_.push_back(i);
  hits_ = std::make_unique<std::atomic<int>[]>(list_.size());
}

template <class M>
void Patches::apply(const PatchPoint& at, M& value) const {
  for (size_t i = 0; i < list_.size(); ++i)  // in list order: a later intervention sees an earlier one's change
    if (list_[i]->at == at) {
      apply_one(*list_[i], value);
      ++hits_[i];
    }
}

std::vector<size_t> Patches::unmet() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < list_.size(); ++i)
    if (hits_[i] == 0) out.push_back(index_[i]);
  return out;
}

void apply_patches(const Patches& p, const PatchPoint& at, MatF& value) { p.apply(at, value); }
void apply_patches(const Patches& p, const PatchPoint& at, Mat<double>& value) { p.apply(at, value); }
void apply_patches(const Patches& p, const PatchPoint& at, Mask& value) { p.apply(at, value); }

std::shared_ptr<const Model> edited_model(const Model& m, const std::vector<Intervention>& list) {
  std::shared_ptr<Model> out;
  for (const Intervention& e : list) {
    if (e.kind != Intervention::Kind::Weight) continue;
    if (!out) out = std::make_shared<Model>(m);
    const ParamEntry* p = m.table.find(e.tensor);
    if (!p) throw Error("experiment \"" + e.label + "\": the model has no tensor " + e.tensor);
    if (e.k < 0 || e.k >= p->count || e.row < 0 || e.row >= p->rows || e.col < 0 || e.col >= p->cols)
      throw Error("experiment \"" + e.label + "\": " + cell(e.row, e.col) + (p->count > 1 ? " of head " + std::to_string(e.k + 1) : "") +
                  " is outside " + e.tensor + " (" + (p->count > 1 ? std::to_string(p->count) + " heads of " : "") +
                  shape(p->rows, p->cols) + ")");
    // column-major, heads one after another (params.hpp)
    out->theta[p->offset + e.k * p->matrix_size() + static_cast<size_t>(e.col) * p->rows + e.row] = e.value;
  }
  return out;
}

MatF run_experiment(const Model& m, const Tokens& z, const Tokens& x, const std::vector<Intervention>& list, Tracer* tr) {
  const std::shared_ptr<const Model> edited = edited_model(m, list);
  const Model& model = edited ? *edited : m;
  const Patches patches(list);
  MatF P = architecture(model.config).forward(model, z, x, tr, {}, &patches);  // (N_V, ℓ_x)
  for (size_t i : patches.unmet())
    throw Error("experiment \"" + list[i].label + "\" met no patch point in this run: " + describe(list[i].at) +
                " is not computed here (check the layer, head and line)");
  return P;
}

PatchPoint point_of(const Trace& t, size_t k, const std::string& name) {
  if (k >= t.size()) throw Error("no event " + std::to_string(k + 1) + " in this trace");
  const size_t start = t.frame_start(k);
  const int d = t.events[start].depth;  // the frame's lines; its sub-steps are one deeper
  for (size_t j = k + 1; j-- > start;) {
    const Event& e = t.events[j];
    if (e.depth != d && !(e.kind == EventKind::SubStep && e.depth == d + 1)) continue;  // a nested call's values
    bool binds = false;
    for (const Value& v : e.values) binds = binds || v.name == name;
    if (!binds) continue;
    const LineRef call = t.outer_caller_ref(j);
    if (e.kind == EventKind::Enter) {
      constexpr LineRef mask_line = lines::attention::mask;  // the line that reads Algorithm 4's input Mask
      if (e.alg == mask_line.alg && name == "Mask") return {call, mask_line.alg, mask_line.line, e.idx.l, e.idx.h, "Mask"};
      const PseudoAlgorithm* alg = pseudocode(e.alg);
      throw Error(name + " is an input of Algorithm " + std::to_string(e.alg) + " (" + (alg ? alg->name : "") +
                  ") here: a parameter of θ is edited as a weight (exp-weight), an activation where it is computed "
                  "(step out to the calling line)");
    }
    return {call, e.alg, e.line, e.idx.l, e.alg == 4 ? e.idx.h : 0, name};
  }
  throw Error("no value named " + name + " is in scope at this step");
}

size_t find_point(const Trace& t, const PatchPoint& at) {
  for (size_t j = 0; j < t.size(); ++j) {
    const Event& e = t.events[j];
    if (e.kind == EventKind::Enter || e.alg != at.alg || e.line != at.line || e.idx.l != at.l ||
        (at.alg == 4 && e.idx.h != at.h))
      continue;
    bool binds = false;
    for (const Value& v : e.values) binds = binds || v.name == at.name;
    if (!binds) continue;
    if (t.outer_caller_ref(j) == at.call) return j;
  }
  return t.size();
}

const Value* value_at(const Trace& t, const PatchPoint& at) {
  const size_t j = find_point(t, at);
  if (j >= t.size()) return nullptr;
  for (const Value& v : t.events[j].values)
    if (v.name == at.name) return &v;
  return nullptr;
}

LineRef attention_call(const Trace& t, int l, int h, LineRef prefer) {
  LineRef first;
  for (size_t j = 0; j < t.size(); ++j) {
    const Event& e = t.events[j];
    if (e.ref() != lines::attention::V_tilde || e.kind != EventKind::Line || e.idx.l != l || e.idx.h != h) continue;
    const LineRef call = t.outer_caller_ref(j);
    if (call == prefer) return call;
    if (first.none()) first = call;
  }
  return first;
}

}  // namespace sf
