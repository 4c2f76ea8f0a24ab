// Checkpoint I/O (core/checkpoint.hpp): round trips, the file layout other tools rely on, a
// file from an independent Python writer, and one refusal per kind of bad file. The bad files
// are made here by mutating a good one, through the helpers of safetensors_support.hpp that
// split a safetensors file into header and buffer and join it again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/io/checkpoint.hpp"
#include "core/model/error.hpp"
#include "core/io/fileio.hpp"
#include "safetensors_support.hpp"

namespace test_checkpoint {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using sf::Checkpoint;
using sf::ExtraTensor;
using sf::Model;
using sf::ModelConfig;
using namespace sf::test;

namespace {

// Every size differs (d_e ≠ d_attn ≠ d_mid ≠ N_V …), so a transposed or mixed-up axis shows.
ModelConfig small_config() {
  ModelConfig c;
  c.L = 2;
  c.H = 2;
  c.d_e = 8;
  c.d_attn = 4;
  c.d_mid = 3;
  c.d_mlp = 16;
  c.l_max = 6;
  c.vocab = {"a", "b", "c", "d", "é", "?", "7"};  // N_V = 10
  return c;
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("stepformer-ckpt-" + std::to_string(::getpid()) + "-" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // The bytes of a freshly saved checkpoint of model_.
  std::string good_bytes() {
    const std::string p = path("good.safetensors");
    sf::save_checkpoint(p, model_);
    return sf::read_file(p, size_t{1} << 30);
  }

  fs::path dir_;
  Model model_ = Model::initialised(small_config(), 7);
};

// ----------------------------------------------------------------------------------------------
// Good files

TEST_F(CheckpointTest, RoundTripKeepsConfigParametersMetadataAndExtras) {
  ModelConfig c = small_config();
  c.eps = 1e-6f;
  c.position = sf::Position::Sinusoidal;
  c.position_base = 10000;
  const Model model = Model::initialised(c, 42);
  const std::map<std::string, std::string> metadata{{"step", "1200"}, {"note", "trained on ünïcode"}};
  const std::map<std::string, ExtraTensor> extra{
      {"optimizer.m.W_e", {{8, 10}, std::vector<float>(80, 0.25f)}},
      {"train.loss", {{3}, {2.5f, 2.25f, -1.0f}}},
      {"train.empty", {{0, 4}, {}}},
  };
  sf::save_checkpoint(path("m.safetensors"), model, metadata, extra);
  const Checkpoint got = sf::load_checkpoint(path("m.safetensors"));

  EXPECT_EQ(sf::to_json(got.model.config), sf::to_json(c));
  EXPECT_EQ(got.model.config.vocab, c.vocab);
  EXPECT_EQ(got.model.config.eps, c.eps);
  ASSERT_EQ(got.model.theta.size(), model.theta.size());
  for (size_t i = 0; i < model.theta.size(); ++i) ASSERT_EQ(got.model.theta[i], model.theta[i]) << "theta[" << i << "]";
  EXPECT_EQ(got.metadata, metadata);
  ASSERT_EQ(got.extra.size(), extra.size());
  for (const auto& [name, t] : extra) {
    ASSERT_TRUE(got.extra.count(name)) << name;
    EXPECT_EQ(got.extra.at(name).shape, t.shape) << name;
    EXPECT_EQ(got.extra.at(name).data, t.data) << name;
  }
}

TEST_F(CheckpointTest, StoresParametersRowMajorWithThePapersShapes) {
  const SplitFile f = split(good_bytes());
  const ModelConfig& c = model_.config;
  const auto w = model_.weights();

  const auto& wq = f.header["layer1.attn.W_q"];
  EXPECT_EQ(wq["shape"], ordered_json({c.H, c.d_attn, c.d_e}));
  const uint64_t wq_begin = wq["data_offsets"][0];
  for (int h = 0; h < c.H; ++h)
    for (int i = 0; i < c.d_attn; ++i)
      for (int j = 0; j < c.d_e; ++j)
        ASSERT_EQ(float_at(f.buffer, wq_begin + 4 * ((h * c.d_attn + i) * c.d_e + j)), w.layers[0].attn.heads[h].W_q(i, j))
            << "W_q[" << h << ", " << i << ", " << j << "]";

  const auto& we = f.header["W_e"];
  EXPECT_EQ(we["shape"], ordered_json({c.d_e, c.N_V()}));
  const uint64_t we_begin = we["data_offsets"][0];
  for (int i = 0; i < c.d_e; ++i)
    for (int j = 0; j < c.N_V(); ++j)
      ASSERT_EQ(float_at(f.buffer, we_begin + 4 * (i * c.N_V() + j)), w.W_e(i, j)) << "W_e[" << i << ", " << j << "]";

  EXPECT_EQ(f.header["gamma"]["shape"], ordered_json({c.d_e}));
  EXPECT_EQ(f.header["layer2.attn.b_v"]["shape"], ordered_json({c.H, c.d_mid}));
  EXPECT_EQ(f.header["layer2.attn.W_o"]["shape"], ordered_json({c.d_e, c.H * c.d_mid}));
}

TEST_F(CheckpointTest, WriterPadsHeaderWithSpacesAndPacksTensorsInTableOrder) {
  sf::save_checkpoint(path("m.safetensors"), model_, {}, {{"train.b", {{1}, {1.0f}}}, {"optimizer.a", {{2}, {1.0f, 2.0f}}}});
  const std::string bytes = sf::read_file(path("m.safetensors"), size_t{1} << 30);
  const uint64_t n = read_u64(bytes);
  EXPECT_EQ(n % 8, 0u);
  const std::string text = bytes.substr(8, n);
  const size_t json_end = text.find_last_of('}') + 1;
  EXPECT_EQ(text.find_first_not_of(' ', json_end), std::string::npos) << "padding must be spaces";

  const SplitFile f = split(bytes);
  EXPECT_EQ(f.header["__metadata__"]["config"], sf::to_json(model_.config));
  std::vector<std::string> expected_order;
  for (const auto& e : model_.table.entries()) expected_order.push_back(e.name);
  expected_order.push_back("optimizer.a");  // extras after the parameters, sorted by name
  expected_order.push_back("train.b");
  std::vector<std::string> order;
  uint64_t end = 0;
  for (const auto& [name, entry] : f.header.items()) {
    if (name == "__metadata__") continue;
    order.push_back(name);
    EXPECT_EQ(entry["dtype"], "F32");
    EXPECT_EQ(entry["data_offsets"][0], end) << name << " does not start where the previous tensor ends";
    end = entry["data_offsets"][1];
  }
  EXPECT_EQ(order, expected_order);
  EXPECT_EQ(end, f.buffer.size()) << "no trailing bytes";
}

TEST_F(CheckpointTest, LoadsAFileWrittenByAnIndependentPythonWriter) {
  const Checkpoint got = sf::load_checkpoint(STEPFORMER_TEST_DATA "/python_written.safetensors");
  const ModelConfig& c = got.model.config;
  EXPECT_EQ(c.L, 1);
  EXPECT_EQ(c.H, 2);
  EXPECT_EQ(c.d_e, 4);
  EXPECT_EQ(c.d_attn, 2);
  EXPECT_EQ(c.d_mid, 3);
  EXPECT_EQ(c.d_mlp, 8);
  EXPECT_EQ(c.l_max, 4);
  EXPECT_EQ(c.vocab, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(got.metadata, (std::map<std::string, std::string>{{"writer", "make_python_checkpoint.py"}}));
  ASSERT_EQ(got.extra.count("train.step"), 1u);
  EXPECT_EQ(got.extra.at("train.step").data, std::vector<float>{7.0f});

  // make_python_checkpoint.py: the k-th parameter by sorted name holds k + n/256 at row-major
  // element n. In θ, each of an entry's matrices is column-major (params.hpp).
  std::vector<std::string> sorted;
  for (const auto& e : got.model.table.entries()) sorted.push_back(e.name);
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < sorted.size(); ++k) {
    const sf::ParamEntry& e = *got.model.table.find(sorted[k]);
    for (size_t n = 0; n < e.size(); ++n) {
      const size_t m = n / e.matrix_size(), i = n % e.matrix_size() / e.cols, j = n % e.cols;
      ASSERT_EQ(got.model.theta[e.offset + m * e.matrix_size() + j * e.rows + i], k + n / 256.0f)
          << e.name << " element " << n;
    }
  }
}

TEST_F(CheckpointTest, LoadsAnUnpaddedHeaderWithUnalignedData) {
  const SplitFile f = split(good_bytes());
  std::string text = f.header.dump();
  if (text.size() % 4 == 0) text += ' ';  // so the floats start at an odd offset
  const Checkpoint got = sf::parse_checkpoint(join_text(text, f.buffer, false), "unpadded");
  EXPECT_EQ(got.model.theta, model_.theta);
}

// ----------------------------------------------------------------------------------------------
// Bad files: the length field and the header

TEST_F(CheckpointTest, RefusesFileShorterThan8Bytes) {
  expect_refused("", "too short");
  expect_refused(good_bytes().substr(0, 5), "too short");
}

TEST_F(CheckpointTest, RefusesHeaderLengthBeyondTheFile) {
  const std::string good = good_bytes();
  expect_refused(u64_bytes(good.size() - 7) + good.substr(8), "exceeds");
  expect_refused(good.substr(0, 8 + read_u64(good) - 1), "exceeds");  // truncated inside the header
}

TEST_F(CheckpointTest, RefusesHeaderLengthOverTheLimit) {
  const std::string rest = good_bytes().substr(8);
  expect_refused(u64_bytes(100'000'001) + rest, "over the safetensors limit of 100000000");
  expect_refused(u64_bytes(std::numeric_limits<uint64_t>::max()) + rest, "over the safetensors limit");
}

TEST_F(CheckpointTest, RefusesHeaderThatIsNotJson) {
  const SplitFile f = split(good_bytes());
  expect_refused(join_text("{\"W_e\": oops}", f.buffer), "not valid JSON");
  std::string nul_padded = f.header.dump();
  nul_padded.append(8 - nul_padded.size() % 8, '\0');  // the reference reader refuses NUL padding too
  expect_refused(join_text(nul_padded, f.buffer), "NUL byte");
  expect_refused(join_text("{\"a\": \"\xff\"}", f.buffer), "not valid JSON");  // not UTF-8
}

TEST_F(CheckpointTest, RefusesHeaderThatIsNotAnObject) {
  const SplitFile f = split(good_bytes());
  expect_refused(join_text("[1, 2]", f.buffer), "not a JSON object");
  expect_refused(join_text("\"W_e\"", f.buffer), "not a JSON object");
}

TEST_F(CheckpointTest, RefusesHeaderShapedUnlikeAnySafetensorsHeader) {
  const SplitFile f = split(good_bytes());
  expect_refused(join_text(std::string(100000, '[') + std::string(100000, ']'), f.buffer), "nested deeper");
  std::string long_shape = "{\"W_e\": {\"dtype\": \"F32\", \"shape\": [1";
  for (int i = 0; i < 100; ++i) long_shape += ", 1";
  expect_refused(join_text(long_shape + "], \"data_offsets\": [0, 4]}}", f.buffer), "array longer than 64");
}

TEST_F(CheckpointTest, RefusesDuplicateKeys) {
  const SplitFile f = split(good_bytes());
  const std::string text = f.header.dump();
  // The same tensor twice: nlohmann alone would keep the second silently.
  const std::string twice = "{\"W_e\":" + f.header["W_e"].dump() + "," + text.substr(1);
  expect_refused(join_text(twice, f.buffer), "\"W_e\" twice");
  // A duplicate inside a tensor entry.
  std::string inner = text;
  const std::string dtype = "\"dtype\":\"F32\"";
  inner.insert(inner.find(dtype), "\"dtype\":\"F16\",");
  expect_refused(join_text(inner, f.buffer), "\"dtype\" twice");
}

// ----------------------------------------------------------------------------------------------
// Bad files: tensor entries

TEST_F(CheckpointTest, RefusesTensorEntryWithoutAField) {
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    SplitFile f = split(good_bytes());
    f.header["layer1.attn.W_k"].erase(field);
    expect_refused(join(f), std::string("\"layer1.attn.W_k\" has no \"") + field + "\"");
  }
}

TEST_F(CheckpointTest, RefusesTensorEntryOfWrongJsonTypes) {
  const SplitFile good = split(good_bytes());
  auto with = [&](const char* field, const ordered_json& value) {
    SplitFile f = good;
    f.header["W_p"][field] = value;
    return join(f);
  };
  expect_refused(with("dtype", 32), "\"dtype\" must be a string");
  expect_refused(with("shape", "8x6"), "\"shape\" must be an array of integers");
  expect_refused(with("shape", ordered_json::array({8.0, 6})), "\"shape\" must be an array of integers");
  expect_refused(with("shape", ordered_json::array({8, nullptr})), "\"shape\" must be an array of integers");
  expect_refused(with("data_offsets", ordered_json::array({320})), "\"data_offsets\" must be [BEGIN, END]");
  expect_refused(with("data_offsets", ordered_json::array({320, "512"})), "\"data_offsets\" must be [BEGIN, END]");
  expect_refused(with("data_offsets", ordered_json::array({-4, 512})), "\"data_offsets\" must be [BEGIN, END]");
  SplitFile f = good;
  f.header["W_p"] = 5;
  expect_refused(join(f), "must be described by an object");
}

// F16, BF16 and F64 are read as float32 (test_ecosystem_safetensors.cpp); integer dtypes are not.
TEST_F(CheckpointTest, RefusesDtypeThatIsNotAFloat) {
  for (const char* dtype : {"I32", "U32"}) {
    SplitFile f = split(good_bytes());
    f.header["W_u"]["dtype"] = dtype;
    expect_refused(join(f), std::string("has dtype ") + dtype + "; Stepformer reads F32, F16, BF16 and F64");
  }
}

TEST_F(CheckpointTest, RefusesNegativeOrAbsurdShapes) {
  const SplitFile good = split(good_bytes());
  SplitFile f = good;
  f.header["W_e"]["shape"] = {-8, -10};
  expect_refused(join(f), "negative dimension");
  f.header["W_e"]["shape"] = {int64_t{1} << 40, int64_t{1} << 40};  // 2⁸⁰ elements would overflow
  expect_refused(join(f), "too many elements");
  f.header["W_e"]["shape"] = ordered_json::array({uint64_t{1} << 63});  // not even an int64
  expect_refused(join(f), "\"shape\" must be an array of integers");
}

TEST_F(CheckpointTest, RefusesOffsetsOutOfRange) {
  SplitFile f = split(good_bytes());
  const uint64_t size = f.buffer.size();
  f.header["W_u"]["data_offsets"] = {size - 4, size + 4 * 79};
  expect_refused(join(f), "out of range");
  f.header["W_u"]["data_offsets"] = {std::numeric_limits<uint64_t>::max() - 3, std::numeric_limits<uint64_t>::max()};
  expect_refused(join(f), "\"data_offsets\" must be [BEGIN, END]");
}

TEST_F(CheckpointTest, RefusesOffsetsEndingBeforeTheyBegin) {
  SplitFile f = split(good_bytes());
  f.header["W_e"]["data_offsets"] = {320, 0};
  expect_refused(join(f), "end 0 is before its begin 320");
}

TEST_F(CheckpointTest, RefusesSizeThatDoesNotMatchTheShape) {
  SplitFile f = split(good_bytes());
  f.header["W_e"]["shape"] = {8, 9};
  expect_refused(join(f), "holds 320 bytes but shape [8, 9] of F32 needs 288");
}

TEST_F(CheckpointTest, RefusesOverlappingTensors) {
  SplitFile f = split(good_bytes());
  f.header["layer1.beta1"]["data_offsets"] = f.header["layer1.gamma1"]["data_offsets"];  // both [d_e]
  expect_refused(join(f), "overlap");
}

TEST_F(CheckpointTest, RefusesGapBetweenTensors) {
  SplitFile f = split(good_bytes());
  // Move W_u (the last tensor) 4 bytes later, with 4 unused bytes before it.
  auto& offsets = f.header["W_u"]["data_offsets"];
  const uint64_t begin = offsets[0];
  offsets = {begin + 4, offsets[1].get<uint64_t>() + 4};
  f.buffer.insert(begin, 4, '\0');
  expect_refused(join(f), "gap of 4 bytes before tensor \"W_u\"");
}

TEST_F(CheckpointTest, RefusesTrailingBytes) {
  SplitFile f = split(good_bytes());
  f.buffer += std::string(4, '\0');
  expect_refused(join(f), "4 trailing bytes");
}

// ----------------------------------------------------------------------------------------------
// Bad files: metadata and configuration

TEST_F(CheckpointTest, RefusesMissingMetadataOrConfig) {
  const SplitFile good = split(good_bytes());
  SplitFile f = good;
  f.header.erase("__metadata__");
  expect_refused(join(f), "no \"__metadata__\"");
  f = good;
  f.header["__metadata__"].erase("config");
  expect_refused(join(f), "__metadata__ has no \"config\"");
  f = good;
  f.header["__metadata__"]["step"] = 12;
  expect_refused(join(f), "value \"step\" must be a string");
  f = good;
  f.header["__metadata__"] = "config";
  expect_refused(join(f), "\"__metadata__\" must be a JSON object");
}

TEST_F(CheckpointTest, RefusesConfigThatFailsValidation) {
  const SplitFile good = split(good_bytes());
  SplitFile f = good;
  auto config = ordered_json::parse(std::string(f.header["__metadata__"]["config"]));
  config["H"] = 0;
  f.header["__metadata__"]["config"] = config.dump();
  expect_refused(join(f), "the configuration in __metadata__.config is invalid");
  expect_refused(join(f), "H must be between 1 and");
  f = good;
  f.header["__metadata__"]["config"] = "{\"L\": 2,";
  expect_refused(join(f), "the configuration in __metadata__.config is invalid");
}

// ----------------------------------------------------------------------------------------------
// Bad files: the tensors against the configuration

TEST_F(CheckpointTest, RefusesMissingParameterNamingIt) {
  const SplitFile f = split(good_bytes());
  std::vector<RawTensor> tensors = tensors_of(f);
  std::erase_if(tensors, [](const RawTensor& t) { return t.name == "layer2.attn.W_k"; });
  expect_refused(build(f.header["__metadata__"], tensors), "parameter tensor \"layer2.attn.W_k\" [2, 4, 8] is missing");
}

TEST_F(CheckpointTest, RefusesShapeThatContradictsTheConfig) {
  const SplitFile f = split(good_bytes());
  std::vector<RawTensor> tensors = tensors_of(f);
  for (RawTensor& t : tensors)
    if (t.name == "layer1.attn.W_q") t.shape = ordered_json::array({8, 8});  // H·d_attn × d_e: same size, heads not separated
  expect_refused(build(f.header["__metadata__"], tensors),
                 "\"layer1.attn.W_q\" has shape [8, 8] but the configuration needs [2, 4, 8]");
  tensors = tensors_of(f);
  for (RawTensor& t : tensors)
    if (t.name == "W_e") t = {"W_e", ordered_json::array({8, 9}), t.bytes.substr(0, 4 * 72)};  // one token short
  expect_refused(build(f.header["__metadata__"], tensors), "\"W_e\" has shape [8, 9] but the configuration needs [8, 10]");
}

TEST_F(CheckpointTest, RefusesUnknownTensorNamesButKeepsOptimizerAndTrainTensors) {
  const SplitFile f = split(good_bytes());
  std::vector<RawTensor> tensors = tensors_of(f);
  tensors.push_back({"optimizer.v.W_u", ordered_json::array({2}), std::string(8, '\0')});
  tensors.push_back({"train.step", ordered_json::array(), std::string(4, '\0')});  // a 0-rank scalar
  const Checkpoint got = sf::parse_checkpoint(build(f.header["__metadata__"], tensors), "extras");
  EXPECT_EQ(got.extra.size(), 2u);
  EXPECT_EQ(got.extra.at("train.step").shape, std::vector<int64_t>{});
  EXPECT_EQ(got.extra.at("train.step").data, std::vector<float>{0.0f});

  tensors.push_back({"layer3.W_mlp1", ordered_json::array({1}), std::string(4, '\0')});
  expect_refused(build(f.header["__metadata__"], tensors), "unknown tensor \"layer3.W_mlp1\"");
}

TEST_F(CheckpointTest, RefusesNonFiniteParametersNamingTensorAndElement) {
  const SplitFile good = split(good_bytes());
  const uint64_t wq = good.header["layer1.attn.W_q"]["data_offsets"][0];
  SplitFile f = good;
  put_float(f.buffer, wq + 4 * 37, std::numeric_limits<float>::quiet_NaN());  // [1, 0, 5]: 37 = 1·32 + 0·8 + 5
  expect_refused(join(f), "parameter \"layer1.attn.W_q\" holds NaN at element 37 (index [1, 0, 5])");
  f = good;
  put_float(f.buffer, good.header["gamma"]["data_offsets"][0].get<uint64_t>() + 4 * 3, std::numeric_limits<float>::infinity());
  expect_refused(join(f), "parameter \"gamma\" holds +Inf at element 3 (index [3])");
  f = good;
  put_float(f.buffer, 4 * 11, -std::numeric_limits<float>::infinity());  // W_e comes first
  expect_refused(join(f), "parameter \"W_e\" holds -Inf at element 11 (index [1, 1])");
}

// ----------------------------------------------------------------------------------------------
// Saving

TEST_F(CheckpointTest, SaveIntoMissingDirectoryThrows) {
  const std::string p = path("no-such-dir/m.safetensors");
  EXPECT_THROW(sf::save_checkpoint(p, model_), sf::Error);
  EXPECT_FALSE(fs::exists(p));
}

TEST_F(CheckpointTest, FailedSaveLeavesTheExistingFileIntact) {
  const std::string p = path("m.safetensors");
  sf::save_checkpoint(p, model_);
  const std::string before = sf::read_file(p, size_t{1} << 30);
  // write_file_atomic writes p.tmp.<pid> first; a directory there makes the write fail.
  fs::create_directory(p + ".tmp." + std::to_string(::getpid()));
  EXPECT_THROW(sf::save_checkpoint(p, Model::initialised(small_config(), 8)), sf::Error);
  EXPECT_EQ(sf::read_file(p, size_t{1} << 30), before);
}

TEST_F(CheckpointTest, SaveRefusesWhatLoadWouldRefuseAndKeepsTheOldFile) {
  const std::string p = path("m.safetensors");
  sf::save_checkpoint(p, model_);
  const std::string before = sf::read_file(p, size_t{1} << 30);
  auto expect_save_refused = [&](const Model& m, const std::map<std::string, std::string>& metadata,
                                 const std::map<std::string, ExtraTensor>& extra, const std::string& phrase) {
    try {
      sf::save_checkpoint(p, m, metadata, extra);
      ADD_FAILURE() << "save accepted; expected: " << phrase;
    } catch (const sf::Error& e) {
      EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
    }
    EXPECT_EQ(sf::read_file(p, size_t{1} << 30), before);
  };
  expect_save_refused(model_, {{"config", "{}"}}, {}, "\"config\" is reserved");
  expect_save_refused(model_, {}, {{"adam.m", {{1}, {0.0f}}}}, "must start with \"optimizer.\" or \"train.\"");
  expect_save_refused(model_, {}, {{"train.x", {{2, 3}, {0.0f}}}}, "has 6 elements but it holds 1");
  expect_save_refused(model_, {}, {{"train.x", {{-1}, {}}}}, "is impossible");
  Model diverged = model_;
  diverged.mutable_weights().W_u(2, 1) = std::numeric_limits<float>::quiet_NaN();
  expect_save_refused(diverged, {}, {}, "parameter \"W_u\" holds NaN at element 17 (index [2, 1])");
}

}  // namespace

// A GPT file whose configuration says "bert" (or the reverse) names the tensors that do not fit.
TEST_F(CheckpointTest, RefusesAFileOfAnotherArchitectureNamingTheTensors) {
  SplitFile f = split(good_bytes());  // a GPT file (L = 2)
  ordered_json metadata = f.header["__metadata__"];
  ordered_json config = ordered_json::parse(metadata["config"].get<std::string>());
  config["arch"] = "bert";
  config["d_f"] = 8;
  metadata["config"] = config.dump();
  const std::string as_bert = build(metadata, tensors_of(f));
  expect_refused(as_bert, "W_f");  // BERT's head is missing
  expect_refused(as_bert, "b_f");

  ModelConfig c = small_config();
  c.arch = "bert";
  c.d_f = 5;
  const std::string p = path("bert.safetensors");
  sf::save_checkpoint(p, Model::initialised(c, 3));
  SplitFile b = split(sf::read_file(p, size_t{1} << 30));
  ordered_json bert_meta = b.header["__metadata__"];
  ordered_json bert_config = ordered_json::parse(bert_meta["config"].get<std::string>());
  bert_config["arch"] = "gpt";
  bert_config.erase("d_f");
  bert_meta["config"] = bert_config.dump();
  expect_refused(build(bert_meta, tensors_of(b)), "W_f");  // BERT's head is extra in a GPT file
}

}  // namespace test_checkpoint
