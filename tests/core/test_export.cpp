// Export files read back with the same numbers: CSV (parsed here and by Python's csv and
// numpy.genfromtxt), NPY (read_npy and numpy.load, bit for bit, the paper's shape, a strided view
// of Wᵀ included), the trace as JSON (Python's json: events, algorithms, lines, values).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "core/algorithms/algorithms.hpp"
#include "core/io/export.hpp"
#include "core/io/fileio.hpp"
#include "core/io/npy.hpp"
#include "core/model/error.hpp"
#include "core/tokenizers/tokenizer.hpp"

#include "tiny_config.hpp"

namespace test_export {

using namespace sf;
namespace fs = std::filesystem;

namespace {

const char* kPython = "/usr/bin/python3";

std::string temp_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("stepformer-export-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

// Runs a Python script (numpy available); its stdout. Skips the test when Python or numpy is missing.
bool have_numpy() {
  static const bool ok = fs::exists(kPython) &&
                         std::system((std::string(kPython) + " -c 'import numpy' 2>/dev/null").c_str()) == 0;
  return ok;
}
std::string python(const std::string& script) {
  const std::string file = temp_path("script.py");
  write_file_atomic(file, script);
  std::string out;
  FILE* p = popen((std::string(kPython) + " " + file + " 2>&1").c_str(), "r");
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(p ? pclose(p) : -1, 0) << out;
  return out;
}

bool same_float(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

// A 3×4 matrix with −∞, +∞, NaN, a denormal, and numbers that need all 9 digits.
MatF awkward() {
  MatF m(3, 4);
  m << 0.1f, -INFINITY, 1.0f / 3.0f, 16777217.0f, -0.0f, 1e-40f, 3.4028235e38f, INFINITY, NAN, -2.5f, 1e-7f,
      0.30000001f;
  return m;
}

ModelConfig small_config() {
  ModelConfig c = test::tiny_gpt_config(8);
  c.vocab = {"a", "b", ","};  // N_V = 6
  return c;
}

}  // namespace

TEST(Export, NumbersReadBackExactly) {
  std::mt19937 rng(3);
  std::normal_distribution<float> n(0.0f, 10.0f);
  for (int i = 0; i < 2000; ++i) {
    const float x = n(rng) * std::pow(10.0f, static_cast<float>(i % 13 - 6));
    EXPECT_EQ(std::strtof(export_number(x).c_str(), nullptr), x) << export_number(x);
  }
  EXPECT_EQ(export_number(0.8f), "0.8");
  EXPECT_EQ(export_number(-INFINITY), "-inf");
  EXPECT_EQ(export_number(INFINITY), "inf");
  EXPECT_EQ(export_number(NAN), "nan");
}

TEST(Export, CsvFieldsAreQuotedAsRfc4180Says) {
  EXPECT_EQ(csv_field("t_x=3 'l'"), "t_x=3 'l'");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field(" "), "\" \"");
  const auto rows = parse_csv("x,\"a,b\",\"q\"\"\"\r\n1,,\"l\ne\"\r\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"x", "a,b", "q\""}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"1", "", "l\ne"}));
}

TEST(Export, CsvReadsBackWithLabelsAndInfinities) {
  const MatF m = awkward();
  const CsvAxis rows{"t_z", {"<bos>", "a,b", "\"q\""}}, cols{"", {}};
  const std::string path = temp_path("m.csv");
  write_csv(path, m, "S", rows, cols);
  const auto t = parse_csv(read_file(path, 1 << 20));
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0], (std::vector<std::string>{"S", "1", "2", "3", "4"}));
  EXPECT_EQ(t[1][0], "t_z=1 '<bos>'");
  EXPECT_EQ(t[2][0], "t_z=2 'a,b'");
  EXPECT_EQ(t[3][0], "t_z=3 '\"q\"'");
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(t[i + 1].size(), 5u);
    for (int j = 0; j < 4; ++j)
      EXPECT_TRUE(same_float(std::strtof(t[i + 1][j + 1].c_str(), nullptr), m(i, j))) << i << "," << j;
  }
  EXPECT_EQ(t[1][2], "-inf");
  EXPECT_EQ(t[3][1], "nan");
}

TEST(Export, CsvOpensInPythonCsvAndNumpy) {
  if (!have_numpy()) GTEST_SKIP() << "no /usr/bin/python3 with numpy";
  const MatF m = awkward();
  const std::string path = temp_path("py.csv");
  write_csv(path, m, "X", CsvAxis{"i", {"x", "y,z", "w"}}, CsvAxis{"t", {}});
  const std::string plain = temp_path("plain.csv");  // genfromtxt does not read quoted fields
  write_csv(plain, m, "X", CsvAxis{"i", {"x", "y", "w"}}, CsvAxis{"t", {}});
  // Python's csv gives the labels whole and float() the numbers; genfromtxt the same matrix.
  const std::string out = python(
      "import csv, json, numpy as np\n"
      "rows = list(csv.reader(open('" + path + "', newline='', encoding='utf-8')))\n"
      "vals = [[float(x) for x in r[1:]] for r in rows[1:]]\n"
      "g = np.genfromtxt('" + plain + "', delimiter=',', skip_header=1, usecols=range(1, 5), dtype=np.float32)\n"
      "same = all((np.float32(a) == b) or (np.isnan(a) and np.isnan(b)) for ra, rb in zip(vals, g) for a, b in zip(ra, rb))\n"
      "print(json.dumps({'labels': [r[0] for r in rows], 'shape': list(g.shape), 'same': bool(same),\n"
      "  'bits': np.asarray(vals, dtype=np.float32).tobytes().hex()}))\n");
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["labels"], (std::vector<std::string>{"X", "i=1 'x'", "i=2 'y,z'", "i=3 'w'"}));
  EXPECT_EQ(j["shape"], (std::vector<int>{3, 4}));
  EXPECT_TRUE(j["same"].get<bool>());
  // float(text) in Python, cast to float32: every bit as written (NaN as a NaN).
  const std::string hex = j["bits"];
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 4; ++k) {
      uint32_t u = 0;
      for (int b = 0; b < 4; ++b)
        u |= static_cast<uint32_t>(std::stoul(hex.substr(((i * 4 + k) * 4 + b) * 2, 2), nullptr, 16)) << (8 * b);
      float x;
      std::memcpy(&x, &u, 4);
      EXPECT_TRUE(same_float(x, m(i, k))) << i << "," << k;
    }
}

TEST(Export, NpyOfAStridedViewReadsBackBitwise) {
  // W (3×5) in θ's storage, viewed as Wᵀ (5×3) the way the trace binds the tied W_u = W_eᵀ.
  MatF W(3, 5);
  for (int i = 0; i < 15; ++i) W.data()[i] = static_cast<float>(i) * 0.37f - 2.0f;
  W(1, 2) = -INFINITY;
  W(2, 4) = NAN;
  const TraceMat view = TraceMat::view(W.data(), 3, 5, true);
  ASSERT_EQ(view.rows(), 5);
  const std::string path = temp_path("wt.npy");
  write_npy(path, view);
  const MatF back = read_npy(path);
  ASSERT_EQ(back.rows(), 5);
  ASSERT_EQ(back.cols(), 3);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_TRUE(same_float(back(i, j), W(j, i)));
  if (!have_numpy()) GTEST_SKIP() << "no /usr/bin/python3 with numpy";
  const auto j = nlohmann::json::parse(python(
      "import json, numpy as np\n"
      "a = np.load('" + path + "')\n"
      "print(json.dumps({'shape': list(a.shape), 'dtype': str(a.dtype), 'bits': a.tobytes(order='C').hex(),\n"
      "  'neginf': [int(x) for x in np.argwhere(np.isneginf(a))[0]], 'nan': [int(x) for x in np.argwhere(np.isnan(a))[0]]}))\n"));
  EXPECT_EQ(j["shape"], (std::vector<int>{5, 3}));
  EXPECT_EQ(j["dtype"], "float32");
  EXPECT_EQ(j["neginf"], (std::vector<int>{2, 1}));  // W(1, 2) is Wᵀ(2, 1)
  EXPECT_EQ(j["nan"], (std::vector<int>{4, 2}));
  std::string want;
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < 3; ++k) {
      const float x = W(k, i);
      unsigned char b[4];
      std::memcpy(b, &x, 4);
      char h[9];
      std::snprintf(h, sizeof h, "%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
      want += h;
    }
  EXPECT_EQ(j["bits"], want);
}

TEST(Export, TraceJsonHasEveryEventAndItsValues) {
  const Model model = Model::initialised(small_config(), 5);
  const auto tok = make_tokenizer(model.config);
  Trace trace;
  Tracer tr(trace);
  const Tokens x{5, 1, 3, 2};  // <bos> a , b
  trace.tokens_x = x;
  dtransformer<float>(x, model.config, model.weights(), &tr);
  const std::string path = temp_path("trace.json");
  write_trace_json(path, trace, {"small", to_json(model.config), "Forward (Algorithm 10)", tok.get()}, true);
  // Read back in C++: the same events, and every value's numbers (masked −∞ as "-inf").
  const auto j = nlohmann::json::parse(read_file(path, size_t(1) << 30));
  EXPECT_EQ(j["format"], "stepformer-trace");
  EXPECT_EQ(j["model"]["config"]["L"], 2);
  EXPECT_EQ(j["tokens"]["x"]["ids"], x);
  EXPECT_EQ(j["tokens"]["x"]["labels"][2], ",");
  ASSERT_EQ(j["events"].size(), trace.size());
  size_t neg_inf = 0;
  for (size_t k = 0; k < trace.size(); ++k) {
    const Event& e = trace.events[k];
    const auto& je = j["events"][k];
    ASSERT_EQ(je["algorithm"], e.alg);
    ASSERT_EQ(je["line"], e.line);
    ASSERT_EQ(je["depth"], e.depth);
    EXPECT_EQ(je["indices"].value("l", 0), e.idx.l);
    EXPECT_EQ(je["indices"].value("h", 0), e.idx.h);
    ASSERT_EQ(je["values"].size(), e.values.size());
    for (size_t i = 0; i < e.values.size(); ++i) {
      const Value& v = e.values[i];
      const auto& jv = je["values"][i];
      ASSERT_EQ(jv["name"], v.name);
      if (v.kind == ValueKind::Tokens) {
        EXPECT_EQ(jv["tokens"]["ids"], v.tokens);
        continue;
      }
      ASSERT_EQ(jv["shape"], (std::vector<long>{v.m.rows(), v.m.cols()}));
      for (Eigen::Index r = 0; r < v.m.rows(); ++r)
        for (Eigen::Index c = 0; c < v.m.cols(); ++c) {
          const auto& x = jv["values"][r][c];
          const float got = x.is_string() ? std::strtof(x.get<std::string>().c_str(), nullptr) : x.get<float>();
          ASSERT_TRUE(same_float(got, v.m(r, c))) << v.name << " at event " << k;
          neg_inf += got == -INFINITY;
        }
    }
  }
  EXPECT_GT(neg_inf, 0u) << "the causal mask's −∞ scores are in the trace";
  // Python's json and numpy read the same.
  if (!have_numpy()) GTEST_SKIP() << "no /usr/bin/python3 with numpy";
  const auto py = nlohmann::json::parse(python(
      "import json, numpy as np\n"
      "t = json.load(open('" + path + "', encoding='utf-8'))\n"
      "S = [v for e in t['events'] if e['algorithm'] == 4 and e['line'] == 5 for v in e['values'] if v['name'] == 'S'][0]\n"
      "a = np.array(S['values'], dtype=np.float32)\n"
      "print(json.dumps({'n': len(t['events']), 'alglines': [[e['algorithm'], e['line']] for e in t['events']],\n"
      "  'shape': list(a.shape), 'bits': a.tobytes().hex(), 'neginf': int(np.isneginf(a).sum())}))\n"));
  EXPECT_EQ(py["n"], trace.size());
  for (size_t k = 0; k < trace.size(); ++k) {
    EXPECT_EQ(py["alglines"][k][0], trace.events[k].alg);
    EXPECT_EQ(py["alglines"][k][1], trace.events[k].line);
  }
  const Value* S = nullptr;  // the masked scores, Algorithm 4 line 5
  for (const Event& e : trace.events)
    for (const Value& v : e.values)
      if (!S && e.alg == 4 && e.line == 5 && v.name == "S") S = &v;
  ASSERT_NE(S, nullptr);
  EXPECT_EQ(py["shape"], (std::vector<long>{S->m.rows(), S->m.cols()}));
  EXPECT_EQ(py["neginf"], 6) << "a 4-token causal mask hides 6 scores";
  std::string want;
  for (Eigen::Index r = 0; r < S->m.rows(); ++r)
    for (Eigen::Index c = 0; c < S->m.cols(); ++c) {
      const float x = S->m(r, c);
      unsigned char b[4];
      std::memcpy(b, &x, 4);
      char h[9];
      std::snprintf(h, sizeof h, "%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
      want += h;
    }
  EXPECT_EQ(py["bits"], want);
}

TEST(Export, TraceJsonWithoutValuesAndAFailedWriteKeepsTheOldFile) {
  const Model model = Model::initialised(small_config(), 5);
  Trace trace;
  Tracer tr(trace);
  dtransformer<float>(Tokens{5, 1}, model.config, model.weights(), &tr);
  const std::string path = temp_path("novalues.json");
  write_trace_json(path, trace, {"small", "", "", nullptr}, false);
  const auto j = nlohmann::json::parse(read_file(path, 1 << 24));
  EXPECT_FALSE(j["values_included"].get<bool>());
  for (const auto& e : j["events"])
    for (const auto& v : e["values"]) EXPECT_FALSE(v.contains("values"));
  // A folder that does not exist: an error that names the file, and nothing is left behind.
  EXPECT_THROW(write_trace_json("/nonexistent-dir/t.json", trace, {}, true), Error);
  write_file_atomic(path, "old");
  const std::string dir_path = temp_path("");  // a folder: the rename fails
  EXPECT_THROW(write_trace_json(dir_path, trace, {}, false), Error);
  EXPECT_EQ(read_file(path, 10), "old");
  for (const auto& f : fs::directory_iterator(dir_path))
    EXPECT_EQ(f.path().string().find(".tmp."), std::string::npos) << f.path();
}

}  // namespace test_export
