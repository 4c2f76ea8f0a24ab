// The ecosystem checkpoints of tests/data/ecosystem/<case>/ (written by
// tests/reference/gen_ecosystem_reference.py) for tests/core/test_ecosystem*.cpp: the cases with
// their expected.json, copies in a temporary folder, and edits of a copy's model.safetensors
// (tensors removed, reshaped, retyped or overwritten) and config.json, to make each bad file.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/io/fileio.hpp"
#include "core/io/model_files.hpp"
#include "core/model/error.hpp"
#include "float_bounds.hpp"
#include "reference_json.hpp"
#include "safetensors_support.hpp"

namespace sf::test {

namespace fs = std::filesystem;

inline fs::path ecosystem_dir(const std::string& name) { return fs::path(STEPFORMER_TEST_DATA) / "ecosystem" / name; }

// The cases of tests/data/ecosystem, each with its expected.json.
struct EcosystemCase {
  std::string name;
  json doc;
};

inline std::vector<EcosystemCase> ecosystem_cases() {
  std::vector<EcosystemCase> out;
  for (const auto& entry : fs::directory_iterator(ecosystem_dir("")))
    if (fs::exists(entry.path() / "expected.json"))
      out.push_back({entry.path().filename().string(), load_test_json("ecosystem/" + entry.path().filename().string() + "/expected.json")});
  std::sort(out.begin(), out.end(), [](const EcosystemCase& a, const EcosystemCase& b) { return a.name < b.name; });
  return out;
}

// What a case's log P bounds are made of: D = 2·(2L + 1) + 2 sums deep, n ≤ max(d_e, d_mlp, ℓ_max)
// terms each, logits spread as far as max |log P| (below).
struct LogPChain {
  double depth, terms, spread;
};
inline LogPChain log_p_chain(const EcosystemCase& k) {
  const json& paper = k.doc.at("paper");
  const double L = paper.at("L").get<double>();
  const double n = std::max({paper.at("d_e").get<double>(), paper.at("d_mlp").get<double>(), paper.at("l_max").get<double>()});
  double spread = 0;
  for (const json& seq : k.doc.at("sequences"))
    for (const json& row : seq.at("log_p"))
      for (const json& v : row) spread = std::max(spread, std::abs(v.get<double>()));
  return {2 * (2 * L + 1) + 2, n, spread};
}

// How far core's float log P may be from the case's float64 reference. The worst case (γ_n per sum)
// is never approached: each addition rounds by ≤ u of its partial sum, independently and with either
// sign (Higham & Mary 2019, as reference_json.hpp's kRefFloat), so a sum of n terms is off by σ ≈
// u·√(n/3) relative to its terms, and a logit, D = 2·(2L + 1) + 2 sums deep (forward: attention and
// MLP per layer, embedding, unembedding), by √D times that. n ≤ max(d_e, d_mlp, ℓ_max). A logit's
// terms are about as large as the logits' spread, which max |log P| bounds (the logits of a
// layer-normed X are centred, so their spread is their size), and log P moves by ≤ 2·max|δlogit|
// (δlog p_i = δz_i − Σ_j p_j·δz_j). 6σ of that. The softmax's own rounding (u·√(N_V/3) relative)
// is 10³ times smaller.
inline double log_p_float_tolerance(const EcosystemCase& k) {
  const LogPChain c = log_p_chain(k);
  return 2 * 6 * std::sqrt(c.depth) * kFloatU * std::sqrt(c.terms / 3) * c.spread;
}

// The same in double, where both sides (core and PyTorch's float64, of the same θ and ε) round: the
// worst case, γ_n·spread per sum on either side, D sums, and log P moves by ≤ 2·max|δlogit|.
inline double log_p_double_tolerance(const EcosystemCase& k) {
  const LogPChain c = log_p_chain(k);
  return 2 * 2 * c.depth * double_gamma(c.terms) * c.spread;
}

// A temporary folder, removed with everything in it when the test ends.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> serial{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("stepformer-eco-" + std::to_string(::getpid()) + "-" + (info ? info->name() : "x") + "-" + std::to_string(serial++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A fresh copy of the case's folder inside `tmp` (NAME-1, NAME-2, … for repeated copies).
inline fs::path copy_case(const std::string& name, const TempDir& tmp) {
  static std::atomic<int> copies{0};
  const fs::path to = tmp.path() / (name + "-" + std::to_string(++copies));
  fs::copy(ecosystem_dir(name), to, fs::copy_options::recursive);
  return to;
}

// One tensor of a safetensors file, to be edited and written back.
struct EditTensor {
  std::string name, dtype;
  ordered_json shape;
  std::string bytes;
};

// Rewrites dir/model.safetensors after `edit` changed its tensors (packed back to back, in order).
inline void edit_tensors(const fs::path& dir, const std::function<void(std::vector<EditTensor>&)>& edit) {
  const fs::path file = dir / "model.safetensors";
  const SplitFile f = split(read_file(file.string(), size_t{1} << 30));
  std::vector<EditTensor> tensors;
  for (const auto& [name, entry] : f.header.items()) {
    if (name == "__metadata__") continue;
    const uint64_t begin = entry["data_offsets"][0], end = entry["data_offsets"][1];
    tensors.push_back({name, entry["dtype"], entry["shape"], f.buffer.substr(begin, end - begin)});
  }
  edit(tensors);
  SplitFile out{{{"__metadata__", {{"format", "pt"}}}}, ""};
  for (const EditTensor& t : tensors) {
    out.header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {out.buffer.size(), out.buffer.size() + t.bytes.size()}}};
    out.buffer += t.bytes;
  }
  write_file_atomic(file.string(), join(out));
}

inline EditTensor& tensor_named(std::vector<EditTensor>& tensors, const std::string& name) {
  for (EditTensor& t : tensors)
    if (t.name == name) return t;
  throw std::runtime_error("no tensor " + name);
}

inline void remove_tensor(std::vector<EditTensor>& tensors, const std::string& name) {
  tensors.erase(std::remove_if(tensors.begin(), tensors.end(), [&](const EditTensor& t) { return t.name == name; }),
                tensors.end());
}

// Rewrites dir/config.json after `edit` changed it.
inline void edit_config(const fs::path& dir, const std::function<void(json&)>& edit) {
  const fs::path file = dir / "config.json";
  json j = json::parse(read_file(file.string(), size_t{1} << 20));
  edit(j);
  write_file_atomic(file.string(), j.dump(2));
}

// open_model(path) must throw sf::Error (nothing else) whose message holds every phrase.
inline void expect_open_refused(const fs::path& path, const std::vector<std::string>& phrases) {
  try {
    open_model(path.string());
    ADD_FAILURE() << path << " was opened; expected an error with: " << phrases.at(0);
  } catch (const Error& e) {
    for (const std::string& p : phrases)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << "message: " << e.what() << "\nexpected: " << p;
  }
}

}  // namespace sf::test
