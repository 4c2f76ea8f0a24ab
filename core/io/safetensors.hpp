// The one safetensors reader, shared by Stepformer's checkpoints (core/io/checkpoint.hpp) and the
// importers of the ecosystem's checkpoints (core/io/model_files.hpp). Format:
// docs/checkpoint-format.md (safetensors' own rules, plus the reader limits listed there).
//
// A file is mapped read-only (never copied whole into a string); the header is checked against
// the bytes actually present before anything is read from the buffer: lengths, JSON, dtypes,
// shapes, offsets (in range, no overlap, no gaps, no trailing bytes). Tensors of any safetensors
// dtype may lie in the file; F32, F16, BF16 and F64 ones are read as float32.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sf {

// One tensor as the header describes it.
struct SafeTensor {
  std::string name;
  std::string dtype;            // as the header writes it: "F32", "F16", "BF16", "F64", "I64", …
  std::vector<int64_t> shape;   // row-major (C order), no strides
  uint64_t begin = 0, end = 0;  // byte offsets into the buffer, end one past the last byte

  uint64_t numel() const;
};

// The number of elements of `shape`; nothing when a dimension is negative or the product is too
// large for any file (a zero dimension makes it 0 however large the others are).
std::optional<uint64_t> element_count(const std::vector<int64_t>& shape);

// "[50257, 768]"
std::string shape_string(const std::vector<int64_t>& shape);

// Whether a file's tensor of shape `file` holds a tensor of shape `expected`: the same shape, or
// the same after leading dimensions of size 1 (W_k [1, d_attn, d_e] where [d_attn, d_e] is
// expected, H_kv = 1). Row-major data is the same either way; nothing else is lenient.
bool shape_fits(const std::vector<int64_t>& file, const std::vector<int64_t>& expected);

// "NaN at element 37 (index [0, 2, 5])" for the first non-finite of n row-major values of that
// shape, or "" when every value is finite.
std::string first_non_finite(const float* data, size_t n, const std::vector<int64_t>& shape);

class SafetensorsFile {
 public:
  // Maps the file at `path` read-only and checks its header. Throws sf::Error whose message starts
  // with the path and says what is wrong (and never crashes, whatever the bytes).
  static SafetensorsFile open(const std::string& path);
  // The same checks on `bytes` (kept by the object); `name` stands for the file in messages.
  static SafetensorsFile from_bytes(std::string bytes, const std::string& name);

  const std::string& name() const { return name_; }
  // __metadata__, when the header has it (a JSON object of strings, checked).
  bool has_metadata() const { return has_metadata_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::map<std::string, SafeTensor>& tensors() const { return tensors_; }
  // nullptr when the file has no tensor of that name.
  const SafeTensor* find(const std::string& tensor) const;

  // Whether read() converts this dtype: F32, F16, BF16, F64.
  static bool readable(const std::string& dtype);
  // The message for a tensor whose dtype read() cannot convert ("" when it can).
  std::string unreadable_reason(const SafeTensor& t) const;
  // The tensor's values as float32, row-major. A mapped F32 tensor is returned in place (no copy);
  // anything else is converted into `scratch` (F64 values beyond float32's range become ±Inf).
  // Throws sf::Error for a dtype that is not readable().
  const float* read(const SafeTensor& t, std::vector<float>& scratch) const;
  // The same, always as a copy.
  std::vector<float> read_vector(const SafeTensor& t) const;

 private:
  struct Storage;
  SafetensorsFile(std::shared_ptr<const Storage> storage, const std::string& name);
  std::string_view bytes() const;

  std::shared_ptr<const Storage> storage_;
  std::string name_;
  uint64_t buffer_start_ = 0;  // 8 + header length
  bool has_metadata_ = false;
  std::map<std::string, std::string> metadata_;
  std::map<std::string, SafeTensor> tensors_;
};

}  // namespace sf
