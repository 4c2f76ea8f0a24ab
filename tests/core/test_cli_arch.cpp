// stepformer-cli for the paper's three architectures, end to end (the built program, path in
// STEPFORMER_CLI): tiny BERT (Algorithms 9, 12) and encoder-decoder (8, 11, 15) models made by
// `init --config`, then forward (P against the in-process forward, shape (N_V, ℓ_x)), the
// context z that an encoder-decoder needs, fill (the text and the JSON against fill_masks),
// sample --json (GPT: prompt + y = dinference; ED: x̂ = edinference, deterministic at τ = 0),
// train in the paper's mode with --masks (θ against an in-process Trainer given the same T̃;
// empty T̃ leaves θ as it was) and --pairs, --task for the encoder-decoder, and the one-line
// errors of each, which write nothing.
#include <gtest/gtest.h>

#ifdef STEPFORMER_CLI

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/fill_in.hpp"
#include "core/arch/architecture.hpp"
#include "core/io/checkpoint.hpp"
#include "core/io/npy.hpp"
#include "core/tokenizers/tokenizer.hpp"
#include "core/training/datasets.hpp"
#include "core/training/pair_tasks.hpp"
#include "core/training/training.hpp"
#include "test_cli_support.hpp"

namespace test_cli_arch {

using namespace sf;
namespace fs = std::filesystem;
using Result = sf::test::CliResult;
using json = nlohmann::json;

namespace {

// Small, with d_mid ≠ d_attn, d_f ≠ d_e and L_enc ≠ L_dec so that a swapped dimension shows;
// ℓ_max = 12 so that "too long" is easy to reach.
const char* kBertConfig =
    R"({"arch": "bert", "L": 2, "d_f": 12, "H": 2, "d_e": 16, "d_attn": 8, "d_mid": 4, "d_mlp": 32, "l_max": 12})";
const char* kEdConfig =
    R"({"arch": "ed", "L_enc": 1, "L_dec": 2, "H": 2, "d_e": 16, "d_attn": 8, "d_mid": 4, "d_mlp": 32, "l_max": 12})";
const char* kGptConfig = R"({"L": 1, "H": 2, "d_e": 16, "d_attn": 8, "d_mid": 4, "d_mlp": 32, "l_max": 12})";
constexpr uint64_t kSeed = 4;

class CliArch : public ::testing::Test {
 protected:
  static inline fs::path dir;
  static inline std::string bert, ed, gpt;  // checkpoints made by init
  static inline Result bert_init, ed_init;  // what init printed

  static void SetUpTestSuite() {
    dir = fs::temp_directory_path() / ("stepformer_cli_arch_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    bert = path("bert.safetensors");
    ed = path("ed.safetensors");
    gpt = path("gpt.safetensors");
    std::ofstream(dir / "bert.json") << kBertConfig;
    std::ofstream(dir / "ed.json") << kEdConfig;
    std::ofstream(dir / "gpt.json") << kGptConfig;
    const std::string seed = std::to_string(kSeed);
    bert_init = run({"init", "--config", path("bert.json"), "--seed", seed, "--out", bert});
    ed_init = run({"init", "--config", path("ed.json"), "--seed", seed, "--out", ed});
    ASSERT_EQ(bert_init.status, 0) << bert_init.err;
    ASSERT_EQ(ed_init.status, 0) << ed_init.err;
    ASSERT_EQ(run({"init", "--config", path("gpt.json"), "--seed", seed, "--out", gpt}).status, 0);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  static std::string path(const std::string& name) { return (dir / name).string(); }
  static Result run(const std::vector<std::string>& args) { return sf::test::run_cli(dir, args); }
  static Model load(const std::string& p) { return std::move(load_checkpoint(p).model); }

  // Runs a command that must fail with one line; returns that line.
  static std::string error_of(const std::vector<std::string>& args, int status) {
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    return sf::test::expect_one_line_error(run(args), status, shown);
  }

  static void write(const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; }

  static json parse_json(const Result& r) {
    EXPECT_EQ(r.out_lines().size(), 1u) << r.out;  // exactly one object
    return json::parse(r.out);
  }
};

TEST_F(CliArch, InitWritesBertAndEncoderDecoderModelsWithTheirOwnKeys) {
  const Model b = load(bert), e = load(ed);
  EXPECT_EQ(b.config.arch, "bert");
  EXPECT_EQ(b.config.L, 2);
  EXPECT_EQ(b.config.d_f, 12);
  EXPECT_EQ(e.config.arch, "ed");
  EXPECT_EQ(e.config.L_enc, 1);
  EXPECT_EQ(e.config.L_dec, 2);
  EXPECT_EQ(b.theta, Model::initialised(b.config, kSeed).theta);
  EXPECT_EQ(e.theta, Model::initialised(e.config, kSeed).theta);
  // The summary names each architecture's own keys, and not the others'.
  EXPECT_NE(bert_init.out.find("bert L=2 d_f=12 H=2"), std::string::npos) << bert_init.out;
  EXPECT_NE(ed_init.out.find("ed L_enc=1 L_dec=2 H=2"), std::string::npos) << ed_init.out;
  EXPECT_EQ(ed_init.out.find(" L=2"), std::string::npos) << ed_init.out;
}

TEST_F(CliArch, ForwardOnBertIsAlgorithm9WithPForEachPositionItself) {
  const Result r = run({"forward", "--model", bert, "--prompt", "h[MASK]llo", "--out", path("Pb.npy")});
  ASSERT_EQ(r.status, 0) << r.err;
  const Model m = load(bert);
  // BERT reads whole sequences: [bos_token, h, mask_token, l, l, o, eos_token].
  const Tokens x{m.config.bos_token(), 9, m.config.mask_token(), 13, 13, 16, m.config.eos_token()};
  const MatF P = read_npy(path("Pb.npy"));
  ASSERT_EQ(P.rows(), m.config.N_V());  // (N_V, ℓ_x)
  ASSERT_EQ(P.cols(), 7);
  const MatF expected = architecture(m.config).forward(m, {}, x);
  EXPECT_TRUE(P == expected) << "max |ΔP| = " << (P - expected).cwiseAbs().maxCoeff();
  EXPECT_NE(r.out.find("Algorithm 9, ETransformer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("for x[t] itself"), std::string::npos) << r.out;
  // Position 3 holds mask_token: marked, and nothing to compare with.
  EXPECT_NE(r.out.find(" *   3  <mask>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(to fill)"), std::string::npos) << r.out;
}

TEST_F(CliArch, ForwardOnTheEncoderDecoderReadsTheContext) {
  const Result r = run({"forward", "--model", ed, "--context", "dcab", "--prompt", "abc", "--out", path("Pe.npy"),
                        "--trace"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Model m = load(ed);
  const std::unique_ptr<Tokenizer> tok_owner = make_tokenizer(m.config);
  const Tokenizer& tok = *tok_owner;
  const Tokens z = tok.encode_sequence("dcab", true), x = tok.encode_sequence("abc", false);
  ASSERT_EQ(z.size(), 6u);  // [bos_token, d, c, a, b, eos_token], as the training pairs' z
  const MatF P = read_npy(path("Pe.npy"));
  ASSERT_EQ(P.rows(), m.config.N_V());  // (N_V, ℓ_x)
  ASSERT_EQ(P.cols(), 4);
  EXPECT_TRUE(P == architecture(m.config).forward(m, z, x));
  EXPECT_NE(r.out.find("Algorithm 8, EDTransformer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Alg 8 EDTransformer call"), std::string::npos);  // the trace
  EXPECT_NE(r.out.find("ℓ_z = 6"), std::string::npos) << r.out;

  // --context-tokens gives the same z.
  std::string ids;
  for (int v : z) ids.append(ids.empty() ? "" : ",").append(std::to_string(v));
  ASSERT_EQ(run({"forward", "--model", ed, "--context-tokens", ids, "--prompt", "abc", "--out", path("Pe2.npy")}).status,
            0);
  EXPECT_TRUE(read_npy(path("Pe2.npy")) == P);
}

TEST_F(CliArch, AMissingOrMisplacedContextIsOneLineAndWritesNothing) {
  const std::string out = path("never.npy");
  const std::string missing = error_of({"forward", "--model", ed, "--prompt", "abc", "--out", out}, 2);
  EXPECT_NE(missing.find("this encoder-decoder model needs a context z: give --context TEXT or --context-tokens IDS"),
            std::string::npos)
      << missing;
  error_of({"forward", "--model", bert, "--prompt", "abc", "--context", "x", "--out", out}, 2);  // BERT has no z
  error_of({"forward", "--model", gpt, "--prompt", "abc", "--context", "x", "--out", out}, 2);
  error_of({"forward", "--model", ed, "--prompt", "a", "--context", "abcdefghijk", "--out", out}, 1);  // 13 > ℓ_max
  error_of({"forward", "--model", ed, "--prompt", "a", "--context", "a", "--context-tokens", "1", "--out", out}, 2);
  // --attention gpu runs BERT too (tests/gpu/test_gpu_forward.cpp); --gpu-form alone is a usage mistake.
  const std::string gpu = error_of({"forward", "--model", bert, "--prompt", "ab", "--gpu-form", "fused"}, 2);
  EXPECT_NE(gpu.find("--gpu-form goes with --attention gpu"), std::string::npos) << gpu;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CliArch, AnUnknownBracketWordIsOneLineNamingIt) {
  for (const std::string& model : {gpt, bert}) {
    const std::string e = error_of({"forward", "--model", model, "--prompt", "ab[FOO]c"}, 1);
    EXPECT_NE(e.find("[FOO]"), std::string::npos) << e;
  }
  const std::string e = error_of({"forward", "--model", ed, "--prompt", "a", "--context", "[BAR]"}, 1);
  EXPECT_NE(e.find("[BAR]"), std::string::npos) << e;
}

TEST_F(CliArch, FillPrintsTheTopFiveOfEachMaskedPosition) {
  const Result r = run({"fill", "--model", bert, "--prompt", "[MASK]ab[MASK]"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Model m = load(bert);
  const std::unique_ptr<Tokenizer> tok_owner = make_tokenizer(m.config);
  const Tokenizer& tok = *tok_owner;
  const Tokens x = tok.encode_sequence("[MASK]ab[MASK]", true);
  const FillResult f = fill_masks(x, m, 0.0, 1, 5);
  ASSERT_EQ(f.positions.size(), 2u);
  for (const FillPosition& p : f.positions) {
    const std::string line = sf::test::line_after(r.out, "  t = " + std::to_string(p.t) + "  ");
    ASSERT_FALSE(line.empty()) << r.out;
    ASSERT_EQ(p.top.size(), 5u);
    for (const FillCandidate& c : p.top) {
      char prob[16];
      std::snprintf(prob, sizeof prob, "%.4f", c.p);
      std::string label = tok.label(c.id);  // ordinary characters are quoted, <eos> and the like not
      if (c.id <= m.config.N_V() - 3) label = std::string(1, '\'').append(label).append(1, '\'');
      EXPECT_NE(line.find(label + " " + prob), std::string::npos) << line << " lacks " << label << " " << prob;
    }
    EXPECT_EQ(p.chosen, p.top[0].id);  // τ = 0: the argmax
  }
  EXPECT_NE(r.out.find("filled: \"" + tok.decode_text(f.filled) + "\""), std::string::npos) << r.out;
}

TEST_F(CliArch, FillJsonHasEveryPosition) {
  const Result r = run({"fill", "--model", bert, "--prompt", "s[MASK]r[MASK]", "--tau", "0.7", "--seed", "9", "--top",
                        "3", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = parse_json(r);
  const Model m = load(bert);
  const std::unique_ptr<Tokenizer> tok_owner = make_tokenizer(m.config);
  const Tokenizer& tok = *tok_owner;
  const Tokens x = tok.encode_sequence("s[MASK]r[MASK]", true);
  const FillResult f = fill_masks(x, m, 0.7, 9, 3);
  EXPECT_EQ(j["filled_tokens"].get<Tokens>(), f.filled);
  EXPECT_EQ(j["text"], tok.decode_text(f.filled));
  ASSERT_EQ(j["positions"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const json& p = j["positions"][i];
    EXPECT_EQ(p["t"], f.positions[i].t);
    EXPECT_EQ(p["t"], i == 0 ? 3 : 5);  // 1-based, bos_token at 1
    EXPECT_EQ(p["chosen"], f.positions[i].chosen);
    EXPECT_EQ(p["chosen_text"], tok.label(f.positions[i].chosen));
    ASSERT_EQ(p["top"].size(), 3u);
    for (size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(p["top"][k]["id"], f.positions[i].top[k].id);
      EXPECT_EQ(p["top"][k]["token"], tok.label(f.positions[i].top[k].id));
      EXPECT_FLOAT_EQ(p["top"][k]["p"].get<float>(), f.positions[i].top[k].p);
    }
  }
  EXPECT_EQ(run({"fill", "--model", bert, "--prompt", "s[MASK]r[MASK]", "--tau", "0.7", "--seed", "9", "--top", "3",
                 "--json"})
                .out,
            r.out);  // the seed decides
}

TEST_F(CliArch, FillMistakesAreOneLine) {
  const std::string none = error_of({"fill", "--model", bert, "--prompt", "abc"}, 1);
  EXPECT_NE(none.find("the prompt has no [MASK] to fill"), std::string::npos) << none;
  const std::string not_bert = error_of({"fill", "--model", gpt, "--prompt", "a[MASK]"}, 2);
  EXPECT_NE(not_bert.find("does not fill in [MASK]"), std::string::npos) << not_bert;
  error_of({"fill", "--model", ed, "--prompt", "a[MASK]"}, 2);
  const std::string sample = error_of({"sample", "--model", bert, "--prompt", "ab"}, 2);
  EXPECT_NE(sample.find("stepformer-cli fill"), std::string::npos) << sample;  // points at fill
}

TEST_F(CliArch, SampleJsonForGptIsThePromptWithItsContinuation) {
  const Result r = run({"sample", "--model", gpt, "--prompt", "hi", "--tau", "0.9", "--gen", "6", "--seed", "2",
                        "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = parse_json(r);
  const Model m = load(gpt);
  const std::unique_ptr<Tokenizer> tok_owner = make_tokenizer(m.config);
  const Tokenizer& tok = *tok_owner;
  const Tokens x = tok.encode_sequence("hi", false);
  InferenceOptions opt;
  opt.tau = 0.9;
  opt.l_gen = 6;
  opt.seed = 2;
  const InferenceResult expected = dinference(x, m, opt);
  Tokens all = x;
  all.insert(all.end(), expected.y.begin(), expected.y.end());
  EXPECT_EQ(j["tokens"].get<Tokens>(), all);
  EXPECT_EQ(j["text"], tok.decode_text(all));
  EXPECT_EQ(j["stopped"], expected.stopped);
}

TEST_F(CliArch, SampleJsonForTheEncoderDecoderIsAlgorithm15sXHat) {
  const std::vector<std::string> args{"sample", "--model", ed, "--context", "dcab", "--tau", "0", "--json"};
  const Result a = run(args), b = run(args);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);  // τ = 0: deterministic
  const json j = parse_json(a);
  const Model m = load(ed);
  const std::unique_ptr<Tokenizer> tok_owner = make_tokenizer(m.config);
  const Tokenizer& tok = *tok_owner;
  EdInferenceOptions opt;
  opt.tau = 0;
  const EdInferenceResult expected = edinference(tok.encode_sequence("dcab", true), m, opt);
  const Tokens tokens = j["tokens"].get<Tokens>();
  ASSERT_FALSE(tokens.empty());
  EXPECT_EQ(tokens[0], m.config.bos_token());
  EXPECT_EQ(tokens, expected.x_hat);
  EXPECT_EQ(j["text"], tok.decode_text(expected.x_hat));
  EXPECT_EQ(j["stopped"], expected.stopped);
  // Reusing the encoding gives the same x̂; the text form says how it stopped.
  const Result reuse = run({"sample", "--model", ed, "--context", "dcab", "--tau", "0", "--json", "--reuse-encoding"});
  EXPECT_EQ(reuse.out, a.out);
  const Result text = run({"sample", "--model", ed, "--context", "dcab", "--tau", "0"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("Algorithm 15"), std::string::npos) << text.out;
  EXPECT_EQ(sf::test::line_after(text.out, "stopped: "), expected.stopped) << text.out;
  // Algorithm 15 takes no prompt; the encoder-decoder needs its context.
  error_of({"sample", "--model", ed, "--context", "ab", "--prompt", "a"}, 2);
  error_of({"sample", "--model", ed, "--tau", "0"}, 2);
  error_of({"sample", "--model", gpt, "--prompt", "a", "--reuse-encoding"}, 2);
}

// The in-process twin of `train --model IN --sequences FILE --sgd --lr η --epochs N` with T̃ given.
std::vector<float> trained_in_process(const std::string& in, const Dataset& data, double lr, int epochs,
                                      const std::vector<std::vector<int>>& masks) {
  TrainOptions opt;
  opt.mode = TrainMode::Paper;
  opt.lr = lr;
  opt.epochs = epochs;
  opt.given_masks = masks;
  Trainer t(load_checkpoint(in).model, data, opt);
  while (!t.finished()) EXPECT_TRUE(t.step().finite);
  return t.model().theta;
}

TEST_F(CliArch, BertPaperModeTrainsOnTheGivenMasks) {
  write("seqs.txt", "abc\nhello\n");  // ℓ = 5 and 7 with bos_token and eos_token
  write("masks.txt", "2 4\n3\n\n1 6 7\n");  // 2 epochs × 2 sequences
  const Result r = run({"train", "--model", bert, "--sequences", path("seqs.txt"), "--sgd", "--lr", "0.05", "--epochs",
                        "2", "--masks", path("masks.txt"), "--out", path("bert_out.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Algorithm 12, ETraining, as printed"), std::string::npos) << r.out;
  const Checkpoint out = load_checkpoint(path("bert_out.safetensors"));
  EXPECT_EQ(out.metadata.at("train.step"), "4");
  const std::vector<float> expected = trained_in_process(
      bert, sequences_dataset(path("seqs.txt"), 10), 0.05, 2, {{2, 4}, {3}, {}, {1, 6, 7}});
  EXPECT_EQ(out.model.theta, expected);
  EXPECT_NE(out.model.theta, load(bert).theta);  // it moved
  // Other masks, another θ: the file is what decides T̃.
  write("masks2.txt", "3\n2 4\n\n1 6 7\n");
  ASSERT_EQ(run({"train", "--model", bert, "--sequences", path("seqs.txt"), "--sgd", "--lr", "0.05", "--epochs", "2",
                 "--masks", path("masks2.txt"), "--out", path("bert_out2.safetensors")})
                .status,
            0);
  EXPECT_NE(load(path("bert_out2.safetensors")).theta, out.model.theta);
}

TEST_F(CliArch, EmptyMasksLeaveThetaAsItWas) {
  // T̃ = ∅ in every update: loss(θ) = 0 and ∇loss(θ) = 0, so θ̂ = θ.
  write("seqs.txt", "abc\nhello\n");
  write("empty_masks.txt", "\n\n");
  const Result r = run({"train", "--model", bert, "--sequences", path("seqs.txt"), "--sgd", "--lr", "0.05",
                        "--masks", path("empty_masks.txt"), "--out", path("bert_same.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  const Checkpoint out = load_checkpoint(path("bert_same.safetensors"));
  EXPECT_EQ(out.metadata.at("train.step"), "2");
  EXPECT_EQ(out.model.theta, load(bert).theta);
}

TEST_F(CliArch, MasksAreCheckedWholeBeforeTraining) {
  write("seqs.txt", "abc\nhello\n");
  const std::string out = path("masks_never.safetensors");
  auto train = [&](const std::string& masks, const std::vector<std::string>& more = {}) {
    write("bad_masks.txt", masks);
    std::vector<std::string> args{"train", "--model", bert, "--sequences", path("seqs.txt"), "--sgd", "--lr", "0.05",
                                  "--masks", path("bad_masks.txt"), "--out", out};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  std::string e = error_of(train("1\n2 8\n"), 1);  // sequence 2 is "hello": ℓ = 7
  EXPECT_NE(e.find("--masks line 2: position 8 is outside sequence 2 (ℓ = 7)"), std::string::npos) << e;
  e = error_of(train("1\n2\n6\n6\n", {"--epochs", "2"}), 1);  // update 3 is sequence 1 again, ℓ = 5
  EXPECT_NE(e.find("--masks line 3: position 6 is outside sequence 1 (ℓ = 5)"), std::string::npos) << e;
  e = error_of(train("0\n1\n"), 1);
  EXPECT_NE(e.find("--masks line 1: position 0 is outside sequence 1 (ℓ = 5)"), std::string::npos) << e;
  e = error_of(train("1\n"), 1);
  EXPECT_NE(e.find("--masks has 1 lines but the run makes 2 updates"), std::string::npos) << e;
  e = error_of(train("1\n2 x\n"), 1);
  EXPECT_NE(e.find("--masks line 2"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(out));
  // Masks are for BERT's paper mode.
  error_of(train("1\n2\n", {"--p-mask", "0.3"}), 2);
  write("m.txt", "1\n2\n");
  error_of({"train", "--model", gpt, "--sequences", path("seqs.txt"), "--sgd", "--masks", path("m.txt"), "--out", out},
           2);
  error_of({"train", "--model", bert, "--sequences", path("seqs.txt"), "--masks", path("m.txt"), "--out", out}, 2);
  error_of({"train", "--model", gpt, "--sequences", path("seqs.txt"), "--p-mask", "0.2", "--out", out}, 2);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CliArch, EncoderDecoderPaperModeTrainsOnPairs) {
  write("pairs.tsv", "cab\tabc\nba\tab\n");
  const Result r = run({"train", "--model", ed, "--pairs", path("pairs.tsv"), "--sgd", "--lr", "0.05", "--epochs", "1",
                        "--out", path("ed_out.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Algorithm 11, EDTraining, as printed"), std::string::npos) << r.out;
  const Checkpoint out = load_checkpoint(path("ed_out.safetensors"));
  EXPECT_EQ(out.metadata.at("train.step"), "2");
  EXPECT_EQ(out.model.theta, trained_in_process(ed, pairs_dataset(path("pairs.tsv"), 10), 0.05, 1, {}));
  EXPECT_NE(out.model.theta, load(ed).theta);
}

TEST_F(CliArch, PairsMistakesAreOneLineAndWriteNothing) {
  const std::string out = path("pairs_never.safetensors");
  write("notab.tsv", "cab\tabc\nno tab here\n");
  const std::string e =
      error_of({"train", "--model", ed, "--pairs", path("notab.tsv"), "--sgd", "--lr", "0.05", "--out", out}, 1);
  EXPECT_NE(e.find("2"), std::string::npos) << e;  // names the line
  write("pairs.tsv", "cab\tabc\n");
  error_of({"train", "--model", bert, "--pairs", path("pairs.tsv"), "--sgd", "--out", out}, 2);   // BERT has no z
  error_of({"train", "--model", ed, "--sequences", path("pairs.tsv"), "--sgd", "--out", out}, 2);  // ED needs pairs
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CliArch, EncoderDecoderTrainsOnAPairTask) {
  ASSERT_FALSE(pair_task_names().empty());
  const std::string task = pair_task_names().front();
  const Result r = run({"train", "--model", ed, "--task", task, "--steps", "3", "--batch", "4", "--train-size", "20",
                        "--val-size", "4", "--out", path("ed_task.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("trained 3 steps"), std::string::npos) << r.out;
  const Checkpoint c = load_checkpoint(path("ed_task.safetensors"));
  EXPECT_EQ(c.metadata.at("train.step"), "3");
  EXPECT_EQ(c.model.config.arch, "ed");
  EXPECT_NE(c.model.theta, load(ed).theta);
}

TEST_F(CliArch, HelpCoversTheThreeArchitectures) {
  const Result top = run({"--help"});
  EXPECT_NE(top.out.find("fill"), std::string::npos);
  const std::vector<std::pair<std::string, std::vector<std::string>>> expected{
      {"fill", {"--model", "--prompt", "--tokens", "--tau", "--seed", "--top", "--trace", "--json", "[MASK]"}},
      {"forward", {"--context", "--context-tokens", "Algorithm 9", "Algorithm 8"}},
      {"sample", {"--context", "--reuse-encoding", "--json", "Algorithm 15"}},
      {"train", {"--pairs", "--masks", "--p-mask", "--bert-80-10-10", "BERT's rule, not the paper's", "Algorithm 11"}},
      {"init", {"\"bert\"", "d_f", "L_enc", "L_dec"}},
  };
  for (const auto& [cmd, words] : expected) {
    const Result r = run({"help", cmd});
    ASSERT_EQ(r.status, 0) << cmd;
    for (const auto& w : words) EXPECT_NE(r.out.find(w), std::string::npos) << cmd << ": " << w;
  }
}

}  // namespace

#else

TEST(CliArch, NotBuilt) { GTEST_SKIP() << "stepformer-cli is not part of this build"; }

#endif

}  // namespace test_cli_arch
