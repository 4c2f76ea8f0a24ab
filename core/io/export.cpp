#include "core/io/export.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/io/fileio.hpp"
#include "core/model/error.hpp"
#include "core/tokenizers/tokenizer.hpp"

namespace sf {

std::string export_number(float x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buf[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(x));
    if (std::strtof(buf, nullptr) == x) break;
  }
  return buf;
}

// --- CSV --------------------------------------------------------------------------------------

std::string csv_axis_label(const CsvAxis& a, Eigen::Index i) {
  std::string s = a.index.empty() ? std::to_string(i + 1) : a.index + "=" + std::to_string(i + 1);
  if (static_cast<size_t>(i) < a.labels.size()) s += " '" + a.labels[static_cast<size_t>(i)] + "'";
  return s;
}

std::string csv_field(const std::string& s) {
  const bool quote = s.find_first_of(",\"\r\n") != std::string::npos ||
                     (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string matrix_csv(const ConstMatRef& m, const std::string& corner, const CsvAxis& rows, const CsvAxis& cols) {
  std::string out = csv_field(corner);
  for (Eigen::Index j = 0; j < m.cols(); ++j) out += "," + csv_field(csv_axis_label(cols, j));
  out += "\r\n";
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    out += csv_field(csv_axis_label(rows, i));
    for (Eigen::Index j = 0; j < m.cols(); ++j) out += "," + export_number(m(i, j));
    out += "\r\n";
  }
  return out;
}

void write_csv(const std::string& path, const ConstMatRef& m, const std::string& corner, const CsvAxis& rows,
               const CsvAxis& cols) {
  write_file_atomic(path, matrix_csv(m, corner, rows, cols));
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      rows.back().push_back(std::move(field));
      field.clear();
      rows.emplace_back();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (any) rows.back().push_back(std::move(field));
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

// --- the trace as JSON ------------------------------------------------------------------------

namespace {

// A file written piece by piece into path.tmp.<pid>, renamed over `path` by commit(); removed if
// never committed (an exception on the way leaves the old file whole).
class AtomicStream {
 public:
  explicit AtomicStream(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())) {
    f_ = std::fopen(tmp_.c_str(), "wb");
    if (!f_) throw Error("cannot write " + path_ + ": " + std::strerror(errno));
  }
  ~AtomicStream() {
    if (f_) std::fclose(f_);
    if (!committed_) std::remove(tmp_.c_str());
  }
  AtomicStream(const AtomicStream&) = delete;
  AtomicStream& operator=(const AtomicStream&) = delete;
  // Appends s, flushing the buffer to the file past 1 MB.
  void operator<<(const std::string& s) {
    buf_ += s;
    if (buf_.size() > (1u << 20)) flush();
  }
  void commit() {
    flush();
    const bool ok = std::fflush(f_) == 0 && ::fsync(::fileno(f_)) == 0;
    const int err = errno;
    const bool closed = std::fclose(f_) == 0;
    f_ = nullptr;
    if (!ok || !closed) throw Error("cannot write " + path_ + ": " + std::strerror(err ? err : EIO));
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
      throw Error("cannot replace " + path_ + ": " + std::strerror(errno));
    committed_ = true;
  }

 private:
  void flush() {
    if (std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
      throw Error("cannot write " + path_ + ": " + std::strerror(errno) + " (the old file, if any, is untouched)");
    buf_.clear();
  }
  std::string path_, tmp_, buf_;
  FILE* f_ = nullptr;
  bool committed_ = false;
};

using json = nlohmann::ordered_json;

const char* kind_name(EventKind k) {
  switch (k) {
    case EventKind::Enter: return "enter";
    case EventKind::Line: return "line";
    case EventKind::SubStep: return "substep";
  }
  return "line";
}

const char* kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::Matrix: return "matrix";
    case ValueKind::Scalar: return "scalar";
    case ValueKind::Tokens: return "tokens";
    case ValueKind::Mask: return "mask";
  }
  return "matrix";
}

const char* axis_name(Axis a) {
  switch (a) {
    case Axis::Feature: return "feature";
    case Axis::TokenX: return "token_x";
    case Axis::TokenZ: return "token_z";
    case Axis::Vocab: return "vocab";
    case Axis::Head: return "head";
  }
  return "feature";
}

// A number as JSON: the exact decimal, or the string "-inf", "inf", "nan" (JSON has no ∞).
std::string json_number(float x) {
  const std::string s = export_number(x);
  return std::isfinite(x) ? s : "\"" + s + "\"";
}

json token_list(const Tokens& ids, const Tokenizer* tok) {
  json j;
  j["ids"] = ids;
  if (tok) {
    json labels = json::array();
    for (int id : ids) labels.push_back(tok->label(id));
    j["labels"] = labels;
  }
  return j;
}

json indices_json(const Indices& idx) {
  json j = json::object();
  for (auto [name, v] : {std::pair{"l", idx.l}, {"h", idx.h}, {"t", idx.t}, {"i", idx.i}, {"n", idx.n}})
    if (v) j[name] = v;
  return j;
}

// One value: its description as JSON text, then (with `values`) its numbers, row-major.
void write_value(AtomicStream& out, const Value& v, const Tokenizer* tok, bool values) {
  json d;
  d["name"] = v.name;
  d["kind"] = kind_name(v.kind);
  if (v.kind == ValueKind::Tokens) {
    d["shape"] = {v.tokens.size()};
    d["tokens"] = token_list(v.tokens, tok);
  } else {
    d["shape"] = {v.m.rows(), v.m.cols()};
    d["axes"] = {axis_name(v.rows), axis_name(v.cols)};
  }
  if (!v.note.empty()) d["note"] = v.note;
  std::string s = d.dump();
  if (!values || v.kind == ValueKind::Tokens) {
    out << s;
    return;
  }
  s.pop_back();  // the closing brace: the values follow
  out << s + ",\"values\":[";
  for (Eigen::Index i = 0; i < v.m.rows(); ++i) {
    std::string row = i ? ",[" : "[";
    for (Eigen::Index j = 0; j < v.m.cols(); ++j) row += (j ? "," : "") + json_number(v.m(i, j));
    out << row + "]";
  }
  out << "]}";
}

}  // namespace

void write_trace_json(const std::string& path, const Trace& t, const TraceJsonInfo& info, bool values) {
  AtomicStream out(path);
  json head;
  head["format"] = "stepformer-trace";
  head["version"] = 1;
  head["values_included"] = values;
  json model;
  model["label"] = info.model_label;
  if (!info.config_json.empty()) model["config"] = json::parse(info.config_json);
  head["model"] = model;
  head["run"] = info.run;
  head["tokens"] = {{"x", token_list(t.tokens_x, info.tokenizer)}, {"z", token_list(t.tokens_z, info.tokenizer)}};
  json seqs = json::array();
  for (const Tokens& s : t.sequences) seqs.push_back(token_list(s, info.tokenizer));
  head["sequences"] = seqs;
  head["event_count"] = t.size();
  std::string s = head.dump();
  s.pop_back();
  out << s + ",\"events\":[\n";
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    json ej;
    ej["event"] = k + 1;
    ej["kind"] = kind_name(e.kind);
    ej["algorithm"] = e.alg;
    ej["line"] = e.line;
    ej["depth"] = e.depth;
    ej["indices"] = indices_json(e.idx);
    if (!e.label.empty()) ej["label"] = e.label;
    if (e.seq_x >= 0) ej["seq_x"] = e.seq_x;
    if (e.seq_z >= 0) ej["seq_z"] = e.seq_z;
    std::string es = ej.dump();
    es.pop_back();
    out << (k ? ",\n" : "") + es + ",\"values\":[";
    for (size_t i = 0; i < e.values.size(); ++i) {
      if (i) out << ",";
      write_value(out, e.values[i], info.tokenizer, values);
    }
    out << "]}";
  }
  out << "\n]}\n";
  out.commit();
}

}  // namespace sf
