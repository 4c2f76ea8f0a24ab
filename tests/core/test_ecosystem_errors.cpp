// Every way an ecosystem checkpoint can be wrong gets one sf::Error naming the file at fault and the
// fix, and nothing else happens (open_model returns no model; the CLI's refusals are in
// test_ecosystem_cli.cpp). Each bad folder is a copy of a good case of tests/data/ecosystem with
// one thing changed.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <limits>

#include "test_ecosystem_support.hpp"

namespace test_ecosystem_errors {

using namespace sf;
using namespace sf::test;

namespace {

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

}  // namespace

TEST(EcosystemErrors, NoConfigJson) {
  TempDir tmp;
  const fs::path dir = copy_case("hf-gpt2", tmp);
  fs::remove(dir / "config.json");
  expect_open_refused(dir, {"no config.json beside the checkpoint in " + dir.string(), "Hugging Face page"});
}

TEST(EcosystemErrors, ConfigJsonContradictingTheTensors) {
  TempDir tmp;
  struct Lie {
    const char* the_case;
    const char* key;
    int value;
    std::string message;
  };
  const std::vector<Lie> lies{
      {"hf-gpt2", "n_embd", 32, "config.json says n_embd = 32 but wte.weight has 16 columns"},
      {"hf-gpt2", "n_layer", 3, "config.json says n_layer = 3 but the checkpoint has 2 layers (h.0 … h.1)"},
      {"hf-gpt2", "n_positions", 64, "config.json says n_positions = 64 but wpe.weight has 16 rows"},
      {"hf-gpt2", "vocab_size", 50257, "config.json says vocab_size = 50257 but wte.weight has 277 rows"},
      {"hf-gpt2-prefixed", "n_inner", 64, "tensor \"transformer.h.0.mlp.c_fc.weight\" has shape [16, 40] but [16, 64] is expected"},
      {"nanogpt", "n_embd", 8, "config.json says n_embd = 8 but transformer.wte.weight has 16 columns"},
      {"hf-bert", "hidden_size", 32, "config.json says hidden_size = 32 but bert.embeddings.word_embeddings.weight has 16 columns"},
      {"hf-bert", "num_hidden_layers", 1, "config.json says num_hidden_layers = 1 but the checkpoint has 2 layers"},
      {"hf-bert", "intermediate_size", 64, "tensor \"bert.encoder.layer.0.intermediate.dense.weight\" has shape [40, 16] but [64, 16] is expected"},
      {"hf-bert", "type_vocab_size", 3, "config.json says type_vocab_size = 3 but bert.embeddings.token_type_embeddings.weight has 2 rows"},
  };
  for (const Lie& lie : lies) {
    SCOPED_TRACE(std::string(lie.the_case) + " " + lie.key);
    const fs::path dir = copy_case(lie.the_case, tmp);
    edit_config(dir, [&](json& j) { j[lie.key] = lie.value; });
    expect_open_refused(dir, {lie.message});
    fs::remove_all(dir);
  }
}

TEST(EcosystemErrors, ConfigJsonItselfWrong) {
  TempDir tmp;
  const fs::path dir = copy_case("hf-gpt2", tmp);
  auto refused_with = [&](const std::function<void(json&)>& edit, const std::string& message) {
    fs::copy_file(ecosystem_dir("hf-gpt2") / "config.json", dir / "config.json", fs::copy_options::overwrite_existing);
    edit_config(dir, edit);
    expect_open_refused(dir, {(dir / "config.json").string() + ": ", message});
  };
  refused_with([](json& j) { j.erase("n_head"); }, "the key \"n_head\" is missing");
  refused_with([](json& j) { j["n_head"] = 3; }, "n_head = 3 does not divide n_embd = 16");
  refused_with([](json& j) { j["n_head"] = "four"; }, "\"n_head\" must be a positive integer");
  refused_with([](json& j) { j["activation_function"] = "swish"; }, "activation_function \"swish\" is not one Stepformer computes");
  refused_with([](json& j) { j["model_type"] = "bert"; }, "model_type is \"bert\" but the checkpoint is in GPT-2's layout");
  refused_with([](json& j) { j["scale_attn_by_inverse_layer_idx"] = true; }, "no per-layer scale");
  write_text(dir / "config.json", "{\"n_layer\": 2,");
  expect_open_refused(dir, {(dir / "config.json").string() + ": not valid JSON"});
}

TEST(EcosystemErrors, MissingTensorIsNamed) {
  TempDir tmp;
  const fs::path gpt = copy_case("hf-gpt2", tmp);
  edit_tensors(gpt, [](std::vector<EditTensor>& t) { remove_tensor(t, "h.1.mlp.c_fc.weight"); });
  expect_open_refused(gpt, {"model.safetensors: the tensor \"h.1.mlp.c_fc.weight\" [16, 64] is missing"});

  const fs::path bert = copy_case("hf-bert", tmp);
  edit_tensors(bert, [](std::vector<EditTensor>& t) { remove_tensor(t, "bert.encoder.layer.1.attention.self.value.bias"); });
  expect_open_refused(bert, {"the tensor \"bert.encoder.layer.1.attention.self.value.bias\" [16] is missing"});

  // nanoGPT with biases: a bias missing from one layer is missing, not "bias=False"
  const fs::path nano = copy_case("nanogpt", tmp);
  edit_tensors(nano, [](std::vector<EditTensor>& t) { remove_tensor(t, "transformer.h.1.ln_2.bias"); });
  expect_open_refused(nano, {"the tensor \"transformer.h.1.ln_2.bias\" [16] is missing"});
}

TEST(EcosystemErrors, WrongShapeIsNamedWithExpectedAndFound) {
  TempDir tmp;
  const fs::path dir = copy_case("hf-gpt2", tmp);
  edit_tensors(dir, [](std::vector<EditTensor>& t) {
    EditTensor& g = tensor_named(t, "h.0.ln_2.weight");
    g.shape = {15};
    g.bytes.resize(15 * 4);
  });
  expect_open_refused(dir, {"tensor \"h.0.ln_2.weight\" has shape [15] but [16] is expected", "n_embd = 16"});
}

TEST(EcosystemErrors, UnknownLayoutListsTensorsAndTheKnownLayouts) {
  TempDir tmp;
  const fs::path dir = copy_case("hf-gpt2", tmp);
  edit_tensors(dir, [](std::vector<EditTensor>& t) {
    for (EditTensor& x : t) x.name = "model.layers." + x.name;  // e.g. a Llama-style naming
  });
  expect_open_refused(dir, {"in no layout Stepformer knows", "model.layers.", "Hugging Face GPT-2", "nanoGPT/minGPT",
                            "Hugging Face BERT", "docs/ecosystem.md"});
}

TEST(EcosystemErrors, UnknownExtraTensorIsRefused) {
  TempDir tmp;
  const fs::path dir = copy_case("hf-gpt2", tmp);
  edit_tensors(dir, [](std::vector<EditTensor>& t) { t.push_back({"h.0.attn.rotary.inv_freq", "F32", {2}, std::string(8, '\0')}); });
  expect_open_refused(dir, {"the tensor \"h.0.attn.rotary.inv_freq\" [2] is not part of the Hugging Face GPT-2 layout"});
}

TEST(EcosystemErrors, VocabularyThatDoesNotFit) {
  TempDir tmp;
  // 277 tokens in vocab.json, but only 200 rows in wte
  const fs::path dir = copy_case("hf-gpt2", tmp);
  edit_tensors(dir, [](std::vector<EditTensor>& t) {
    EditTensor& wte = tensor_named(t, "wte.weight");
    wte.shape = {200, 16};
    wte.bytes.resize(200 * 16 * 4);
  });
  edit_config(dir, [](json& j) { j.erase("vocab_size"); });
  expect_open_refused(dir, {(dir / "vocab.json").string() + " has 277 entries, the checkpoint's wte.weight has 200 rows"});

  // BERT's vocab.txt with an extra line
  const fs::path bert = copy_case("hf-bert", tmp);
  std::ofstream(bert / "vocab.txt", std::ios::app) << "extra\n";
  expect_open_refused(bert, {"vocab.txt has 94 entries, the checkpoint's bert.embeddings.word_embeddings.weight has 93 rows"});
}

TEST(EcosystemErrors, MissingOrWrongTokenizerFiles) {
  TempDir tmp;
  // No tokenizer files at all: a GPT layout opens with plain ids (test_vocab_models.cpp); half a
  // pair is still refused, and so is BERT without its vocab.txt.
  const fs::path none = copy_case("hf-gpt2", tmp);
  fs::remove(none / "vocab.json");
  fs::remove(none / "merges.txt");
  EXPECT_EQ(open_model(none.string()).tokenizer->label(277), "#277");
  const fs::path half = copy_case("hf-gpt2", tmp);
  fs::remove(half / "merges.txt");
  expect_open_refused(half, {(half / "merges.txt").string() + " is missing: GPT-2's tokenizer needs vocab.json and merges.txt"});
  const fs::path bert = copy_case("hf-bert", tmp);
  fs::remove(bert / "vocab.txt");
  expect_open_refused(bert, {"wordpiece tokenizer needs vocab.txt", bert.string()});

  const fs::path wrong = copy_case("hf-bert", tmp);
  fs::remove(wrong / "vocab.txt");
  fs::copy_file(ecosystem_dir("hf-gpt2") / "vocab.json", wrong / "vocab.json");
  fs::copy_file(ecosystem_dir("hf-gpt2") / "merges.txt", wrong / "merges.txt");
  expect_open_refused(wrong, {"asks for the wordpiece tokenizer"});
}

TEST(EcosystemErrors, UnsupportedDtypeNonFiniteValuesAndTruncation) {
  TempDir tmp;
  const fs::path dtype = copy_case("hf-gpt2", tmp);
  edit_tensors(dtype, [](std::vector<EditTensor>& t) { tensor_named(t, "h.0.attn.c_proj.weight").dtype = "I32"; });
  expect_open_refused(dtype, {"tensor \"h.0.attn.c_proj.weight\" has dtype I32; Stepformer reads F32, F16, BF16 and F64"});

  const fs::path nan = copy_case("hf-gpt2", tmp);
  edit_tensors(nan, [](std::vector<EditTensor>& t) {
    const float v = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(tensor_named(t, "h.1.mlp.c_proj.weight").bytes.data() + 4 * 17, &v, 4);
  });
  expect_open_refused(nan, {"tensor \"h.1.mlp.c_proj.weight\" holds NaN at element 17 (index [1, 1])"});

  const fs::path cut = copy_case("hf-gpt2", tmp);
  const std::string bytes = read_file((cut / "model.safetensors").string(), size_t{1} << 30);
  write_file_atomic((cut / "model.safetensors").string(), bytes.substr(0, bytes.size() - 100));
  expect_open_refused(cut, {"model.safetensors: ", "is the file truncated?"});
}

// A hostile file never crashes the loader: the checkpoint cut at many lengths, and bytes of its
// header overwritten, each give an sf::Error (or, for a harmless change, a model).
TEST(EcosystemErrors, DamagedFilesGiveErrorsNeverCrashes) {
  TempDir tmp;
  const fs::path dir = copy_case("hf-gpt2", tmp);
  const std::string good = read_file((ecosystem_dir("hf-gpt2") / "model.safetensors").string(), size_t{1} << 30);
  int cuts = 0, refused = 0;
  for (size_t cut = 0; cut < good.size(); cut += good.size() / 37 + 1, ++cuts) {
    write_file_atomic((dir / "model.safetensors").string(), good.substr(0, cut));
    try {
      open_model(dir.string());
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_EQ(refused, cuts);  // every cut loses a tensor's bytes
  const uint64_t header = read_u64(good);
  for (uint64_t at = 8; at < 8 + header; at += 13) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x5A);
    write_file_atomic((dir / "model.safetensors").string(), bad);
    try {
      open_model(dir.string());
    } catch (const Error&) {
    }
  }
}

TEST(EcosystemErrors, PicklesAreRefusedWithTheConversionCommand) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "hf-model";
  fs::create_directories(dir);
  write_text(dir / "pytorch_model.bin", "PK\x03\x04 not really a zip");
  fs::copy_file(ecosystem_dir("hf-gpt2") / "config.json", dir / "config.json");
  for (const fs::path& p : {dir, dir / "pytorch_model.bin"})
    expect_open_refused(p, {(dir / "pytorch_model.bin").string() + " is a PyTorch pickle", "never reads pickles",
                            "Convert it to safetensors: python3 -c", "save_file("});
  // A pickle under a safetensors name is told by its first bytes.
  write_text(dir / "model.safetensors", std::string("\x80\x02}q\x00", 5) + std::string(40, 'x'));
  expect_open_refused(dir / "model.safetensors", {"is a PyTorch pickle"});
}

// Issue 21: README.md opened by mistake said "the header length 8027226966880100387 is over the
// safetensors limit…" (its first 8 bytes, "# Stepfo", read as a length). It says what it is not.
TEST(EcosystemErrors, AFileThatIsNotAModelIsNamedInPlainWords) {
  TempDir tmp;
  write_text(tmp.path() / "README.md", "# Stepformer\n\nA desktop debugger for the transformer.\n");
  expect_open_refused(tmp.path() / "README.md",
                      {"README.md is not a model: Stepformer opens .safetensors files or model folders"});
  write_text(tmp.path() / "notes.txt", "tiny");  // shorter than the 8-byte length field
  expect_open_refused(tmp.path() / "notes.txt", {"notes.txt is not a model"});
  // A damaged file named .safetensors keeps the reader's exact reason.
  write_text(tmp.path() / "broken.safetensors", "# not really");
  expect_open_refused(tmp.path() / "broken.safetensors", {"header length"});
  // A real checkpoint under another name is still opened.
  fs::copy_file(ecosystem_dir("hf-gpt2") / "model.safetensors", tmp.path() / "model.st");
  fs::copy_file(ecosystem_dir("hf-gpt2") / "config.json", tmp.path() / "config.json");
  for (const char* f : {"vocab.json", "merges.txt"})
    if (fs::exists(ecosystem_dir("hf-gpt2") / f)) fs::copy_file(ecosystem_dir("hf-gpt2") / f, tmp.path() / f);
  EXPECT_EQ(open_model((tmp.path() / "model.st").string()).checkpoint.model.config.L, 2);
}

TEST(EcosystemErrors, FoldersWithoutOneCheckpoint) {
  TempDir tmp;
  expect_open_refused(tmp.path() / "nowhere", {"does not exist"});
  expect_open_refused(tmp.path(), {"holds no .safetensors file"});
  const fs::path two = tmp.path() / "two";
  fs::create_directories(two);
  fs::copy_file(ecosystem_dir("hf-gpt2") / "model.safetensors", two / "model-00001-of-00002.safetensors");
  fs::copy_file(ecosystem_dir("hf-gpt2") / "model.safetensors", two / "model-00002-of-00002.safetensors");
  expect_open_refused(two, {"holds several .safetensors files (model-00001-of-00002.safetensors, model-00002-of-00002.safetensors)"});
  // The only .safetensors of a folder is opened whatever its name.
  const fs::path one = copy_case("hf-gpt2", tmp);
  fs::rename(one / "model.safetensors", one / "gpt2-tiny.safetensors");
  EXPECT_EQ(open_model(one.string()).checkpoint.model.config.L, 2);
}

TEST(EcosystemErrors, BertWithoutItsMaskedLmHead) {
  TempDir tmp;
  const fs::path dir = copy_case("hf-bert", tmp);
  edit_tensors(dir, [](std::vector<EditTensor>& t) {
    t.erase(std::remove_if(t.begin(), t.end(), [](const EditTensor& x) { return x.name.rfind("cls.", 0) == 0; }), t.end());
  });
  expect_open_refused(dir, {"no masked-LM head (cls.predictions.*)", "BertForMaskedLM"});
  edit_tensors(dir, [](std::vector<EditTensor>& t) {
    for (EditTensor& x : t) x.name = x.name.substr(std::string("bert.").size());  // BertModel's own names
  });
  expect_open_refused(dir, {"a BERT without its masked-LM head"});
}

}  // namespace test_ecosystem_errors
