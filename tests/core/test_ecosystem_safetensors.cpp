// The shared safetensors reader (core/io/safetensors.hpp) on the dtypes the ecosystem saves in:
// F16 (normal, subnormal, ±Inf), BF16 and F64 read as float32 exactly where float32 holds the
// value; F32 at an address that is not 4-byte aligned; integer buffers listed but not readable;
// and a Stepformer checkpoint whose parameters are stored as F64 loads the same θ.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/io/checkpoint.hpp"
#include "core/io/fileio.hpp"
#include "core/io/safetensors.hpp"
#include "core/model/error.hpp"
#include "safetensors_support.hpp"

namespace test_ecosystem_safetensors {

using namespace sf;
using namespace sf::test;

namespace {

template <class T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

// A file of (name, dtype, shape, bytes), packed in order; the header is NOT padded, so the buffer
// may start at any offset.
std::string file_of(const std::vector<std::tuple<std::string, std::string, std::vector<int64_t>, std::string>>& tensors) {
  ordered_json header = ordered_json::object();
  std::string buffer;
  for (const auto& [name, dtype, shape, bytes] : tensors) {
    header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {buffer.size(), buffer.size() + bytes.size()}}};
    buffer += bytes;
  }
  return join_text(header.dump(), buffer, false);
}

}  // namespace

TEST(SafetensorsReader, HalfBFloatAndDoubleAreReadAsFloat) {
  const std::string bytes = file_of({
      {"half", "F16", {6}, bytes_of<uint16_t>({0x3C00, 0xC000, 0x3555, 0x0001, 0x7BFF, 0xFC00})},
      {"bf16", "BF16", {2, 2}, bytes_of<uint16_t>({0x3F80, 0xC049, 0x0000, 0x8000})},
      {"f64", "F64", {3}, bytes_of<double>({0.1, -1e300, 2.5})},
      {"ids", "I64", {1, 2}, bytes_of<int64_t>({0, 1})},
  });
  const SafetensorsFile f = SafetensorsFile::from_bytes(bytes, "mixed.safetensors");
  EXPECT_FALSE(f.has_metadata());
  ASSERT_EQ(f.tensors().size(), 4u);

  const std::vector<float> half = f.read_vector(*f.find("half"));
  EXPECT_EQ(half, (std::vector<float>{1.0f, -2.0f, 0.333251953125f, std::ldexp(1.0f, -24), 65504.0f,
                                      -std::numeric_limits<float>::infinity()}));
  EXPECT_EQ(f.read_vector(*f.find("bf16")), (std::vector<float>{1.0f, -3.140625f, 0.0f, -0.0f}));
  EXPECT_TRUE(std::signbit(f.read_vector(*f.find("bf16"))[3]));
  const std::vector<float> f64 = f.read_vector(*f.find("f64"));
  EXPECT_EQ(f64[0], 0.1f);  // rounded to the nearest float
  EXPECT_EQ(f64[1], -std::numeric_limits<float>::infinity());  // beyond float's range: a loader's finiteness check refuses it
  EXPECT_EQ(f64[2], 2.5f);
  try {
    f.read_vector(*f.find("ids"));
    ADD_FAILURE() << "an I64 tensor was read as float";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mixed.safetensors: tensor \"ids\" has dtype I64; Stepformer reads F32, F16, BF16 and F64"),
              std::string::npos)
        << e.what();
  }
}

TEST(SafetensorsReader, UnalignedFloat32IsCopiedNotCast) {
  const ordered_json header = {{"x", {{"dtype", "F32"}, {"shape", {3}}, {"data_offsets", {0, 12}}}}};
  std::string text = header.dump();
  while ((8 + text.size()) % 4 != 1) text += ' ';  // the buffer starts 1 byte past a float boundary
  const std::string bytes = u64_bytes(text.size()) + text + bytes_of<float>({1.5f, -2.25f, 1e-30f});
  const SafetensorsFile f = SafetensorsFile::from_bytes(bytes, "unaligned.safetensors");
  EXPECT_EQ(f.read_vector(*f.find("x")), (std::vector<float>{1.5f, -2.25f, 1e-30f}));
}

TEST(SafetensorsReader, UnknownDtypeAndSizeMismatchAreRefused) {
  auto refused = [](const std::string& bytes, const std::string& phrase) {
    try {
      SafetensorsFile::from_bytes(bytes, "bad.safetensors");
      ADD_FAILURE() << "accepted; expected: " << phrase;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
    }
  };
  refused(file_of({{"x", "F17", {2}, std::string(4, '\0')}}), "tensor \"x\" has dtype F17, which is not a safetensors dtype");
  refused(file_of({{"x", "F16", {3}, std::string(4, '\0')}}), "tensor \"x\" holds 4 bytes but shape [3] of F16 needs 6");
  refused(file_of({{"x", "F64", {1}, std::string(4, '\0')}}), "holds 4 bytes but shape [1] of F64 needs 8");
}

// Stepformer's own checkpoints may hold F64 (or F16, BF16) parameters too: the same θ, as float.
TEST(SafetensorsReader, StepformerCheckpointStoredAsDoubleLoadsTheSameTheta) {
  ModelConfig c;
  c.L = 1;
  c.H = 2;
  c.d_e = 8;
  c.d_attn = c.d_mid = 4;
  c.d_mlp = 16;
  c.l_max = 8;
  const Model model = Model::initialised(c, 5);
  const std::string path = ::testing::TempDir() + "/stepformer-f64.safetensors";
  save_checkpoint(path, model);
  const SplitFile f = split(read_file(path, size_t{1} << 30));
  ordered_json header;
  header["__metadata__"] = f.header["__metadata__"];
  std::string buffer;
  for (const RawTensor& t : tensors_of(f)) {
    std::string doubles;
    for (size_t i = 0; i < t.bytes.size(); i += 4) {
      float v;
      std::memcpy(&v, t.bytes.data() + i, 4);
      doubles += bytes_of<double>({static_cast<double>(v)});
    }
    header[t.name] = {{"dtype", "F64"}, {"shape", t.shape}, {"data_offsets", {buffer.size(), buffer.size() + doubles.size()}}};
    buffer += doubles;
  }
  const Checkpoint got = parse_checkpoint(join_text(header.dump(), buffer), "f64.safetensors");
  EXPECT_EQ(got.model.theta, model.theta);
  std::remove(path.c_str());
}

}  // namespace test_ecosystem_safetensors
