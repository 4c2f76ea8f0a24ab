// The training data of core/datasets.hpp: generated tasks (deterministic by seed, correct,
// validation disjoint from training), text and sequence files, the word list, and the §4
// tokenization [bos_token, characters…, eos_token].
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/training/datasets.hpp"
#include "core/model/error.hpp"

namespace test_datasets {

using namespace sf;
namespace fs = std::filesystem;

namespace {

TaskOptions small(uint64_t seed) {
  TaskOptions t;
  t.seed = seed;
  t.train_size = 300;
  t.val_size = 50;
  return t;
}

fs::path temp_file(const std::string& name, const std::string& content) {
  const fs::path p = fs::temp_directory_path() / ("stepformer_datasets_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

TEST(Datasets, TasksAreDeterministicBySeedAndSplitIntoDisjointSets) {
  for (const std::string name : {"sort", "reverse", "copy", "add"}) {
    SCOPED_TRACE(name);
    const Dataset a = make_task(name, small(1)), b = make_task(name, small(1)), c = make_task(name, small(2));
    EXPECT_EQ(a.train, b.train);
    EXPECT_EQ(a.val, b.val);
    EXPECT_NE(a.train, c.train);
    EXPECT_EQ(a.train.size(), 300u);
    EXPECT_EQ(a.val.size(), 50u);
    const std::set<std::string> train(a.train.begin(), a.train.end());
    for (const auto& v : a.val) EXPECT_FALSE(train.count(v)) << v;
    EXPECT_TRUE(missing_characters(a.vocab,
                                   [&] {
                                     ModelConfig m;
                                     m.vocab = a.vocab;
                                     return m;
                                   }())
                    .empty());
    EXPECT_EQ(a.preview(3), std::vector<std::string>(a.train.begin(), a.train.begin() + 3));
    EXPECT_NE(a.name.find("seed 1"), std::string::npos);
  }
}

TEST(Datasets, EachTaskComputesWhatItSays) {
  for (const auto& s : make_task("sort", small(3)).train) {
    const size_t eq = s.find('=');
    ASSERT_NE(eq, std::string::npos) << s;
    std::string in = s.substr(0, eq);
    EXPECT_GE(in.size(), 3u);
    EXPECT_LE(in.size(), 8u);
    std::sort(in.begin(), in.end());
    EXPECT_EQ(s.substr(eq + 1), in) << s;
  }
  for (const auto& s : make_task("reverse", small(3)).train) {
    const size_t eq = s.find('=');
    std::string in = s.substr(0, eq);
    std::reverse(in.begin(), in.end());
    EXPECT_EQ(s.substr(eq + 1), in) << s;
  }
  for (const auto& s : make_task("add", small(3)).train) {
    const size_t plus = s.find('+'), eq = s.find('=');
    ASSERT_TRUE(plus != std::string::npos && eq != std::string::npos) << s;
    EXPECT_EQ(std::stoi(s.substr(0, plus)) + std::stoi(s.substr(plus + 1, eq - plus - 1)), std::stoi(s.substr(eq + 1)));
  }
  for (const auto& s : make_task("copy", small(3)).train) {
    EXPECT_GE(s.size(), 12u);
    EXPECT_LE(s.size(), 24u);
    bool periodic = false;  // some period p in 2…5 repeats through the whole string
    for (size_t p = 2; p <= 5 && !periodic; ++p) {
      periodic = true;
      for (size_t i = p; i < s.size(); ++i) periodic = periodic && s[i] == s[i - p];
    }
    EXPECT_TRUE(periodic) << s;
  }
}

TEST(Datasets, TokenizationIsBosCharactersEos) {
  ModelConfig c;  // default vocabulary: ' ' = 1, a = 2, …
  const std::vector<Tokens> x = tokenize({"ba=ab"}, c);
  ASSERT_EQ(x.size(), 1u);
  const int eq = static_cast<int>(std::find(c.vocab.begin(), c.vocab.end(), "=") - c.vocab.begin()) + 1;
  EXPECT_EQ(x[0], (Tokens{c.bos_token(), 3, 2, eq, 2, 3, c.eos_token()}));
  EXPECT_THROW(tokenize({"abc", "aBc"}, c), Error);  // 'B' is not in the vocabulary
  try {
    tokenize({"abc", "aBc"}, c);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sequence 2"), std::string::npos) << e.what();
  }
  c.l_max = 6;
  EXPECT_THROW(tokenize({"abcde"}, c), Error);  // 5 + 2 > ℓ_max
}

TEST(Datasets, TasksRefuseAModelTooShortForThem) {
  TaskOptions t = small(1);
  t.max_chars = 10;
  EXPECT_THROW(make_task("sort", t), Error);
  EXPECT_THROW(make_task("nope", small(1)), Error);
}

TEST(Datasets, TextFileLinesBecomeSequencesWithTheFilesCharacters) {
  const fs::path p = temp_file("text.txt", "héllo wörld\r\n\nthe quick brown fox jumps\nabc\nxyz\nanother line\n");
  TaskOptions t = small(4);
  t.max_chars = 10;
  const Dataset d = text_dataset(p.string(), t);
  std::vector<std::string> all = d.train;
  all.insert(all.end(), d.val.begin(), d.val.end());
  std::sort(all.begin(), all.end());
  std::vector<std::string> want{"héllo wörl", "d",   "the quick ", "brown fox ", "jumps",
                                "abc",        "xyz", "another li", "ne"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(all, want);
  EXPECT_EQ(d.val.size(), 1u);  // 10% of 9, at least one
  EXPECT_TRUE(std::find(d.vocab.begin(), d.vocab.end(), "é") != d.vocab.end());
  EXPECT_TRUE(std::find(d.vocab.begin(), d.vocab.end(), "\r") == d.vocab.end());
  const fs::path bad = temp_file("bad.txt", "ok\nbad \xff byte\n");
  EXPECT_THROW(text_dataset(bad.string(), t), Error);
  fs::remove(p);
  fs::remove(bad);
}

TEST(Datasets, SequencesFileKeepsFileOrderAndHoldsNothingOut) {
  const fs::path p = temp_file("seq.txt", "cab=abc\n\nba=ab\nzyx=xyz\n");
  const Dataset d = sequences_dataset(p.string(), 62);
  EXPECT_EQ(d.train, (std::vector<std::string>{"cab=abc", "ba=ab", "zyx=xyz"}));
  EXPECT_TRUE(d.val.empty());
  EXPECT_EQ(d.vocab, (std::vector<std::string>{"=", "a", "b", "c", "x", "y", "z"}));
  EXPECT_THROW(sequences_dataset(p.string(), 6), Error);  // "cab=abc" is 7 characters
  fs::remove(p);
}

TEST(Datasets, WordsAreLowercaseLettersOfTheWordList) {
  const fs::path p = temp_file("words.txt", "apple\nBanana\ncan't\npear\nkiwi\nfig\nlime\n");
  const Dataset d = word_dataset(p.string(), small(5));
  std::vector<std::string> all = d.train;
  all.insert(all.end(), d.val.begin(), d.val.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::string>{"apple", "fig", "kiwi", "lime", "pear"}));
  EXPECT_EQ(d.val.size(), 1u);
  fs::remove(p);
  try {
    word_dataset("/nonexistent/words", small(5));
    FAIL() << "no error for a missing word list";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/words"), std::string::npos) << e.what();
  }
}

TEST(Datasets, TheWordsTaskNamesItsPackageWhenTheListIsMissing) {
  if (!fs::exists(kDictWords)) {
    try {
      make_task("words", small(1));
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("wamerican"), std::string::npos) << e.what();
    }
    return;
  }
  const Dataset d = make_task("words", small(1));
  EXPECT_GT(d.train.size(), 1000u);
  for (const auto& w : d.preview(50))
    EXPECT_TRUE(std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; })) << w;
}

}  // namespace

}  // namespace test_datasets
