// The safetensors reader shared by every loader (core/io/safetensors.hpp).
//
// Trusts nothing in the file: every length, offset and shape is checked against the bytes
// actually present before anything is read from the buffer.
#include "core/io/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "core/model/error.hpp"

namespace sf {
namespace {

using json = nlohmann::json;

// Values are read as they lie in the file; safetensors is little-endian.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

constexpr uint64_t kMaxHeaderBytes = 100'000'000;       // safetensors' MAX_HEADER_SIZE
constexpr uint64_t kMaxFileBytes = uint64_t{16} << 30;  // refuse rather than map more (GPT-2 XL is 6.4 GB)
constexpr uint64_t kMaxElements = uint64_t{1} << 60;    // byte sizes (≤ 8 per element) stay in range
// A safetensors header is an object of objects whose arrays are shapes and offsets; these bound
// what a hostile header can make the JSON parser build (memory grows with both).
constexpr size_t kMaxNesting = 3;
constexpr size_t kMaxArrayLength = 64;
constexpr size_t kMaxObjectMembers = 100'000;

// Every dtype of safetensors' `enum Dtype` with its size in bytes.
const std::map<std::string, uint64_t>& dtype_sizes() {
  static const std::map<std::string, uint64_t> sizes{
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8}};
  return sizes;
}

[[noreturn]] void fail(const std::string& file, const std::string& what) { throw Error(file + ": " + what); }

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// IEEE half → float, exactly (every half is a float).
float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  if (exponent == 0) {  // zero or subnormal: mantissa · 2⁻²⁴
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));  // ±Inf, NaN
  return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

// n values of `dtype` (readable) at `src` into dst. memcpy, never a cast: src need not be aligned.
void convert(const char* src, const std::string& dtype, size_t n, float* dst) {
  if (dtype == "F32") {
    std::memcpy(dst, src, n * sizeof(float));
  } else if (dtype == "F16" || dtype == "BF16") {
    const bool bf16 = dtype == "BF16";
    for (size_t i = 0; i < n; ++i) {
      uint16_t bits;
      std::memcpy(&bits, src + 2 * i, 2);
      dst[i] = bf16 ? std::bit_cast<float>(uint32_t{bits} << 16) : half_to_float(bits);  // BF16: float's top half
    }
  } else {  // F64
    for (size_t i = 0; i < n; ++i) {
      double v;
      std::memcpy(&v, src + 8 * i, 8);
      dst[i] = static_cast<float>(v);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The header

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

uint64_t read_header_length(std::string_view bytes, const std::string& file) {
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

SafeTensor read_tensor_entry(const std::string& name, const json& entry, uint64_t buffer_size, const std::string& file) {
  if (!entry.is_object())
    fail(file, "tensor " + quoted(name) + " must be described by an object with \"dtype\", \"shape\" and \"data_offsets\"");
  const json& dtype = require_field(entry, "dtype", name, file);
  const json& shape_json = require_field(entry, "shape", name, file);
  const json& offsets_json = require_field(entry, "data_offsets", name, file);
  if (!dtype.is_string()) fail(file, "tensor " + quoted(name) + ": \"dtype\" must be a string such as \"F32\"");
  const auto size = dtype_sizes().find(dtype.get<std::string>());
  if (size == dtype_sizes().end())
    fail(file, "tensor " + quoted(name) + " has dtype " + dtype.get<std::string>() +
                   ", which is not a safetensors dtype (F32, F16, BF16, F64, I64, …)");

  SafeTensor t{name, size->first, read_shape(shape_json, name, file), 0, 0};
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
  if (t.end - t.begin != *numel * size->second)
    fail(file, "tensor " + quoted(name) + " holds " + std::to_string(t.end - t.begin) + " bytes but shape " +
                   shape_string(t.shape) + " of " + t.dtype + " needs " + std::to_string(*numel * size->second));
  return t;
}

// The tensors must tile the buffer exactly, as the reference reader demands: sorted by offset,
// each starts where the previous one ended, and the last ends at the end of the file.
void check_packing(std::vector<const SafeTensor*> order, uint64_t buffer_size, const std::string& file) {
  std::sort(order.begin(), order.end(),
            [](const SafeTensor* a, const SafeTensor* b) { return std::tie(a->begin, a->end) < std::tie(b->begin, b->end); });
  uint64_t expected = 0;
  const SafeTensor* previous = nullptr;
  for (const SafeTensor* t : order) {
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

}  // namespace

// ---------------------------------------------------------------------------------------------

// The file's bytes: a read-only mapping of the file, or bytes handed over in memory.
struct SafetensorsFile::Storage {
  const char* data = nullptr;
  size_t size = 0;
  void* mapping = nullptr;  // munmap'ed on destruction
  std::string owned;

  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    if (mapping) ::munmap(mapping, size);
  }
};

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

uint64_t SafeTensor::numel() const { return element_count(shape).value_or(0); }

std::string shape_string(const std::vector<int64_t>& shape) {
  std::ostringstream s;
  s << '[';
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << ']';
  return s.str();
}

bool shape_fits(const std::vector<int64_t>& file, const std::vector<int64_t>& expected) {
  if (file.size() < expected.size()) return false;
  const size_t extra = file.size() - expected.size();
  for (size_t i = 0; i < extra; ++i)
    if (file[i] != 1) return false;
  return std::equal(expected.begin(), expected.end(), file.begin() + static_cast<std::ptrdiff_t>(extra));
}

std::string first_non_finite(const float* data, size_t n, const std::vector<int64_t>& shape) {
  const float* bad = std::find_if(data, data + n, [](float v) { return !std::isfinite(v); });
  if (bad == data + n) return "";
  const size_t flat = static_cast<size_t>(bad - data);
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

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  auto storage = std::make_shared<Storage>();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const int stat_errno = errno;
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    ::close(fd);
    if (!stat_ok) throw Error("cannot read " + path + ": " + std::strerror(stat_errno));
    throw Error(path + (S_ISDIR(st.st_mode) ? " is a directory, not a file" : " is not a regular file"));
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > kMaxFileBytes) {
    ::close(fd);
    throw Error(path + " is " + std::to_string(size) + " bytes, more than the limit of " + std::to_string(kMaxFileBytes));
  }
  if (size > 0) {
    // MAP_POPULATE reads the file in one sequential sweep instead of a page fault per page.
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      throw Error("cannot read " + path + ": " + std::strerror(e));
    }
    storage->mapping = m;
    storage->data = static_cast<const char*>(m);
    storage->size = size;
  }
  ::close(fd);  // the mapping stays valid
  return SafetensorsFile(std::move(storage), path);
}

SafetensorsFile SafetensorsFile::from_bytes(std::string bytes, const std::string& name) {
  auto storage = std::make_shared<Storage>();
  storage->owned = std::move(bytes);
  storage->data = storage->owned.data();
  storage->size = storage->owned.size();
  return SafetensorsFile(std::move(storage), name);
}

std::string_view SafetensorsFile::bytes() const { return {storage_->data, storage_->size}; }

SafetensorsFile::SafetensorsFile(std::shared_ptr<const Storage> storage, const std::string& name)
    : storage_(std::move(storage)), name_(name) {
  const std::string_view all = bytes();
  const uint64_t header_length = read_header_length(all, name_);
  buffer_start_ = 8 + header_length;
  const uint64_t buffer_size = all.size() - buffer_start_;
  const json header = parse_header(all.data() + 8, all.data() + buffer_start_, name_);

  if (const auto it = header.find("__metadata__"); it != header.end()) {
    if (!it->is_object()) fail(name_, "\"__metadata__\" must be a JSON object of strings");
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string()) fail(name_, "__metadata__ value " + quoted(k) + " must be a string (safetensors metadata maps strings to strings)");
      metadata_[k] = v.get<std::string>();
    }
    has_metadata_ = true;
  }
  std::vector<const SafeTensor*> order;
  for (const auto& [tensor, entry] : header.items()) {
    if (tensor == "__metadata__") continue;
    const SafeTensor& t = tensors_[tensor] = read_tensor_entry(tensor, entry, buffer_size, name_);
    order.push_back(&t);
  }
  check_packing(std::move(order), buffer_size, name_);
}

const SafeTensor* SafetensorsFile::find(const std::string& tensor) const {
  const auto it = tensors_.find(tensor);
  return it == tensors_.end() ? nullptr : &it->second;
}

bool SafetensorsFile::readable(const std::string& dtype) {
  return dtype == "F32" || dtype == "F16" || dtype == "BF16" || dtype == "F64";
}

std::string SafetensorsFile::unreadable_reason(const SafeTensor& t) const {
  if (readable(t.dtype)) return "";
  return name_ + ": tensor " + quoted(t.name) + " has dtype " + t.dtype +
         "; Stepformer reads F32, F16, BF16 and F64 tensors (convert it to float32 first, e.g. tensor.float() in "
         "PyTorch)";
}

const float* SafetensorsFile::read(const SafeTensor& t, std::vector<float>& scratch) const {
  if (const std::string why = unreadable_reason(t); !why.empty()) throw Error(why);
  const char* src = storage_->data + buffer_start_ + t.begin;
  const size_t n = static_cast<size_t>(t.numel());
  if (t.dtype == "F32" && reinterpret_cast<uintptr_t>(src) % alignof(float) == 0) return reinterpret_cast<const float*>(src);
  scratch.resize(n);
  if (n > 0) convert(src, t.dtype, n, scratch.data());
  return scratch.data();
}

std::vector<float> SafetensorsFile::read_vector(const SafeTensor& t) const {
  std::vector<float> scratch;
  const float* data = read(t, scratch);
  if (data != scratch.data()) scratch.assign(data, data + t.numel());
  return scratch;
}

}  // namespace sf
