// Safetensors files taken apart and put back together, for the checkpoint tests
// (test_checkpoint.cpp, test_variants_checkpoint.cpp): a file split into its parsed header and
// its buffer, tensors listed and repacked, and a refusal check.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/io/checkpoint.hpp"
#include "core/model/error.hpp"

namespace sf::test {

using nlohmann::ordered_json;

// A safetensors file split into its parsed header and its byte buffer.
struct SplitFile {
  ordered_json header;
  std::string buffer;
};

inline uint64_t read_u64(const std::string& bytes) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  return n;
}

inline std::string u64_bytes(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return s;
}

inline SplitFile split(const std::string& bytes) {
  const uint64_t n = read_u64(bytes);
  return {ordered_json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}

// Joins raw header text and a buffer; `pad` pads the text with spaces to a multiple of 8.
inline std::string join_text(std::string text, const std::string& buffer, bool pad = true) {
  if (pad) text.resize((text.size() + 7) / 8 * 8, ' ');
  return u64_bytes(text.size()) + text + buffer;
}

inline std::string join(const SplitFile& f) { return join_text(f.header.dump(), f.buffer); }

// One tensor as (name, shape, bytes), to rebuild a file with tensors left out, added or reshaped.
struct RawTensor {
  std::string name;
  ordered_json shape;
  std::string bytes;
};

inline std::vector<RawTensor> tensors_of(const SplitFile& f) {
  std::vector<RawTensor> out;
  for (const auto& [name, entry] : f.header.items()) {
    if (name == "__metadata__") continue;
    const uint64_t begin = entry["data_offsets"][0], end = entry["data_offsets"][1];
    out.push_back({name, entry["shape"], f.buffer.substr(begin, end - begin)});
  }
  return out;
}

// Packs the tensors back to back, as a correct writer does.
inline std::string build(const ordered_json& metadata, const std::vector<RawTensor>& tensors) {
  SplitFile f{{{"__metadata__", metadata}}, ""};
  for (const RawTensor& t : tensors) {
    f.header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {f.buffer.size(), f.buffer.size() + t.bytes.size()}}};
    f.buffer += t.bytes;
  }
  return join(f);
}

inline float float_at(const std::string& buffer, uint64_t byte_offset) {
  float v;
  std::memcpy(&v, buffer.data() + byte_offset, sizeof v);
  return v;
}

inline void put_float(std::string& buffer, uint64_t byte_offset, float v) { std::memcpy(buffer.data() + byte_offset, &v, sizeof v); }

// Loading `bytes` must throw sf::Error (nothing else) whose message contains `phrase`.
inline void expect_refused(const std::string& bytes, const std::string& phrase) {
  try {
    sf::parse_checkpoint(bytes, "bad.safetensors");
    ADD_FAILURE() << "a bad file was accepted; expected an error containing: " << phrase;
  } catch (const sf::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(phrase), std::string::npos) << "message: " << what << "\nexpected phrase: " << phrase;
    EXPECT_EQ(what.rfind("bad.safetensors: ", 0), 0u) << "the message should name the file: " << what;
  }
}

}  // namespace sf::test
