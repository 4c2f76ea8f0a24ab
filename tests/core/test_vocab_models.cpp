// GPT-layout models without GPT-2's tokenizer files (core/io/gpt_vocabulary.hpp, issue 22) on the
// test data of tests/reference/gen_vocab_models.py (tests/data/vocab/): minGPT with N_V = 3 and no
// tokenizer (plain ids), nanoGPT's character model with its meta.pkl written by Python's pickle at
// protocols 2–5, the vocabulary from config.json and vocab.txt, hostile pickles refused. The
// forward values are checked against the independent float64 PyTorch reference (expected.json).
#include <gtest/gtest.h>

#include <cmath>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/architecture.hpp"
#include "core/io/npy.hpp"
#include "core/io/pickle_meta.hpp"
#include "core/tokenizers/token_list.hpp"
#include "test_cli_support.hpp"
#include "test_ecosystem_support.hpp"

namespace test_vocab_models {

using namespace sf;
using namespace sf::test;

namespace {

fs::path vocab_dir(const std::string& name) { return fs::path(STEPFORMER_TEST_DATA) / "vocab" / name; }

fs::path copy_vocab_case(const std::string& name, const TempDir& tmp) {
  const fs::path to = tmp.path() / name;
  fs::copy(vocab_dir(name), to, fs::copy_options::recursive);
  return to;
}

void write_bytes(const fs::path& p, const std::string& bytes) { write_file_atomic(p.string(), bytes); }

std::string pickle_bytes(const std::string& name) {
  return read_file((vocab_dir("pickles") / name).string(), size_t{1} << 20);
}

// A string of the literal's bytes, NULs included.
template <size_t N>
std::string bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

bool has_note(const OpenedModel& m, const std::string& phrase) {
  for (const std::string& n : m.notes)
    if (n.find(phrase) != std::string::npos) return true;
  return false;
}

// The largest |log P[v, t] − reference| over every v and t (expected.json's log_p is ℓ × N_V).
double log_p_gap(const Mat<double>& P, const json& log_p) {
  double worst = 0;
  for (size_t t = 0; t < log_p.size(); ++t)
    for (size_t v = 0; v < log_p[t].size(); ++v)
      worst = std::max(worst, std::abs(std::log(P(static_cast<Eigen::Index>(v), static_cast<Eigen::Index>(t))) -
                                       log_p[t][v].get<double>()));
  return worst;
}

// Algorithm 10 in float and in double (θ cast) against the reference. The float bound is
// EcosystemReference's: float32 rounding (2⁻²⁴ relative) through one layer of sums over at most
// 32 terms of values ≲ 10 stays below 1e-5 in log P; 1e-4 leaves a margin of 10. In double the
// weights are the file's float32 values exactly, so only float64 rounding is left: 1e-9.
void expect_reference_forward(const OpenedModel& m, const json& doc) {
  const Model& model = m.checkpoint.model;
  const Tokens x = doc.at("x").get<Tokens>();
  const Mat<double> Pf = architecture(model.config).forward(model, {}, x).cast<double>();
  EXPECT_LT(log_p_gap(Pf, doc.at("log_p")), 1e-4);
  const std::vector<double> theta(model.theta.begin(), model.theta.end());
  const Mat<double> Pd = dtransformer<double>(x, model.config, bind_gpt<const double>(model.table, theta.data()));
  EXPECT_LT(log_p_gap(Pd, doc.at("log_p")), 1e-9);
}

json expected(const std::string& name) { return load_test_json("vocab/" + name + "/expected.json"); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Plain ids

TEST(PlainIds, AMinGptWithoutTokenizerFilesOpensWithIdsAndSaysSo) {
  const OpenedModel m = open_model(vocab_dir("mingpt-ids").string());
  const Tokenizer& tok = *m.tokenizer;
  EXPECT_EQ(m.layout, Layout::NanoGpt);
  EXPECT_EQ(tok.N_V(), 3);
  EXPECT_EQ(m.checkpoint.model.config.N_V(), 3);
  EXPECT_EQ(tok.label(1), "#1");
  EXPECT_EQ(tok.label(3), "#3");
  EXPECT_EQ(tok.file_id(1), 0);  // #1 is the model's own token 0, row 0 of wte
  EXPECT_EQ(tok.bos_token(), 0);
  for (const std::string& n : m.notes) EXPECT_EQ(n.find("bos_token"), std::string::npos) << n;  // one line says it all
  EXPECT_TRUE(has_note(m, "no tokenizer files (vocab.json + merges.txt")) << m.notes.front();
  EXPECT_TRUE(has_note(m, "tokens are shown as their ids #k"));
  EXPECT_EQ(m.files.size(), 2u);  // model.safetensors, config.json
  expect_reference_forward(m, expected("mingpt-ids"));
}

TEST(PlainIds, ThePromptTakesIdsAndRoundTrips) {
  const PlainIdsTokenizer tok(3);
  EXPECT_EQ(tok.encode("1 2 3"), (Tokens{1, 2, 3}));
  EXPECT_EQ(tok.encode("3,1, 2"), (Tokens{3, 1, 2}));
  EXPECT_EQ(tok.encode("#2 #3"), (Tokens{2, 3}));
  EXPECT_EQ(tok.encode_sequence("1 2", false), (Tokens{1, 2}));  // nothing added: the model has no bos_token
  EXPECT_EQ(tok.decode_text({3, 1}), "#3 #1");
  EXPECT_EQ(tok.encode(tok.decode_text({3, 1, 2})), (Tokens{3, 1, 2}));
  EXPECT_EQ(tok.parse_ids("1,2,3,1"), (Tokens{1, 2, 3, 1}));
  for (const std::string bad : {"1 x 2", "0", "4", "#", "99999999999999", "1.5"}) {
    SCOPED_TRACE(bad);
    try {
      tok.encode(bad);
      ADD_FAILURE() << "encoded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a token id"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("ids 1 … 3 separated by spaces or commas"), std::string::npos) << e.what();
    }
  }
  const std::vector<UnknownChar> bad = tok.unknown("1 cat 2");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].chr, "cat");
  EXPECT_EQ(bad[0].byte, 2u);
}

#ifdef STEPFORMER_CLI
// The issue's command: `forward --tokens 1,2,3,1` on minGPT with no tokenizer prints #k labels and
// writes the reference's P (tolerance: expect_reference_forward's float bound).
TEST(PlainIds, CliForwardTakesTokensOnAModelWithoutTokenizerFiles) {
  TempDir tmp;
  const json doc = expected("mingpt-ids");
  const std::string npy = (tmp.path() / "P.npy").string();
  const CliResult r = run_cli(tmp.path(), {"forward", "--model", vocab_dir("mingpt-ids").string(), "--tokens", "1,2,3,1", "--out", npy});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("x = [1, 2, 3, 1]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("file id = id − 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("     4     1        0  '#1'"), std::string::npos) << r.out;  // t, id, the model's own id, label
  const MatF P = read_npy(npy);
  ASSERT_EQ(P.rows(), 3);
  ASSERT_EQ(P.cols(), 4);
  EXPECT_LT(log_p_gap(P.cast<double>(), doc.at("log_p")), 1e-4);
  const CliResult bad = run_cli(tmp.path(), {"forward", "--model", vocab_dir("mingpt-ids").string(), "--prompt", "1 cat"});
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("\"cat\" at position 2 is not a token id"), std::string::npos) << bad.err;
}
#endif

// ---------------------------------------------------------------------------------------------
// nanoGPT's character model and its meta.pkl

TEST(CharVocabulary, NanoGptMetaPklAtEveryProtocolOpensWithItsCharacters) {
  const json doc = expected("nanogpt-char");
  const std::string text = doc.at("text"), chars = doc.at("chars");
  for (int protocol : {2, 3, 4, 5}) {
    SCOPED_TRACE("protocol " + std::to_string(protocol));
    TempDir tmp;
    const fs::path dir = copy_vocab_case("nanogpt-char", tmp);
    fs::copy_file(vocab_dir("pickles") / ("meta_p" + std::to_string(protocol) + ".pkl"), dir / "meta.pkl",
                  fs::copy_options::overwrite_existing);
    const OpenedModel m = open_model(dir.string());
    const Tokenizer& tok = *m.tokenizer;
    ASSERT_EQ(tok.N_V(), 34);
    EXPECT_EQ(tok.piece(1), "\n");
    EXPECT_EQ(tok.label(1), "↵");
    EXPECT_EQ(tok.label(2), "␣");
    EXPECT_EQ(tok.piece(34), "é");
    EXPECT_EQ(tok.encode_sequence(text, false), doc.at("x").get<Tokens>());
    EXPECT_EQ(tok.decode_text(doc.at("x").get<Tokens>()), text);
    EXPECT_TRUE(has_note(m, "the model's own token list from meta.pkl (34 tokens")) << m.notes.front();
    EXPECT_EQ(fs::path(m.files.back()).filename(), "meta.pkl");
    expect_reference_forward(m, doc);
  }
}

TEST(CharVocabulary, AnUnknownCharacterNamesTheTokenList) {
  const OpenedModel m = open_model(vocab_dir("nanogpt-char").string());
  try {
    m.tokenizer->encode("hello World");
    ADD_FAILURE() << "encoded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("character \"W\" at position 7 is not in the model's token list"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("meta.pkl lists: ↵␣!',.?abc"), std::string::npos) << e.what();
  }
}

// config.json's "vocab" and "itos", then vocab.txt, then meta.pkl: each gives the same tokens.
TEST(CharVocabulary, TheSourcesInTheirOrder) {
  const json doc = expected("nanogpt-char");
  const std::string chars = doc.at("chars");
  TempDir tmp;
  const fs::path dir = copy_vocab_case("nanogpt-char", tmp);
  auto expect_source = [&](const std::string& source) {
    const OpenedModel m = open_model(dir.string());
    EXPECT_TRUE(has_note(m, "token list from " + source + " (34 tokens")) << m.notes.front();
    EXPECT_EQ(m.tokenizer->encode(doc.at("text").get<std::string>()), doc.at("x").get<Tokens>());
  };
  // vocab.txt (over meta.pkl): a newline written \n, a space as a line holding one space.
  std::string txt;
  for (const std::string& c : {std::string("\\n"), std::string(" ")}) txt += c + "\n";
  for (size_t i = 2; i < chars.size();) {
    const size_t len = (static_cast<unsigned char>(chars[i]) & 0x80) ? 2 : 1;  // é is 2 bytes
    txt += chars.substr(i, len) + "\r\n";                                       // CRLF lines too
    i += len;
  }
  write_bytes(dir / "vocab.txt", txt);
  expect_source("vocab.txt");
  // config.json's "itos" (over vocab.txt).
  edit_config(dir, [&](json& j) {
    j["itos"] = json::array();
    for (int id = 1; id <= 34; ++id) j["itos"].push_back(open_model(vocab_dir("nanogpt-char").string()).tokenizer->piece(id));
  });
  expect_source("config.json's \"itos\"");
  // config.json's "vocab" (over "itos").
  edit_config(dir, [&](json& j) { j["vocab"] = chars; });
  expect_source("config.json's \"vocab\"");
}

TEST(CharVocabulary, ABadVocabularyIsRefusedNamingTheFile) {
  TempDir tmp;
  const fs::path dir = copy_vocab_case("nanogpt-char", tmp);
  edit_config(dir, [](json& j) { j["vocab"] = "abca"; });
  expect_open_refused(dir, {"config.json's \"vocab\" lists \"a\" twice (0-based ids 0 and 3)"});
  edit_config(dir, [](json& j) { j["vocab"] = 3; });
  expect_open_refused(dir, {"config.json: \"vocab\" must be a string holding one character per token (it is number)"});
  edit_config(dir, [](json& j) {
    j.erase("vocab");
    j["itos"] = json::array({"a", 1});
  });
  expect_open_refused(dir, {"\"itos\" must be a list of strings"});
  edit_config(dir, [](json& j) {
    j["itos"] = json::array();
    for (int i = 0; i < 40; ++i) j["itos"].push_back(std::string(1, static_cast<char>('A' + i)));
  });
  expect_open_refused(dir, {(dir / "config.json's \"itos\"").string() + " has 40 entries, the checkpoint's transformer.wte.weight has 34 rows"});
  edit_config(dir, [](json& j) { j.erase("itos"); });
  write_bytes(dir / "vocab.txt", "a\n\nb\n");
  expect_open_refused(dir, {"vocab.txt line 2 is empty"});
  write_bytes(dir / "vocab.txt", "a\n\\x\n");
  expect_open_refused(dir, {"vocab.txt line 2: a backslash must start \\n, \\t, \\r or \\\\"});
}

TEST(TokenList, VocabTxtEscapesAndLongestMatch) {
  EXPECT_EQ(parse_token_list("a\n\\n\n\\t\n\\\\\n \nab", "v"), (std::vector<std::string>{"a", "\n", "\t", "\\", " ", "ab"}));
  const TokenListTokenizer tok({"a", "ab", "b", "abc"}, "vocab.txt");
  EXPECT_EQ(tok.encode("abcab"), (Tokens{4, 2}));  // the longest listed token first
  EXPECT_EQ(tok.encode("ba"), (Tokens{3, 1}));
  EXPECT_EQ(tok.unknown("axb").at(0).chr, "x");
}

// ---------------------------------------------------------------------------------------------
// Hostile pickles: refused by name, nothing run

TEST(MetaPkl, HostilePicklesAreRefusedWithWhatTheyWouldDo) {
  const std::string plain = "Stepformer reads only plain dicts, lists, strings and integers and never runs code in a pickle";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"reduce.pkl", {"uses pickle opcode STACK_GLOBAL (imports a name)", plain}},         // protocol 4's os.system
      {"reduce_p2.pkl", {"uses pickle opcode GLOBAL (imports a name) at byte", plain}},    // protocol 2's
      {"build.pkl", {"uses pickle opcode BUILD (sets an object's state) at byte 6", plain}},
      {"truncated.pkl", {"truncated"}},
      {"deep.pkl", {"nests containers more than 100 deep"}},
      {"huge_length.pkl", {"declares a string of 4611686018427387904 bytes at byte 2 but only 2 bytes remain"}},
      {"proto0.pkl", {"protocol 0's text form", "protocol=4"}},
  };
  for (const auto& [file, phrases] : cases) {
    SCOPED_TRACE(file);
    try {
      parse_meta_pkl(pickle_bytes(file), "meta.pkl");
      ADD_FAILURE() << "read";
    } catch (const Error& e) {
      for (const std::string& p : phrases) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  }
  // REDUCE itself (after a callable that is not a global): EMPTY_LIST, EMPTY_TUPLE, REDUCE.
  try {
    parse_meta_pkl(bytes("\x80\x04]\x94)R."), "meta.pkl");
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("meta.pkl uses pickle opcode REDUCE (calls a function) at byte 5: " + plain),
              std::string::npos)
        << e.what();
  }
}

TEST(MetaPkl, AHostileMetaPklStopsTheOpenNamingTheFile) {
  TempDir tmp;
  const fs::path dir = copy_vocab_case("nanogpt-char", tmp);
  fs::copy_file(vocab_dir("pickles") / "reduce.pkl", dir / "meta.pkl", fs::copy_options::overwrite_existing);
  expect_open_refused(dir, {(dir / "meta.pkl").string() + " uses pickle opcode STACK_GLOBAL (imports a name)"});
}

TEST(MetaPkl, ItosAsAListStoiAloneAndAWrongVocabSize) {
  // {'itos': ['a', 'b']} at protocol 2: PROTO 2, EMPTY_DICT, MARK, 'itos', EMPTY_LIST, MARK, 'a', 'b', APPENDS, SETITEMS, STOP.
  const std::string list = bytes("\x80\x02}(X\x04\x00\x00\x00itos](X\x01\x00\x00\x00" "aX\x01\x00\x00\x00" "beu.");
  EXPECT_EQ(parse_meta_pkl(list, "m"), (std::vector<std::string>{"a", "b"}));
  // {'stoi': {'b': 1, 'a': 0}, 'vocab_size': 3}: stoi inverted, then vocab_size contradicts it.
  const std::string stoi = bytes("\x80\x02}(X\x04\x00\x00\x00stoi}(X\x01\x00\x00\x00" "bK\x01X\x01\x00\x00\x00" "aK\x00uu.");
  EXPECT_EQ(parse_meta_pkl(stoi, "m"), (std::vector<std::string>{"a", "b"}));
  const std::string sized = stoi.substr(0, stoi.size() - 2) + bytes("X\x0a\x00\x00\x00vocab_sizeK\x03u.");
  try {
    parse_meta_pkl(sized, "m");
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m says vocab_size = 3 but its stoi has 2 tokens"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Lenient shapes: extra leading 1s only

namespace {

ModelConfig multi_query_config() {
  ModelConfig c;
  c.L = 1;
  c.H = 2;
  c.H_kv = 1;
  c.d_e = 8;
  c.d_attn = c.d_mid = 4;
  c.d_mlp = 16;
  c.l_max = 8;
  c.vocab = {"a", "b", "c"};
  return c;
}

// The checkpoint at `path` with one tensor's shape in the header replaced (same bytes).
void reshape_in_file(const fs::path& path, const std::string& tensor, const std::vector<int64_t>& shape) {
  SplitFile f = split(read_file(path.string(), size_t{1} << 24));
  f.header[tensor]["shape"] = shape;
  write_file_atomic(path.string(), join(f));
}

}  // namespace

TEST(LenientShapes, MultiQueryWkAsTheTableWritesItLoadsIdentically) {
  TempDir tmp;
  Model m(multi_query_config());
  init_params(m.config, m.table, 7, m.theta.data());
  const fs::path path = tmp.path() / "mq.safetensors";
  save_checkpoint(path.string(), m);
  // Stepformer writes the spec's form: a count of 1 has no count dimension.
  EXPECT_EQ(split(read_file(path.string(), size_t{1} << 24)).header["layer1.attn.W_k"]["shape"].dump(), "[4,8]");
  EXPECT_EQ(load_checkpoint(path.string()).model.theta, m.theta);  // write → read

  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1, 4, 8}, std::vector<int64_t>{1, 1, 4, 8}}) {
    reshape_in_file(path, "layer1.attn.W_k", shape);
    reshape_in_file(path, "layer1.attn.b_k", {1, 4});
    const Model back = load_checkpoint(path.string()).model;
    EXPECT_EQ(back.theta, m.theta) << shape_string(shape);
    const Tokens x{1, 2, 3};
    EXPECT_TRUE(architecture(back.config).forward(back, {}, x).isApprox(architecture(m.config).forward(m, {}, x), 0.0f));
  }
}

TEST(LenientShapes, OtherMismatchesKeepTheirMessage) {
  TempDir tmp;
  Model m(multi_query_config());
  init_params(m.config, m.table, 7, m.theta.data());
  const fs::path path = tmp.path() / "mq.safetensors";
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 2, 8}, std::vector<int64_t>{4, 8, 1}, std::vector<int64_t>{8, 4}, std::vector<int64_t>{2, 4, 4}}) {
    save_checkpoint(path.string(), m);
    reshape_in_file(path, "layer1.attn.W_k", shape);
    try {
      load_checkpoint(path.string());
      ADD_FAILURE() << shape_string(shape) << " loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("tensor \"layer1.attn.W_k\" has shape " + shape_string(shape) +
                                            " but the configuration needs [4, 8]; the tensors do not match __metadata__.config"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(LenientShapes, AnEcosystemTensorWithALeadingOneLoads) {
  TempDir tmp;
  const fs::path dir = copy_vocab_case("nanogpt-char", tmp);
  edit_tensors(dir, [](std::vector<EditTensor>& t) { tensor_named(t, "transformer.ln_f.weight").shape = json::array({1, 8}); });
  expect_reference_forward(open_model(dir.string()), expected("nanogpt-char"));
  edit_tensors(dir, [](std::vector<EditTensor>& t) { tensor_named(t, "transformer.ln_f.weight").shape = json::array({2, 4}); });
  expect_open_refused(dir, {"tensor \"transformer.ln_f.weight\" has shape [2, 4] but [8] is expected"});
}

}  // namespace test_vocab_models
