// Checkpoint I/O: safetensors with F32 tensors (docs/checkpoint-format.md).
//
// Where θ's column-major matrices meet a Stepformer checkpoint's row-major tensors (the
// ecosystem's layouts meet them in core/io/ecosystem_*.cpp). The file itself is read and checked
// by the shared safetensors reader (core/io/safetensors.hpp); here its tensors are matched to the
// configuration before anything is allocated from it.
#include "core/io/checkpoint.hpp"

#include <algorithm>
#include <bit>
#include <nlohmann/json.hpp>

#include "core/io/fileio.hpp"
#include "core/model/error.hpp"

namespace sf {
namespace {

using ordered_json = nlohmann::ordered_json;

// Floats are written as they lie in memory; safetensors is little-endian.
static_assert(std::endian::native == std::endian::little, "checkpoint I/O assumes a little-endian host");

constexpr const char* kExtraPrefixes[] = {"optimizer.", "train."};

using RowMajorMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

[[noreturn]] void fail(const std::string& file, const std::string& what) { throw Error(file + ": " + what); }

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

bool is_extra_name(const std::string& name) {
  return std::any_of(std::begin(kExtraPrefixes), std::end(kExtraPrefixes),
                     [&](const char* p) { return name.rfind(p, 0) == 0; });
}

// θ stores each of an entry's `count` matrices column-major; the file stores [count,] rows, cols
// row-major. Vectors (cols = 1) are the same either way.
std::vector<float> entry_to_row_major(const ParamEntry& e, const float* theta) {
  std::vector<float> out(e.size());
  for (int k = 0; k < e.count; ++k) {
    const size_t at = k * e.matrix_size();
    Eigen::Map<RowMajorMat>(out.data() + at, e.rows, e.cols) = MapM<const float>(theta + e.offset + at, e.rows, e.cols);
  }
  return out;
}

void entry_from_row_major(const ParamEntry& e, const float* row_major, float* theta) {
  for (int k = 0; k < e.count; ++k) {
    const size_t at = k * e.matrix_size();
    MapM<float>(theta + e.offset + at, e.rows, e.cols) = Eigen::Map<const RowMajorMat>(row_major + at, e.rows, e.cols);
  }
}

// ---------------------------------------------------------------------------------------------
// Writing

void check_savable_extra(const std::string& path, const std::string& name, const ExtraTensor& t) {
  if (!is_extra_name(name))
    fail(path, "cannot save extra tensor " + quoted(name) +
                   ": extra tensor names must start with \"optimizer.\" or \"train.\" (the loader refuses others)");
  const auto n = element_count(t.shape);
  if (!n) fail(path, "cannot save extra tensor " + quoted(name) + ": shape " + shape_string(t.shape) + " is impossible");
  if (*n != t.data.size())
    fail(path, "cannot save extra tensor " + quoted(name) + ": shape " + shape_string(t.shape) + " has " +
                   std::to_string(*n) + " elements but it holds " + std::to_string(t.data.size()));
}

// Appends one tensor's entry to the header and its bytes to the buffer, right after the last.
void append_tensor(ordered_json& header, std::string& buffer, const std::string& name,
                   const std::vector<int64_t>& shape, const std::vector<float>& data) {
  const size_t begin = buffer.size();
  buffer.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float));
  header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {begin, buffer.size()}}};
}

std::string encode(const std::string& path, const Model& model, const std::map<std::string, std::string>& metadata,
                   const std::map<std::string, ExtraTensor>& extra) {
  if (model.theta.size() != model.table.total())
    fail(path, "cannot save: the model holds " + std::to_string(model.theta.size()) + " parameters but its table needs " +
                   std::to_string(model.table.total()));
  if (metadata.count("config")) fail(path, "cannot save: metadata key \"config\" is reserved for the model configuration");
  for (const auto& [name, t] : extra) check_savable_extra(path, name, t);

  ordered_json header;
  header["__metadata__"]["config"] = to_json(model.config);
  for (const auto& [k, v] : metadata) header["__metadata__"][k] = v;
  std::string buffer;
  for (const ParamEntry& e : model.table.entries()) {
    const std::vector<float> data = entry_to_row_major(e, model.theta.data());
    // A file the loader would refuse is worse than no file: the caller keeps the old one.
    const std::string bad = first_non_finite(data.data(), data.size(), e.shape());
    if (!bad.empty()) fail(path, "cannot save: parameter " + quoted(e.name) + " holds " + bad);
    append_tensor(header, buffer, e.name, e.shape(), data);
  }
  for (const auto& [name, t] : extra) append_tensor(header, buffer, name, t.shape, t.data);

  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& ex) {  // a name or metadata string that is not UTF-8
    fail(path, std::string("cannot save: ") + ex.what());
  }
  text.resize((text.size() + 7) / 8 * 8, ' ');  // spaces, never NUL: strict readers refuse NUL
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((static_cast<uint64_t>(text.size()) >> (8 * i)) & 0xFF);
  out += text;
  out += buffer;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reading: matching the tensors to the configuration

ModelConfig read_config(const std::string& text, const std::string& file) {
  try {
    return config_from_json(text);
  } catch (const std::exception& ex) {
    fail(file, std::string("the configuration in __metadata__.config is invalid: ") + ex.what());
  }
}

std::map<std::string, std::string> read_metadata(const SafetensorsFile& file) {
  if (!file.has_metadata())
    fail(file.name(), "the header has no \"__metadata__\"; a Stepformer checkpoint keeps its model configuration in "
                      "__metadata__.config (see docs/checkpoint-format.md)");
  std::map<std::string, std::string> metadata = file.metadata();
  if (!metadata.count("config"))
    fail(file.name(), "__metadata__ has no \"config\"; a Stepformer checkpoint keeps its model configuration (the JSON "
                      "of init --config) there");
  return metadata;
}

// Runs before the model is allocated, so that a configuration asking for billions of parameters
// cannot allocate them unless the file really holds them.
void check_parameters(const ParamTable& table, const std::string& arch, const SafetensorsFile& file) {
  // "a", "b", "c", "d", "e" and 3 more
  auto list = [](const std::vector<std::string>& names) {
    std::string out = names[0];
    for (size_t i = 1; i < std::min<size_t>(names.size(), 5); ++i) out += ", " + names[i];
    if (names.size() > 5) out += " and " + std::to_string(names.size() - 5) + " more";
    return out;
  };
  std::vector<std::string> missing, unknown;
  for (const ParamEntry& e : table.entries())
    if (!file.find(e.name)) missing.push_back(quoted(e.name) + " " + shape_string(e.shape()));
  for (const auto& [name, t] : file.tensors())
    if (!table.find(name) && !is_extra_name(name)) unknown.push_back(quoted(name));
  // A file of another architecture (or size) lacks some tensors and has others: name both.
  std::string why;
  if (!missing.empty())
    why = (missing.size() == 1 ? "parameter tensor " : "parameter tensors ") + list(missing) +
          (missing.size() == 1 ? " is" : " are") + " missing";
  if (!unknown.empty())
    why += (why.empty() ? "" : "; ") + std::string("unknown tensor ") + list(unknown) +
           ": not a parameter of this configuration; extra tensors must be named \"optimizer.…\" or \"train.…\"";
  if (!why.empty())
    fail(file.name(), why + " (the tensors do not match the configuration in __metadata__.config, arch \"" + arch + "\")");
  for (const auto& [name, t] : file.tensors()) {
    const ParamEntry* e = table.find(name);
    if (e && !shape_fits(t.shape, e->shape()))
      fail(file.name(), "tensor " + quoted(name) + " has shape " + shape_string(t.shape) + " but the configuration needs " +
                            shape_string(e->shape()) + "; the tensors do not match __metadata__.config");
    if (const std::string why_not = file.unreadable_reason(t); !why_not.empty()) throw Error(why_not);
  }
}

}  // namespace

void save_checkpoint(const std::string& path, const Model& model, const std::map<std::string, std::string>& metadata,
                     const std::map<std::string, ExtraTensor>& extra) {
  write_file_atomic(path, encode(path, model, metadata, extra));
}

Checkpoint load_checkpoint(const std::string& path) { return read_checkpoint(SafetensorsFile::open(path)); }

Checkpoint parse_checkpoint(const std::string& bytes, const std::string& name) {
  return read_checkpoint(SafetensorsFile::from_bytes(bytes, name));
}

Checkpoint read_checkpoint(const SafetensorsFile& file) {
  std::map<std::string, std::string> metadata = read_metadata(file);
  const ModelConfig config = read_config(metadata["config"], file.name());
  check_parameters(ParamTable(config), config.arch, file);

  Checkpoint ckpt{Model(config), {}, {}};
  metadata.erase("config");
  ckpt.metadata = std::move(metadata);
  std::vector<float> scratch;
  for (const ParamEntry& e : ckpt.model.table.entries()) {
    const float* data = file.read(*file.find(e.name), scratch);  // (count·rows·cols) row-major
    const std::string bad = first_non_finite(data, e.size(), e.shape());
    if (!bad.empty())
      fail(file.name(), "parameter " + quoted(e.name) + " holds " + bad + "; the model had diverged when it was saved");
    entry_from_row_major(e, data, ckpt.model.theta.data());
  }
  for (const auto& [name, t] : file.tensors())
    if (is_extra_name(name)) ckpt.extra[name] = ExtraTensor{t.shape, file.read_vector(t)};
  return ckpt;
}

}  // namespace sf
