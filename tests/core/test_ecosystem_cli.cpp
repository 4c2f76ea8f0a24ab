// stepformer-cli with checkpoints from the ecosystem: `info` shows the layout and every tensor's
// provenance; forward, sample and fill open a folder (config.json and tokenizer files beside the
// checkpoint) and number tokens with 1-based paper ids (file id + 1); a bad folder is one error
// line, exit status 1, and nothing written.
#include <gtest/gtest.h>

#include "core/arch/architecture.hpp"
#include "core/io/npy.hpp"
#include "test_cli_support.hpp"
#include "test_ecosystem_support.hpp"

namespace test_ecosystem_cli {

#ifdef STEPFORMER_CLI

using namespace sf;
using namespace sf::test;

TEST(EcosystemCli, InfoShowsLayoutFilesAndEveryTensorsSource) {
  TempDir tmp;
  const fs::path dir = ecosystem_dir("hf-gpt2");
  const CliResult r = run_cli(tmp.path(), {"info", "--model", dir.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("layout: hf-gpt2, Hugging Face GPT-2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find((dir / "config.json").string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layer1.attn.W_q  W_q^h ∈ 4 heads × ℝ^{4×16}  W_q for heads 1–4 ← h.0.attn.c_attn.weight[:, 0:16]ᵀ, 4 columns per head"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(W_u)  W_u = W_eᵀ (tied to wte.weight)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("paper id = the files' 0-based id + 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bos_token = 277 ("), std::string::npos) << r.out;

  const CliResult j = run_cli(tmp.path(), {"info", "--model", dir.string(), "--json"});
  ASSERT_EQ(j.status, 0) << j.err;
  const json doc = json::parse(j.out);
  EXPECT_EQ(doc.at("layout"), "hf-gpt2");
  EXPECT_EQ(doc.at("config").at("tokenizer"), "gpt2");
  const Model m = open_model(dir.string()).checkpoint.model;
  ASSERT_EQ(doc.at("tensors").size(), m.table.entries().size());
  for (const json& t : doc.at("tensors")) EXPECT_NE(t.at("source").get<std::string>(), "") << t.dump();
  EXPECT_EQ(doc.at("parameters").get<size_t>(), m.theta.size());
}

TEST(EcosystemCli, InfoOnAStepformerCheckpoint) {
  TempDir tmp;
  const std::string model = (tmp.path() / "m.safetensors").string();
  ASSERT_EQ(run_cli(tmp.path(), {"init", "--seed", "1", "--out", model}).status, 0);
  const CliResult r = run_cli(tmp.path(), {"info", "--model", model});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("layout: stepformer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("W_e  W_e ∈ ℝ^{64×64}  stored under this name in the checkpoint"), std::string::npos) << r.out;
}

// --tokens are paper ids; the P written is the reference's (the expected.json of the case).
TEST(EcosystemCli, ForwardOnAFolderWritesTheReferenceP) {
  TempDir tmp;
  const EcosystemCase k{"hf-gpt2", load_test_json("ecosystem/hf-gpt2/expected.json")};
  const json& seq = k.doc.at("sequences").at(0);
  const Tokens x = seq.at("x").get<Tokens>();
  const std::string npy = (tmp.path() / "P.npy").string();
  std::string ids;
  for (int id : x) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  const CliResult r = run_cli(tmp.path(), {"forward", "--model", ecosystem_dir("hf-gpt2").string(), "--tokens", ids, "--out", npy});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("file id = id − 1"), std::string::npos) << r.out;
  const MatF P = read_npy(npy);
  ASSERT_EQ(P.rows(), 277);
  ASSERT_EQ(P.cols(), static_cast<Eigen::Index>(x.size()));
  const std::vector<int> rows = seq.at("rows").get<std::vector<int>>();
  // P is core's float forward written as float: the bound of EcosystemReference's float test.
  const double tolerance = log_p_float_tolerance(k);
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t t = 0; t < x.size(); ++t)
      EXPECT_NEAR(std::log(P(rows[i] - 1, static_cast<Eigen::Index>(t))), seq.at("log_p")[i][t].get<double>(), tolerance)
          << "row " << rows[i] << " t " << t;
}

TEST(EcosystemCli, PromptsUseTheFolderTokenizer) {
  TempDir tmp;
  const CliResult fwd = run_cli(tmp.path(), {"forward", "--model", ecosystem_dir("hf-gpt2").string(), "--prompt", "the cat"});
  ASSERT_EQ(fwd.status, 0) << fwd.err;
  EXPECT_NE(fwd.out.find("<|endoftext|>"), std::string::npos) << fwd.out;  // bos_token: GPT-2's own
  const CliResult gen = run_cli(tmp.path(), {"sample", "--model", ecosystem_dir("nanogpt").string(), "--prompt", "the", "--tau",
                                             "0", "--gen", "3", "--json"});
  ASSERT_EQ(gen.status, 0) << gen.err;
  const size_t prompt = open_model(ecosystem_dir("nanogpt").string()).tokenizer->encode_sequence("the", false).size();
  EXPECT_EQ(json::parse(gen.out).at("tokens").size(), prompt + 3) << gen.out;  // [<|endoftext|>, "the"…], 3 drawn
}

TEST(EcosystemCli, BadFolderIsOneErrorLineAndWritesNothing) {
  TempDir tmp;
  const fs::path dir = copy_case("hf-gpt2", tmp);
  fs::remove(dir / "config.json");
  const fs::path npy = tmp.path() / "P.npy";
  const CliResult r = run_cli(tmp.path(), {"forward", "--model", dir.string(), "--tokens", "277,1", "--out", npy.string()});
  const std::string line = expect_one_line_error(r, 1, "forward without config.json");
  EXPECT_NE(line.find("no config.json beside the checkpoint"), std::string::npos) << line;
  EXPECT_FALSE(fs::exists(npy));

  const fs::path bin = tmp.path() / "pytorch_model.bin";
  std::ofstream(bin) << "PK";
  const std::string pickle = expect_one_line_error(run_cli(tmp.path(), {"info", "--model", bin.string()}), 1, "info on a pickle");
  EXPECT_NE(pickle.find("Convert it to safetensors"), std::string::npos) << pickle;
}

#else
TEST(EcosystemCli, NotBuilt) { GTEST_SKIP() << "stepformer-cli is not part of this build"; }
#endif

}  // namespace test_ecosystem_cli
