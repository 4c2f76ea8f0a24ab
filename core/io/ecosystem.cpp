// The engine shared by the ecosystem's importers (core/io/ecosystem.hpp): planned copies from the
// file's row-major tensors into θ's column-major matrices, with their provenance.
#include "core/io/ecosystem.hpp"

#include <algorithm>
#include <cctype>

#include "core/model/error.hpp"

namespace sf {

namespace {

using RowMajorView = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// A file tensor as a matrix: [R, C], or a vector [N] as N × 1.
int64_t rows_of(const SafeTensor& t) { return t.shape.empty() ? 1 : t.shape[0]; }
int64_t cols_of(const SafeTensor& t) { return t.shape.size() < 2 ? 1 : t.shape[1]; }

// "0:768", or ":" for the whole axis.
std::string span_text(Span s, int64_t whole) {
  return s.begin == 0 && s.end == whole ? ":" : std::to_string(s.begin) + ":" + std::to_string(s.end);
}

// "wte.weight", "h.0.attn.c_attn.weight[:, 0:768]ᵀ", "h.0.attn.c_attn.bias[768:1536]" (Python's
// 0-based, end-exclusive slices, as the file's tensors are indexed in PyTorch).
std::string source_text(const SafeTensor& src, Span rows, Span cols, bool transposed) {
  std::string s = src.name;
  const bool whole = rows.size() == rows_of(src) && cols.size() == cols_of(src);
  if (!whole) {
    s += "[";
    s += span_text(rows, rows_of(src));
    if (src.shape.size() >= 2) s.append(", ").append(span_text(cols, cols_of(src)));
    s += "]";
  }
  if (transposed) s += "ᵀ";
  return s;
}

// The paper's symbol of an entry for people: the layer written in ("γ¹_2", "W^2_mlp1"), the head
// superscript left to "for heads 1–H".
std::string symbol_text(const ParamEntry& e) {
  auto ends_with = [](const std::string& s, const char* tail) { return s.size() >= 2 && s.compare(s.size() - 2, 2, tail) == 0; };
  std::string s = e.symbol;
  if (ends_with(s, "^h") || ends_with(s, "^g")) s = s.substr(0, s.size() - 2);
  if (e.layer > 0) {
    const std::string l = std::to_string(e.layer);
    if (ends_with(s, "_l")) s = s.substr(0, s.size() - 1) + l;                                   // γ¹_l → γ¹_2
    if (const size_t at = s.find("^l_"); at != std::string::npos) s = s.substr(0, at + 1) + l + s.substr(at + 2);  // W^l_mlp1 → W^2_mlp1
  }
  return s;
}

}  // namespace

const SafeTensor& TensorImport::need(const std::string& name, const std::vector<int64_t>& shape, const std::string& why) {
  const SafeTensor* t = file_.find(name);
  if (!t)
    throw Error(file_.name() + ": the tensor " + quoted(name) + " " + shape_string(shape) + " is missing (" + why +
                "); the checkpoint is incomplete or in another layout");
  if (!shape_fits(t->shape, shape))
    throw Error(file_.name() + ": tensor " + quoted(name) + " has shape " + shape_string(t->shape) + " but " +
                shape_string(shape) + " is expected (" + why + ")");
  if (const std::string bad = file_.unreadable_reason(*t); !bad.empty()) throw Error(bad);
  used_.insert(name);
  if (t->shape == shape) return *t;
  // Extra leading 1s: the same bytes under the expected shape, which the planned copies index.
  reshaped_.push_back(std::make_unique<SafeTensor>(*t));
  reshaped_.back()->shape = shape;
  return *reshaped_.back();
}

void TensorImport::refuse_unused(const std::string& layout) const {
  std::vector<std::string> unknown;
  for (const auto& [name, t] : file_.tensors())
    if (!used_.count(name)) unknown.push_back(quoted(name) + " " + shape_string(t.shape));
  if (unknown.empty()) return;
  std::string list = unknown[0];
  for (size_t i = 1; i < std::min<size_t>(unknown.size(), 5); ++i) list += ", " + unknown[i];
  if (unknown.size() > 5) list += " and " + std::to_string(unknown.size() - 5) + " more";
  throw Error(file_.name() + ": " + (unknown.size() == 1 ? "the tensor " : "the tensors ") + list +
              (unknown.size() == 1 ? " is" : " are") + " not part of the " + layout +
              " layout as config.json describes it (docs/ecosystem.md lists the tensors Stepformer reads and ignores)");
}

const ParamEntry& TensorImport::entry(const std::string& paper) {
  if (!table_) table_ = std::make_unique<ParamTable>(config);
  return table_->at(paper);
}

void TensorImport::add_copy(const std::string& paper, int head, const SafeTensor& src, Span rows, Span cols,
                            bool transposed) {
  const ParamEntry& e = entry(paper);
  const int64_t want_rows = transposed ? e.cols : e.rows, want_cols = transposed ? e.rows : e.cols;
  // The planners' shapes come from the same numbers as the table's: a mismatch is a planner bug.
  if (rows.begin < 0 || cols.begin < 0 || rows.end > rows_of(src) || cols.end > cols_of(src) ||
      rows.size() != want_rows || cols.size() != want_cols)
    throw Error("internal error: the block " + source_text(src, rows, cols, transposed) + " does not fit " + paper);
  copies_.push_back({paper, head, &src, rows, cols, transposed});
}

void TensorImport::whole(const std::string& paper, const SafeTensor& src, bool transposed) {
  const Span rows{0, rows_of(src)}, cols{0, cols_of(src)};
  add_copy(paper, 0, src, rows, cols, transposed);
  provenance_[paper] = symbol_text(entry(paper)) + " ← " + source_text(src, rows, cols, transposed);
}

void TensorImport::heads(const std::string& paper, const SafeTensor& src, int axis, int64_t offset, bool transposed) {
  const ParamEntry& e = entry(paper);
  const int64_t block_rows = transposed ? e.cols : e.rows, block_cols = transposed ? e.rows : e.cols;
  const int64_t step = axis == 0 ? block_rows : block_cols;  // how far head k+1 starts after head k
  for (int k = 0; k < e.count; ++k) {
    const Span along{offset + k * step, offset + (k + 1) * step};
    add_copy(paper, k, src, axis == 0 ? along : Span{0, block_rows}, axis == 0 ? Span{0, block_cols} : along, transposed);
  }
  const Span all{offset, offset + e.count * step};
  const Span rows = axis == 0 ? all : Span{0, block_rows}, cols = axis == 0 ? Span{0, block_cols} : all;
  const std::string unit = src.shape.size() < 2 ? "entries" : axis == 0 ? "rows" : "columns";
  provenance_[paper] = symbol_text(e) + (e.count == 1 ? " for head 1" : " for heads 1–" + std::to_string(e.count)) +
                       " ← " + source_text(src, rows, cols, transposed) + ", " + std::to_string(step) + " " + unit +
                       " per head";
}

void TensorImport::zero(const std::string& paper, const std::string& why) {
  provenance_[paper] = symbol_text(entry(paper)) + " = 0 (" + why + ")";
}

Model TensorImport::run() const {
  Model m(config);  // θ = 0
  for (const ParamEntry& e : m.table.entries())
    if (!provenance_.count(e.name)) throw Error("internal error: the import plans no values for " + e.name);
  const SafeTensor* current = nullptr;
  const float* data = nullptr;  // current's values, row-major
  std::vector<float> scratch;
  for (const Copy& c : copies_) {
    if (c.src != current) {  // the planners keep each source's copies together: each is read once
      current = c.src;
      data = file_.read(*current, scratch);
      const std::string bad = first_non_finite(data, current->numel(), current->shape);
      if (!bad.empty())
        throw Error(file_.name() + ": tensor " + quoted(current->name) + " holds " + bad +
                    "; the checkpoint is damaged or the model had diverged when it was saved");
    }
    const ParamEntry& e = m.table.at(c.paper);
    const RowMajorView src(data, rows_of(*current), cols_of(*current));
    const auto block = src.block(c.rows.begin, c.cols.begin, c.rows.size(), c.cols.size());
    MapM<float> dst(m.theta.data() + e.offset + c.head * e.matrix_size(), e.rows, e.cols);  // (rows, cols) of the paper
    if (c.transposed)
      dst = block.transpose();
    else
      dst = block;
  }
  return m;
}

int count_layers(const SafetensorsFile& file, const std::string& prefix) {
  int layers = 0;
  for (const auto& [name, t] : file.tensors()) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    size_t end = prefix.size();
    while (end < name.size() && end < prefix.size() + 6 && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    if (end == prefix.size() || end >= name.size() || name[end] != '.') continue;
    layers = std::max(layers, std::stoi(name.substr(prefix.size(), end - prefix.size())) + 1);
  }
  return layers;
}

bool same_values(const SafetensorsFile& file, const SafeTensor& a, const SafeTensor& b) {
  if (a.shape != b.shape) return false;
  std::vector<float> scratch_a, scratch_b;
  const float* x = file.read(a, scratch_a);
  const float* y = file.read(b, scratch_b);
  return std::equal(x, x + a.numel(), y);
}

}  // namespace sf
