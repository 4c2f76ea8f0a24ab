// Word-level and trained BPE tokenizers (core/tokenizers/word.*, bpe.*) and BERT's WordPiece
// against the independent Python oracle (tests/oracle/wordpiece_oracle.py).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/tokenizers/bpe.hpp"
#include "core/tokenizers/word.hpp"
#include "core/tokenizers/wordpiece.hpp"
#include "tests/core/test_tokenizers_support.hpp"

namespace sf {
namespace test_tokenizers {

using test::expect_error;
using test::read_all;
using test::tokenizer_data;

ModelConfig word_config(const std::string& corpus, int max_words) {
  ModelConfig c;
  c.tokenizer = TokenizerKind::Word;
  c.vocab = build_word_vocab(corpus, max_words);
  return c;
}

std::vector<std::string> texts_of(const std::vector<TextPiece>& pieces) {
  std::vector<std::string> out;
  for (const TextPiece& p : pieces) out.push_back(p.text);
  return out;
}

// ---- word-level ----

TEST(TokenizersWord, SplitsLettersDigitsAndSinglePunctuation) {
  std::vector<std::string> words;
  std::vector<size_t> bytes;
  for (const WordSpan& w : split_words("Hello, wörld 42x!!  ok")) words.push_back(w.word), bytes.push_back(w.byte);
  EXPECT_EQ(words, (std::vector<std::string>{"Hello", ",", "wörld", "42", "x", "!", "!", "ok"}));
  EXPECT_EQ(bytes, (std::vector<size_t>{0, 5, 7, 14, 16, 17, 18, 21}));
}

TEST(TokenizersWord, VocabularyMostFrequentFirstTiesByFirstOccurrence) {
  EXPECT_EQ(build_word_vocab("the cat the dog. The cat", 0),
            (std::vector<std::string>{"[UNK]", "the", "cat", "dog", ".", "The"}));
  EXPECT_EQ(build_word_vocab("the cat the dog. The cat", 3), (std::vector<std::string>{"[UNK]", "the", "cat"}));
  expect_error([] { build_word_vocab("a b", 1); }, {"[UNK]", "at least 2"});
  expect_error([] { build_word_vocab("   \n ", 0); }, {"no words"});
}

TEST(TokenizersWord, UnknownWordsAreUnkAndSpecialTokensAreRecognised) {
  const ModelConfig c = word_config("the cat the dog. The cat", 0);
  const auto t = make_tokenizer(c);
  EXPECT_EQ(t->kind(), TokenizerKind::Word);
  EXPECT_EQ(t->N_V(), 6 + 3);
  EXPECT_EQ(t->encode("the bird sat."), (Tokens{2, 1, 1, 5}));
  EXPECT_TRUE(t->unknown("zebras and ünïcode").empty());
  EXPECT_EQ(t->encode("[BOS] cat [MASK] [EOS]"), (Tokens{8, 3, 7, 9}));
  EXPECT_EQ(t->label(1), "[UNK]");
  EXPECT_EQ(t->label(7), "<mask>");
  EXPECT_EQ(t->decode_text(t->encode("the   cat\n.dog")), "the cat . dog");
  EXPECT_EQ(t->decode_text(t->encode_sequence("The bird", true)), "The [UNK]");
}

TEST(TokenizersWord, RoundTripOfTheCorpusUpToSpacing) {
  const std::string corpus = read_all(tokenizer_data() / "gpt2_corpus.txt");
  const auto t = make_tokenizer(word_config(corpus, 0));
  std::string joined;
  for (const WordSpan& w : split_words(corpus)) joined += (joined.empty() ? "" : " ") + w.word;
  EXPECT_EQ(t->decode_text(t->encode(corpus)), joined);
  ModelConfig bad;
  bad.tokenizer = TokenizerKind::Word;
  bad.vocab = {"the", "[UNK]"};
  expect_error([&] { make_tokenizer(bad); }, {"must start with \"[UNK]\"", "\"the\""});
  bad.vocab = {"[UNK]", "a", "a"};
  expect_error([&] { make_tokenizer(bad); }, {"\"a\" twice", "2 and 3"});
}

// ---- BPE trained here ----

// Sennrich et al.'s example, one word per line (so no word has a leading space): low ×5, lower ×2,
// newest ×6, widest ×3. Pair counts by hand: e s 9, s t 9, w e 8, l o 7, o w 7, n e 6, e w 6, …
const std::string kLowCorpus = [] {
  std::string s;
  for (auto [w, n] : {std::pair{"low", 5}, {"lower", 2}, {"newest", 6}, {"widest", 3}})
    for (int i = 0; i < n; ++i) s += std::string(w) + "\n";
  return s;
}();

TEST(TokenizersBpe, WordsKeepTheirLeadingSpaceAndOtherWhitespaceAlone) {
  EXPECT_EQ(bpe_words("low  lower\nnew\t x "), (std::vector<std::string>{"low", " ", " lower", "\n", "new", "\t", " x", " "}));
}

TEST(TokenizersBpe, HandCheckedMergesOfTheLowLowerNewestWidestCorpus) {
  BpeTrainer t(kLowCorpus, 11 + 7);
  EXPECT_EQ(t.vocab(), (std::vector<std::string>{"\n", "d", "e", "i", "l", "n", "o", "r", "s", "t", "w"}));
  const auto top = t.top_pairs(3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0], (std::pair{std::pair<std::string, std::string>{"e", "s"}, 9}));  // tie with s t: e s is smaller
  EXPECT_EQ(top[1], (std::pair{std::pair<std::string, std::string>{"s", "t"}, 9}));
  EXPECT_EQ(top[2], (std::pair{std::pair<std::string, std::string>{"w", "e"}, 8}));
  t.run();
  std::vector<std::string> got;
  for (const BpeMerge& m : t.merges()) got.push_back(m.left + "+" + m.right + "=" + m.merged + ":" + std::to_string(m.count) + "#" + std::to_string(m.rank));
  EXPECT_EQ(got, (std::vector<std::string>{"e+s=es:9#1", "es+t=est:9#2", "l+o=lo:7#3", "lo+w=low:7#4", "e+w=ew:6#5",
                                           "ew+est=ewest:6#6", "n+ewest=newest:6#7"}));
  EXPECT_TRUE(t.done());
  EXPECT_EQ(t.vocab().size(), 18u);
  EXPECT_EQ(t.corpus_pieces()[10], (std::vector<std::string>{"low", "e", "r"}));  // word 11: the first "lower"
  expect_error([&] { t.step(); }, {"done", "18 of 18"});
}

TEST(TokenizersBpe, TrainedTokenizerEncodesByRankAndRoundTrips) {
  const ModelConfig c = train_bpe(kLowCorpus, 18, ModelConfig{});
  EXPECT_EQ(c.tokenizer, TokenizerKind::Bpe);
  EXPECT_EQ(c.merges.front(), "e s");
  const auto t = make_tokenizer(c);
  EXPECT_EQ(t->N_V(), 18 + 3);
  const auto pieces = t->tokenize("lower\nnewest\nlowest");
  EXPECT_EQ(texts_of(pieces), (std::vector<std::string>{"low", "e", "r", "\n", "newest", "\n", "low", "est"}));
  EXPECT_EQ(pieces[4].id, 18);  // "newest", the last piece
  EXPECT_EQ(pieces[7].byte, 16u);
  EXPECT_EQ(t->decode_text(t->encode("lower\nnewest\nlowest")), "lower\nnewest\nlowest");
  EXPECT_FALSE(t->unknown(" low").empty());  // the corpus has no space
  EXPECT_EQ(t->encode("[BOS]low[EOS]"), (Tokens{20, 15, 21}));
  const auto bad = t->unknown("lox");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].chr, "x");
}

TEST(TokenizersBpe, SpacesAreShownAndMergesWithALeadingSpaceSplitAtTheLastSpace) {
  const ModelConfig c = train_bpe("the cat the hat the mat\n", 40, ModelConfig{});
  const auto t = make_tokenizer(c);
  ASSERT_EQ(texts_of(t->tokenize(" the")).size(), 1u);
  const int id = t->encode(" the")[0];
  EXPECT_EQ(t->piece(id), " the");
  EXPECT_EQ(t->label(id), "␣the");
  EXPECT_EQ(t->label(t->encode("\n")[0]), "↵");
  bool leading = false;
  for (const std::string& m : c.merges) leading |= m.rfind("  ", 0) == 0;  // "  t": left " ", right "t"
  EXPECT_TRUE(leading);
}

TEST(TokenizersBpe, StepsEqualTheTrainedTokenizerAndReTokenizeTheCorpus) {
  const std::string corpus = read_all(tokenizer_data() / "gpt2_corpus.txt");
  BpeTrainer a(corpus, 700), b(corpus, 700);  // 402 characters, then merges
  while (!a.done()) a.step();
  b.run();
  ASSERT_EQ(a.merges().size(), b.merges().size());
  const ModelConfig c = train_bpe(corpus, 700, ModelConfig{});
  ASSERT_EQ(c.merges.size(), a.merges().size());
  for (size_t i = 0; i < c.merges.size(); ++i) EXPECT_EQ(c.merges[i], a.merges()[i].left + " " + a.merges()[i].right);
  EXPECT_EQ(c.vocab, a.vocab());
  EXPECT_EQ(c.vocab.size(), 700u);
  EXPECT_GE(c.merges.size(), 298u);
  // Encoding by rank gives the trainer's own segmentation of every word, and the exact text back.
  const BpeTokenizer t(c);
  const auto words = bpe_words(corpus);
  const auto pieces = a.corpus_pieces();
  ASSERT_EQ(words.size(), pieces.size());
  for (size_t i = 0; i < words.size(); ++i) EXPECT_EQ(t.encode_word(words[i]), pieces[i]) << "word " << i;
  EXPECT_EQ(t.decode_text(t.encode(corpus)), corpus);
  EXPECT_TRUE(t.unknown(corpus).empty());
}

TEST(TokenizersBpe, MalformedMergesAreNamed) {
  ModelConfig c = train_bpe(kLowCorpus, 18, ModelConfig{});
  c.merges[2] = "l q";
  expect_error([&] { make_tokenizer(c); }, {"merge 3", "\"q\"", "not in the vocabulary"});
  c.merges[2] = "lo";
  expect_error([&] { make_tokenizer(c); }, {"merge 3", "not \"left right\""});
  expect_error([] { BpeTrainer("", 10); }, {"empty"});
}

// ---- WordPiece against the Python oracle ----

TEST(TokenizersWordPiece, MatchesThePythonOracleUncasedAndCased) {
  const auto expected = nlohmann::json::parse(read_all(tokenizer_data() / "wordpiece_expected.json"));
  const auto uncased = load_wordpiece_files((tokenizer_data() / "bert" / "vocab.txt").string());
  ASSERT_TRUE(uncased->lowercase());
  std::vector<std::string> pieces;
  for (int id = 1; id <= uncased->N_V(); ++id) pieces.push_back(uncased->piece(id));
  const WordPieceTokenizer cased(pieces, false, "vocab.txt");
  ASSERT_GE(expected["cases"].size(), 30u);
  for (const auto& k : expected["cases"]) {
    const std::string text = k["text"];
    for (const auto& [t, key] : {std::pair<const WordPieceTokenizer*, const char*>{uncased.get(), "uncased"}, {&cased, "cased"}}) {
      std::vector<int> got;
      for (int id : t->encode(text)) got.push_back(t->file_id(id));
      EXPECT_EQ(got, k[key].get<std::vector<int>>()) << key << ": " << text;
    }
  }
}

TEST(TokenizersWordPiece, SpecialTokensAndLabels) {
  const auto t = load_wordpiece_files((tokenizer_data() / "bert" / "vocab.txt").string());
  // vocab.txt starts [PAD] [unused0] [unused1] [UNK] [CLS] [SEP] [MASK]: paper id = line number.
  EXPECT_EQ(t->pad_token(), 1);
  EXPECT_EQ(t->unk_token(), 4);
  EXPECT_EQ(t->bos_token(), 5);
  EXPECT_EQ(t->eos_token(), 6);
  EXPECT_EQ(t->mask_token(), 7);
  const Tokens ids = t->encode("The [MASK] jumps");
  EXPECT_EQ(t->label(ids[1]), "[MASK]");
  EXPECT_EQ(t->label(ids[3]), "##s");
  EXPECT_EQ(t->file_id(ids[1]), 6);
  EXPECT_EQ(t->decode_text(t->encode_sequence("The fox jumps", true)), "the fox jumps");
  EXPECT_EQ(t->encode(std::string(101, 'a')), (Tokens{4}));
  EXPECT_TRUE(t->unknown("👋 ж").empty());  // [UNK], never "no id"
}

TEST(TokenizersWordPiece, ConfigSetsCasingAndBadFilesAreNamed) {
  test::ScratchDir dir("wordpiece");
  std::filesystem::copy_file(tokenizer_data() / "bert" / "vocab.txt", dir / "vocab.txt");
  test::write_all(dir / "tokenizer_config.json", R"({"do_lower_case": false})");
  const auto t = load_tokenizer_files(dir.path.string());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), TokenizerKind::WordPiece);
  EXPECT_NE(t->describe().find("cased"), std::string::npos);
  EXPECT_EQ(t->label(t->encode("The")[0]), "The");
  test::write_all(dir / "tokenizer_config.json", R"({"do_lower_case": "yes"})");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"tokenizer_config.json", "do_lower_case"});
  std::filesystem::remove(dir / "tokenizer_config.json");
  test::write_all(dir / "vocab.txt", "");
  expect_error([&] { load_tokenizer_files(dir.path.string()); }, {"vocab.txt", "empty"});
  test::write_all(dir / "vocab.txt", "[PAD]\nthe\n");
  expect_error([&] { load_tokenizer_files((dir / "vocab.txt").string()); }, {"vocab.txt", "[UNK]"});
}

}  // namespace test_tokenizers
}  // namespace sf
