// Checkpoints: safetensors files with F32 tensors (format: docs/checkpoint-format.md).
//
// Every parameter of the table is stored under its paper name with the paper's matrix shape,
// row-major; the configuration is JSON under __metadata__["config"]. Extra tensors (an
// optimizer's state, say) and extra metadata strings may ride along.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/io/safetensors.hpp"
#include "core/model/params.hpp"

namespace sf {

struct ExtraTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;  // row-major, as stored
};

struct Checkpoint {
  Model model;
  std::map<std::string, std::string> metadata;     // __metadata__ without "config"
  std::map<std::string, ExtraTensor> extra;         // tensors not in the parameter table
};

// Writes atomically (temporary file, then rename). Throws sf::Error.
void save_checkpoint(const std::string& path, const Model& model,
                     const std::map<std::string, std::string>& metadata = {},
                     const std::map<std::string, ExtraTensor>& extra = {});

// Reads and validates everything: header length, JSON, dtypes, shapes against the config,
// offsets (in range, no overlap, no gaps, no trailing bytes), missing or unknown tensors and
// non-finite values. Parameters stored as F16, BF16 or F64 are converted to float32. Throws
// sf::Error whose message says what is wrong; never crashes.
Checkpoint load_checkpoint(const std::string& path);

// Parses from memory (the same checks); `name` is used in messages.
Checkpoint parse_checkpoint(const std::string& bytes, const std::string& name);

// The same checks on a file already opened (core/io/model_files.cpp opens it once to see which
// layout it is in).
Checkpoint read_checkpoint(const SafetensorsFile& file);

}  // namespace sf
