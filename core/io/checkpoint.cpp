// Checkpoint I/O: safetensors with F32 tensors (docs/checkpoint-format.md).
//
// The only place where θ's column-major matrices meet the file's row-major tensors.
// Loading trusts nothing in the file: every length, offset and shape is checked against the
// bytes actually present before anything is allocated from it.
#include "core/io/checkpoint.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "core/model/error.hpp"
#include "core/io/fileio.hpp"

namespace sf {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// Floats are copied to and from the file as they lie in memory; safetensors is little-endian.
static_assert(std::endian::native == std::endian::little, "checkpoint I/O assumes a little-endian host");

constexpr uint64_t kMaxHeaderBytes = 100'000'000;   // safetensors' MAX_HEADER_SIZE
constexpr size_t kMaxFileBytes = size_t{4} << 30;   // 1 G floats; refuse rather than read more
constexpr uint64_t kMaxElements = (uint64_t{1} << 62) / sizeof(float);  // byte sizes stay in range
// A safetensors header is an object of objects whose arrays are shapes and offsets; these bound
// what a hostile header can make the JSON parser build (memory grows with both).
constexpr size_t kMaxNesting = 3;
constexpr size_t kMaxArrayLength = 64;
constexpr size_t kMaxObjectMembers = 100'000;
constexpr const char* kExtraPrefixes[] = {"optimizer.", "train."};

using RowMajorMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

[[noreturn]] void fail(const std::string& file, const std::string& what) { throw Error(file + ": " + what); }

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string shape_string(const std::vector<int64_t>& shape) {
  std::ostringstream s;
  s << '[';
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << ']';
  return s.str();
}

bool is_extra_name(const std::string& name) {
  return std::any_of(std::begin(kExtraPrefixes), std::end(kExtraPrefixes),
                     [&](const char* p) { return name.rfind(p, 0) == 0; });
}

// Number of elements of `shape`, or nothing when a dimension is negative or the product is
// too large for any file (a zero dimension makes it 0 however large the others are).
std::optional<uint64_t> element_count(const std::vector<int64_t>& shape) {
  if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; })) return std::nullopt;
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (n > kMaxElements / static_cast<uint64_t>(d)) return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

// "NaN at element 37 (index [0, 2, 5])", or "" when every value is finite. `data` is row-major.
std::string first_non_finite(const std::vector<float>& data, const std::vector<int64_t>& shape) {
  const auto bad = std::find_if(data.begin(), data.end(), [](float v) { return !std::isfinite(v); });
  if (bad == data.end()) return "";
  const size_t flat = static_cast<size_t>(bad - data.begin());
  std::vector<int64_t> index(shape.size());
  size_t rest = flat;
  for (size_t k = shape.size(); k-- > 0;) {
    const auto dim = static_cast<size_t>(shape[k]);
    index[k] = static_cast<int64_t>(rest % dim);
    rest /= dim;
  }
  const std::string what = std::isnan(*bad) ? "NaN" : (*bad > 0 ? "+Inf" : "-Inf");
  return what + " at element " + std::to_string(flat) + " (index " + shape_string(index) + ")";
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

void entry_from_row_major(const ParamEntry& e, const std::vector<float>& row_major, float* theta) {
  for (int k = 0; k < e.count; ++k) {
    const size_t at = k * e.matrix_size();
    MapM<float>(theta + e.offset + at, e.rows, e.cols) = Eigen::Map<const RowMajorMat>(row_major.data() + at, e.rows, e.cols);
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
    const std::string bad = first_non_finite(data, e.shape());
    if (!bad.empty()) fail(path, "cannot save: parameter " + quoted(e.name) + " holds " + bad);
    append_tensor(header, buffer, e.name, e.shape(), data);
  }
  for (const auto& [name, t] : extra) append_tensor(header, buffer, name, t.shape, t.data);

  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& ex) {  // a name or metadata string that is not UTF-8
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
// Reading: the header

// nlohmann keeps the last of two equal keys without a word; safetensors forbids duplicates.
// This parser callback refuses them, and refuses nesting and widths no safetensors header has.
class HeaderGuard {
 public:
  explicit HeaderGuard(const std::string& file) : file_(file) {}

  bool on_event(json::parse_event_t event, const json& parsed) {
    using E = json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        count_array_member();
        if (open_.size() == kMaxNesting) fail(file_, "the header is nested deeper than a safetensors header can be");
        open_.push_back({event == E::object_start, 0, {}});
        break;
      case E::object_end:
      case E::array_end: open_.pop_back(); break;
      case E::key: add_key(parsed.get<std::string>()); break;
      case E::value: count_array_member(); break;
    }
    return true;
  }

 private:
  struct Container {
    bool is_object;
    size_t members;
    std::set<std::string> keys;
  };

  void count_array_member() {
    if (open_.empty() || open_.back().is_object) return;
    if (++open_.back().members > kMaxArrayLength)
      fail(file_, "the header has an array longer than " + std::to_string(kMaxArrayLength) + " elements");
  }

  void add_key(const std::string& key) {
    Container& c = open_.back();
    if (!c.keys.insert(key).second) fail(file_, "the header has the key " + quoted(key) + " twice in one object");
    if (++c.members > kMaxObjectMembers)
      fail(file_, "the header has an object with more than " + std::to_string(kMaxObjectMembers) + " entries");
  }

  const std::string& file_;
  std::vector<Container> open_;
};

uint64_t read_header_length(const std::string& bytes, const std::string& file) {
  if (bytes.size() < 8)
    fail(file, "the file is only " + std::to_string(bytes.size()) +
                   " bytes long, too short to be a safetensors file (it starts with an 8-byte header length)");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  if (n > kMaxHeaderBytes)
    fail(file, "the header length " + std::to_string(n) + " is over the safetensors limit of " +
                   std::to_string(kMaxHeaderBytes) + " bytes; this is not a safetensors file or it is damaged");
  if (n > bytes.size() - 8)
    fail(file, "the header length " + std::to_string(n) + " exceeds the " + std::to_string(bytes.size() - 8) +
                   " bytes that follow it; the file is truncated or not a safetensors file");
  return n;
}

json parse_header(const char* begin, const char* end, const std::string& file) {
  // nlohmann stops at a NUL as if the text ended there, so NUL padding (which the reference
  // reader refuses) and anything after it would pass unseen. JSON text never holds a raw NUL.
  if (std::find(begin, end, '\0') != end)
    fail(file, "the header contains a NUL byte; it is not valid JSON (safetensors pads the header with spaces only)");
  HeaderGuard guard(file);
  json header;
  try {
    header = json::parse(begin, end, [&guard](int, json::parse_event_t e, json& parsed) { return guard.on_event(e, parsed); });
  } catch (const json::exception& ex) {
    fail(file, std::string("the header is not valid JSON (") + ex.what() + "); the file is damaged or not a safetensors file");
  }
  if (!header.is_object()) fail(file, "the header is not a JSON object; the file is damaged or not a safetensors file");
  return header;
}

std::map<std::string, std::string> read_metadata(const json& header, const std::string& file) {
  const auto it = header.find("__metadata__");
  if (it == header.end())
    fail(file, "the header has no \"__metadata__\"; a Stepformer checkpoint keeps its model configuration in "
               "__metadata__.config (see docs/checkpoint-format.md)");
  if (!it->is_object()) fail(file, "\"__metadata__\" must be a JSON object of strings");
  std::map<std::string, std::string> metadata;
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) fail(file, "__metadata__ value " + quoted(k) + " must be a string (safetensors metadata maps strings to strings)");
    metadata[k] = v.get<std::string>();
  }
  if (!metadata.count("config"))
    fail(file, "__metadata__ has no \"config\"; a Stepformer checkpoint keeps its model configuration (the JSON of "
               "init --config) there");
  return metadata;
}

// Where one tensor lies in the byte buffer, as the header says after checking.
struct StoredTensor {
  std::string name;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets into the buffer, end one past the last byte
};

const json& require_field(const json& entry, const char* field, const std::string& tensor, const std::string& file) {
  const auto it = entry.find(field);
  if (it == entry.end()) fail(file, "tensor " + quoted(tensor) + " has no " + quoted(field));
  return *it;
}

// A JSON integer in [0, 2⁶³): nlohmann parses every non-negative integer as unsigned.
std::optional<int64_t> json_count(const json& v) {
  if (!v.is_number_unsigned() || v.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}) return std::nullopt;
  return static_cast<int64_t>(v.get<uint64_t>());
}

std::vector<int64_t> read_shape(const json& j, const std::string& tensor, const std::string& file) {
  const std::string must = "tensor " + quoted(tensor) + ": \"shape\" must be an array of integers ≥ 0";
  if (!j.is_array()) fail(file, must);
  std::vector<int64_t> shape;
  for (const json& d : j) {
    if (d.is_number_integer() && !d.is_number_unsigned())
      fail(file, "tensor " + quoted(tensor) + " has a negative dimension in shape " + j.dump());
    const auto v = json_count(d);
    if (!v) fail(file, must + " (it is " + j.dump() + ")");
    shape.push_back(*v);
  }
  return shape;
}

std::pair<uint64_t, uint64_t> read_offsets(const json& j, const std::string& tensor, const std::string& file) {
  const std::string must = "tensor " + quoted(tensor) + ": \"data_offsets\" must be [BEGIN, END], two integers ≥ 0";
  if (!j.is_array() || j.size() != 2) fail(file, must);
  const auto begin = json_count(j[0]), end = json_count(j[1]);
  if (!begin || !end) fail(file, must + " (it is " + j.dump() + ")");
  return {static_cast<uint64_t>(*begin), static_cast<uint64_t>(*end)};
}

StoredTensor read_tensor_entry(const std::string& name, const json& entry, uint64_t buffer_size, const std::string& file) {
  if (!entry.is_object())
    fail(file, "tensor " + quoted(name) + " must be described by an object with \"dtype\", \"shape\" and \"data_offsets\"");
  const json& dtype = require_field(entry, "dtype", name, file);
  const json& shape_json = require_field(entry, "shape", name, file);
  const json& offsets_json = require_field(entry, "data_offsets", name, file);
  if (!dtype.is_string()) fail(file, "tensor " + quoted(name) + ": \"dtype\" must be a string such as \"F32\"");
  if (dtype != "F32")
    fail(file, "tensor " + quoted(name) + " has dtype " + dtype.get<std::string>() +
                   "; Stepformer reads only F32 checkpoints (convert it to float32 first, e.g. tensor.float() in PyTorch)");

  StoredTensor t{name, read_shape(shape_json, name, file), 0, 0};
  const auto numel = element_count(t.shape);
  if (!numel) fail(file, "tensor " + quoted(name) + " has shape " + shape_string(t.shape) + ", too many elements for any file");
  std::tie(t.begin, t.end) = read_offsets(offsets_json, name, file);
  if (t.end < t.begin)
    fail(file, "tensor " + quoted(name) + ": data_offsets end " + std::to_string(t.end) + " is before its begin " +
                   std::to_string(t.begin));
  if (t.end > buffer_size)
    fail(file, "tensor " + quoted(name) + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                   "] are out of range; the data buffer holds only " + std::to_string(buffer_size) +
                   " bytes (is the file truncated?)");
  if (t.end - t.begin != *numel * sizeof(float))
    fail(file, "tensor " + quoted(name) + " holds " + std::to_string(t.end - t.begin) + " bytes but shape " +
                   shape_string(t.shape) + " of F32 needs " + std::to_string(*numel * sizeof(float)));
  return t;
}

// The tensors must tile the buffer exactly, as the reference reader demands: sorted by offset,
// each starts where the previous one ended, and the last ends at the end of the file.
void check_packing(std::vector<const StoredTensor*> order, uint64_t buffer_size, const std::string& file) {
  std::sort(order.begin(), order.end(),
            [](const StoredTensor* a, const StoredTensor* b) { return std::tie(a->begin, a->end) < std::tie(b->begin, b->end); });
  uint64_t expected = 0;
  const StoredTensor* previous = nullptr;
  for (const StoredTensor* t : order) {
    if (t->begin < expected)
      fail(file, "tensors " + quoted(previous->name) + " and " + quoted(t->name) + " overlap in the data buffer");
    if (t->begin > expected)
      fail(file, "there is a gap of " + std::to_string(t->begin - expected) + " bytes before tensor " + quoted(t->name) +
                     "; safetensors packs tensors back to back");
    expected = t->end;
    previous = t;
  }
  if (expected != buffer_size)
    fail(file, "there are " + std::to_string(buffer_size - expected) +
                   " trailing bytes after the last tensor; the file is damaged or was written incorrectly");
}

std::map<std::string, StoredTensor> read_tensor_entries(const json& header, uint64_t buffer_size, const std::string& file) {
  std::map<std::string, StoredTensor> tensors;
  std::vector<const StoredTensor*> order;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    const auto& t = tensors[name] = read_tensor_entry(name, entry, buffer_size, file);
    order.push_back(&t);
  }
  check_packing(std::move(order), buffer_size, file);
  return tensors;
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

// Runs before the model is allocated, so that a configuration asking for billions of parameters
// cannot allocate them unless the file really holds them.
void check_parameters(const ParamTable& table, const std::string& arch, const std::map<std::string, StoredTensor>& tensors,
                      const std::string& file) {
  // "a", "b", "c", "d", "e" and 3 more
  auto list = [](const std::vector<std::string>& names) {
    std::string out = names[0];
    for (size_t i = 1; i < std::min<size_t>(names.size(), 5); ++i) out += ", " + names[i];
    if (names.size() > 5) out += " and " + std::to_string(names.size() - 5) + " more";
    return out;
  };
  std::vector<std::string> missing, unknown;
  for (const ParamEntry& e : table.entries())
    if (!tensors.count(e.name)) missing.push_back(quoted(e.name) + " " + shape_string(e.shape()));
  for (const auto& [name, t] : tensors)
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
    fail(file, why + " (the tensors do not match the configuration in __metadata__.config, arch \"" +
                   arch + "\")");
  for (const ParamEntry& e : table.entries()) {
    const StoredTensor& t = tensors.at(e.name);
    if (t.shape != e.shape())
      fail(file, "tensor " + quoted(e.name) + " has shape " + shape_string(t.shape) + " but the configuration needs " +
                     shape_string(e.shape()) + "; the tensors do not match __metadata__.config");
  }
}

std::vector<float> read_floats(const std::string& bytes, size_t buffer_start, const StoredTensor& t) {
  std::vector<float> data((t.end - t.begin) / sizeof(float));
  // memcpy, not a cast: the buffer need not be 4-byte aligned in memory or in the file.
  if (!data.empty()) std::memcpy(data.data(), bytes.data() + buffer_start + t.begin, t.end - t.begin);
  return data;
}

}  // namespace

void save_checkpoint(const std::string& path, const Model& model, const std::map<std::string, std::string>& metadata,
                     const std::map<std::string, ExtraTensor>& extra) {
  write_file_atomic(path, encode(path, model, metadata, extra));
}

Checkpoint load_checkpoint(const std::string& path) { return parse_checkpoint(read_file(path, kMaxFileBytes), path); }

Checkpoint parse_checkpoint(const std::string& bytes, const std::string& name) {
  const uint64_t header_length = read_header_length(bytes, name);
  const size_t buffer_start = 8 + header_length;
  const uint64_t buffer_size = bytes.size() - buffer_start;
  const json header = parse_header(bytes.data() + 8, bytes.data() + buffer_start, name);
  std::map<std::string, std::string> metadata = read_metadata(header, name);
  const std::map<std::string, StoredTensor> tensors = read_tensor_entries(header, buffer_size, name);
  const ModelConfig config = read_config(metadata["config"], name);
  check_parameters(ParamTable(config), config.arch, tensors, name);

  Checkpoint ckpt{Model(config), {}, {}};
  metadata.erase("config");
  ckpt.metadata = std::move(metadata);
  for (const ParamEntry& e : ckpt.model.table.entries()) {
    const std::vector<float> data = read_floats(bytes, buffer_start, tensors.at(e.name));
    const std::string bad = first_non_finite(data, e.shape());
    if (!bad.empty())
      fail(name, "parameter " + quoted(e.name) + " holds " + bad + "; the model had diverged when it was saved");
    entry_from_row_major(e, data, ckpt.model.theta.data());
  }
  for (const auto& [tname, t] : tensors)
    if (is_extra_name(tname)) ckpt.extra[tname] = ExtraTensor{t.shape, read_floats(bytes, buffer_start, t)};
  return ckpt;
}

}  // namespace sf
