// Checkpoints of the variants (docs/variants.md, docs/checkpoint-format.md): every variant of
// every architecture survives init → save → load (the same configuration JSON, tensor names,
// shapes and values); the file holds exactly the variant's tensors (no W_p unless learned, no
// W_u when tied, no β under RMSNorm, W_gate under SwiGLU, H_kv key/value heads, the final norms
// of pre-LN BERT and encoder-decoder, none for post-LN GPT); and a file of one variant labelled
// as another is refused with the missing and unknown tensors named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "core/io/fileio.hpp"
#include "safetensors_support.hpp"

namespace test_variants_checkpoint {

namespace fs = std::filesystem;
using namespace sf;
using namespace sf::test;

namespace {

// The sizes of every configuration here (distinct, so a mixed-up axis shows): H = 4 so that
// H_kv can be 1 or 2; N_V = 9.
const char* kSizes =
    R"("H": 4, "d_e": 8, "d_attn": 4, "d_mid": 3, "d_mlp": 6, "l_max": 7, "vocab": ["a","b","c","d","e","="])";

std::string arch_sizes(const std::string& arch) {
  if (arch == "gpt") return R"("L": 2)";
  if (arch == "bert") return R"("L": 2, "d_f": 5)";
  return R"("L_enc": 1, "L_dec": 2)";
}

// The configuration of `arch` with the variant keys `keys` (JSON members, may be empty).
ModelConfig config(const std::string& arch, const std::string& keys) {
  const std::string text = "{\"arch\": \"" + arch + "\", " + kSizes + ", " + arch_sizes(arch) +
                           (keys.empty() ? "" : ", " + keys) + "}";
  return config_from_json(text);
}

struct Variant {
  const char* arch;
  const char* keys;
};

// Each variant alone on each architecture, and the combinations of issue 10.
const std::vector<Variant> kVariants = [] {
  std::vector<Variant> v;
  for (const char* arch : {"gpt", "bert", "ed"})
    for (const char* keys :
         {"", R"("norm_position": "pre")", R"("norm_position": "post")", R"("norm": "rms_norm")",
          R"("position": "sinusoidal")", R"("position": "sinusoidal", "position_base": 10000)",
          R"("position": "rope", "rope_base": 500)", R"("position": "alibi")", R"("position": "none")",
          R"("activation": "gelu")", R"("activation": "gelu_tanh")", R"("activation": "relu")",
          R"("activation": "swiglu")", R"("H_kv": 1)", R"("H_kv": 2)"})
      v.push_back({arch, keys});
  v.push_back({"gpt", R"("tied_unembedding": true)"});
  v.push_back({"bert", R"("tied_unembedding": true, "d_f": 8)"});
  v.push_back({"ed", R"("tied_unembedding": true)"});
  v.push_back({"gpt", R"("mask": "prefix")"});
  v.push_back({"gpt", R"("mask": "prefix", "prefix_separator": "e")"});
  v.push_back({"gpt", R"("norm": "rms_norm", "position": "rope", "activation": "swiglu", "tied_unembedding": true,
                         "H_kv": 1)"});
  v.push_back({"gpt", R"("norm_position": "post", "position": "alibi", "activation": "gelu_tanh")"});
  v.push_back({"ed", R"("norm_position": "pre", "position": "rope", "norm": "rms_norm", "activation": "swiglu",
                        "H_kv": 2, "tied_unembedding": true)"});
  // Random-feature attention (Algorithm 4-R, issue 25): its ω is not a tensor (regenerated from rf_seed),
  // so the file holds the table's tensors only, and the three keys round-trip.
  for (const char* arch : {"gpt", "bert", "ed"})
    v.push_back({arch, R"("attention": "random_features", "rf_features": 16, "rf_seed": 3, "rf_orthogonal": true)"});
  return v;
}();

class VariantsCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("stepformer-variants-" + std::to_string(::getpid()) + "-" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The bytes of a freshly saved checkpoint of an initialised model of c.
  std::string saved(const ModelConfig& c, uint64_t seed = 5) {
    const std::string p = (dir_ / "m.safetensors").string();
    save_checkpoint(p, Model::initialised(c, seed));
    return read_file(p, size_t{1} << 30);
  }

  fs::path dir_;
};

// The tensors of a file (header order) with their shapes.
std::vector<std::pair<std::string, std::vector<int64_t>>> file_tensors(const std::string& bytes) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  const SplitFile f = split(bytes);  // named: items() of a temporary would dangle
  for (const auto& [name, entry] : f.header.items())
    if (name != "__metadata__") out.push_back({name, entry["shape"].get<std::vector<int64_t>>()});
  return out;
}

// The file's bytes with its configuration changed: `set` JSON members written over it.
std::string relabelled(const std::string& bytes, const std::string& set) {
  const SplitFile f = split(bytes);
  ordered_json metadata = f.header["__metadata__"];
  ordered_json c = ordered_json::parse(metadata["config"].get<std::string>());
  c.update(ordered_json::parse("{" + set + "}"));
  metadata["config"] = c.dump();
  return build(metadata, tensors_of(f));
}

TEST_F(VariantsCheckpoint, EveryVariantRoundTripsWithItsExactTensors) {
  for (const Variant& v : kVariants) {
    const ModelConfig c = config(v.arch, v.keys);
    SCOPED_TRACE(std::string(v.arch) + " {" + v.keys + "}: " + variant_summary(c));
    const Model model = Model::initialised(c, 11);
    const std::string p = (dir_ / "v.safetensors").string();
    save_checkpoint(p, model);
    const Checkpoint got = load_checkpoint(p);
    EXPECT_EQ(to_json(got.model.config), to_json(c));
    EXPECT_EQ(got.model.theta, model.theta);
    // The file holds the table's tensors, in table order, with the table's shapes, and no others.
    const auto stored = file_tensors(read_file(p, size_t{1} << 30));
    ASSERT_EQ(stored.size(), model.table.entries().size());
    for (size_t i = 0; i < stored.size(); ++i) {
      const ParamEntry& e = model.table.entries()[i];
      EXPECT_EQ(stored[i].first, e.name);
      EXPECT_EQ(stored[i].second, e.shape()) << e.name;
      EXPECT_EQ(got.model.table.entries()[i].name, e.name);
    }
  }
}

// The shape of tensor `name` in a file of c; empty when the file has no such tensor.
std::vector<int64_t> shape_in_file(const std::string& bytes, const std::string& name) {
  for (const auto& [n, shape] : file_tensors(bytes))
    if (n == name) return shape;
  return {};
}

using Shape = std::vector<int64_t>;

TEST_F(VariantsCheckpoint, PositionsOtherThanLearnedStoreNoWp) {
  for (const char* arch : {"gpt", "bert", "ed"}) {
    EXPECT_EQ(shape_in_file(saved(config(arch, "")), "W_p"), (Shape{8, 7})) << arch;
    for (const char* pos : {"sinusoidal", "rope", "alibi", "none"})
      EXPECT_EQ(shape_in_file(saved(config(arch, std::string("\"position\": \"") + pos + "\"")), "W_p"), Shape{})
          << arch << ", " << pos;
  }
}

TEST_F(VariantsCheckpoint, TiedUnembeddingStoresNoWu) {
  EXPECT_EQ(shape_in_file(saved(config("gpt", "")), "W_u"), (Shape{9, 8}));
  EXPECT_EQ(shape_in_file(saved(config("bert", "")), "W_u"), (Shape{9, 5}));  // N_V × d_f
  for (const Variant& v : {Variant{"gpt", R"("tied_unembedding": true)"},
                           Variant{"bert", R"("tied_unembedding": true, "d_f": 8)"},
                           Variant{"ed", R"("tied_unembedding": true)"}}) {
    const std::string bytes = saved(config(v.arch, v.keys));
    EXPECT_EQ(shape_in_file(bytes, "W_u"), Shape{}) << v.arch;
    EXPECT_EQ(shape_in_file(bytes, "W_e"), (Shape{8, 9})) << v.arch;
  }
}

TEST_F(VariantsCheckpoint, RmsNormStoresGammasAndNoBetas) {
  for (const char* arch : {"gpt", "bert", "ed"}) {
    int gammas = 0, betas = 0;
    for (const auto& [name, shape] : file_tensors(saved(config(arch, R"("norm": "rms_norm")")))) {
      gammas += name.find("gamma") != std::string::npos;
      betas += name.find("beta") != std::string::npos;
    }
    // GPT: 2 per layer + the final one; BERT: 2 per layer + line 11's; ED: 2 + 3 per decoder layer.
    EXPECT_EQ(gammas, std::string(arch) == "ed" ? 1 * 2 + 2 * 3 : 2 * 2 + 1) << arch;
    EXPECT_EQ(betas, 0) << arch;
  }
}

TEST_F(VariantsCheckpoint, SwigluAddsAGateToEveryMlp) {
  const std::string gpt = saved(config("gpt", R"("activation": "swiglu")"));
  for (const char* l : {"layer1.", "layer2."}) {
    EXPECT_EQ(shape_in_file(gpt, std::string(l) + "W_gate"), (Shape{6, 8})) << l;
    EXPECT_EQ(shape_in_file(gpt, std::string(l) + "b_gate"), (Shape{6})) << l;
  }
  EXPECT_EQ(shape_in_file(saved(config("gpt", "")), "layer1.W_gate"), Shape{});
  EXPECT_EQ(shape_in_file(saved(config("bert", R"("activation": "swiglu")")), "layer2.W_gate"), (Shape{6, 8}));
  const std::string ed = saved(config("ed", R"("activation": "swiglu")"));
  EXPECT_EQ(shape_in_file(ed, "enc.layer1.W_gate"), (Shape{6, 8}));
  EXPECT_EQ(shape_in_file(ed, "enc.layer1.b_gate"), (Shape{6}));
  EXPECT_EQ(shape_in_file(ed, "dec.layer2.W_gate2"), (Shape{6, 8}));  // beside W_mlp3, W_mlp4
  EXPECT_EQ(shape_in_file(ed, "dec.layer2.b_gate2"), (Shape{6}));
  EXPECT_EQ(shape_in_file(ed, "dec.layer2.W_gate"), Shape{});
}

// W_k, b_k, W_v, b_v have H_kv heads (a count of 1 is no dimension, as for H = 1); W_q, b_q and
// W_o keep H.
TEST_F(VariantsCheckpoint, KeyValueTensorsHaveHkvHeads) {
  for (const char* prefix : {"layer1.attn.", "layer2.attn."}) {
    const std::string p(prefix);
    const std::string two = saved(config("gpt", R"("H_kv": 2)")), one = saved(config("gpt", R"("H_kv": 1)"));
    EXPECT_EQ(shape_in_file(two, p + "W_q"), (Shape{4, 4, 8}));
    EXPECT_EQ(shape_in_file(two, p + "W_k"), (Shape{2, 4, 8}));
    EXPECT_EQ(shape_in_file(two, p + "b_k"), (Shape{2, 4}));
    EXPECT_EQ(shape_in_file(two, p + "W_v"), (Shape{2, 3, 8}));
    EXPECT_EQ(shape_in_file(two, p + "b_v"), (Shape{2, 3}));
    EXPECT_EQ(shape_in_file(two, p + "W_o"), (Shape{8, 12}));  // d_e × H·d_mid
    EXPECT_EQ(shape_in_file(one, p + "W_k"), (Shape{4, 8}));
    EXPECT_EQ(shape_in_file(one, p + "b_v"), (Shape{3}));
    EXPECT_EQ(shape_in_file(one, p + "b_q"), (Shape{4, 4}));
  }
  const std::string ed = saved(config("ed", R"("H_kv": 2)"));
  for (const char* p : {"enc.layer1.attn.W_k", "dec.layer2.self_attn.W_k", "dec.layer2.cross_attn.W_k"})
    EXPECT_EQ(shape_in_file(ed, p), (Shape{2, 4, 8})) << p;
}

TEST_F(VariantsCheckpoint, NormPositionDecidesTheFinalNorms) {
  const std::string gpt_pre = saved(config("gpt", "")), gpt_post = saved(config("gpt", R"("norm_position": "post")"));
  EXPECT_EQ(shape_in_file(gpt_pre, "gamma"), (Shape{8}));
  EXPECT_EQ(shape_in_file(gpt_pre, "beta"), (Shape{8}));
  EXPECT_EQ(shape_in_file(gpt_post, "gamma"), Shape{});  // GPT-1: no final layer norm
  EXPECT_EQ(shape_in_file(gpt_post, "beta"), Shape{});
  EXPECT_EQ(shape_in_file(gpt_post, "layer2.gamma2"), (Shape{8}));

  const std::string bert_pre = saved(config("bert", R"("norm_position": "pre")"));
  EXPECT_EQ(shape_in_file(bert_pre, "enc.gamma"), (Shape{8}));
  EXPECT_EQ(shape_in_file(bert_pre, "enc.beta"), (Shape{8}));
  EXPECT_EQ(shape_in_file(bert_pre, "gamma"), (Shape{5}));  // line 11's, on d_f
  EXPECT_EQ(shape_in_file(saved(config("bert", "")), "enc.gamma"), Shape{});

  const std::string ed_pre = saved(config("ed", R"("norm_position": "pre")")), ed_post = saved(config("ed", ""));
  for (const char* n : {"enc.gamma", "enc.beta", "dec.gamma", "dec.beta"}) {
    EXPECT_EQ(shape_in_file(ed_pre, n), (Shape{8})) << n;
    EXPECT_EQ(shape_in_file(ed_post, n), Shape{}) << n;
  }
}

// A file labelled as another variant: the tensors the label needs and lacks are named as
// missing, the ones it does not know as unknown, a tensor of another shape by its shapes.
TEST_F(VariantsCheckpoint, AFileOfOneVariantLoadedAsAnotherIsRefusedNamingTheTensors) {
  const std::string learned = saved(config("gpt", ""));
  expect_refused(relabelled(learned, R"("position": "rope")"), "unknown tensor \"W_p\"");
  expect_refused(relabelled(learned, R"("tied_unembedding": true)"), "unknown tensor \"W_u\"");
  expect_refused(relabelled(learned, R"("norm": "rms_norm")"), "unknown tensor \"beta\", \"layer1.beta1\"");
  expect_refused(relabelled(learned, R"("norm_position": "post")"), "unknown tensor \"beta\", \"gamma\"");
  expect_refused(relabelled(learned, R"("activation": "swiglu")"), "parameter tensors \"layer1.W_gate\" [6, 8]");

  const std::string modern = saved(config("gpt", R"("position": "rope", "tied_unembedding": true)"));
  const std::string as_paper = relabelled(modern, R"("position": "learned", "tied_unembedding": false)");
  expect_refused(as_paper, "parameter tensors \"W_p\" [8, 7], \"W_u\" [9, 8] are missing");
  expect_refused(as_paper, "arch \"gpt\"");

  const std::string rms = saved(config("bert", R"("norm": "rms_norm")"));
  expect_refused(relabelled(rms, R"("norm": "layer_norm")"), "\"layer1.beta1\" [8]");
  expect_refused(relabelled(saved(config("bert", "")), R"("norm_position": "pre")"),
                 "parameter tensors \"enc.gamma\" [8], \"enc.beta\" [8] are missing");
  expect_refused(relabelled(saved(config("ed", R"("activation": "swiglu")")), R"("activation": "relu")"),
                 "unknown tensor \"dec.layer1.W_gate2\"");
  expect_refused(relabelled(saved(config("ed", R"("norm_position": "pre")")), R"("norm_position": "post")"),
                 "unknown tensor \"dec.beta\", \"dec.gamma\", \"enc.beta\", \"enc.gamma\"");

  const std::string gqa = saved(config("gpt", R"("H_kv": 2)"));
  expect_refused(relabelled(gqa, R"("H_kv": 4)"),
                 "tensor \"layer1.attn.W_k\" has shape [2, 4, 8] but the configuration needs [4, 4, 8]");
  expect_refused(relabelled(gqa, R"("H_kv": 1)"),
                 "tensor \"layer1.attn.W_k\" has shape [2, 4, 8] but the configuration needs [4, 8]");
}

// A prefix-LM file keeps its mask and separator; a separator outside the vocabulary is refused.
TEST_F(VariantsCheckpoint, PrefixMaskAndSeparatorRoundTrip) {
  const ModelConfig c = config("gpt", R"("mask": "prefix", "prefix_separator": "e")");
  const std::string p = (dir_ / "prefix.safetensors").string();
  save_checkpoint(p, Model::initialised(c, 2));
  const ModelConfig got = load_checkpoint(p).model.config;
  EXPECT_EQ(got.mask, MaskKind::Prefix);
  EXPECT_EQ(got.prefix_separator, "e");
  expect_refused(relabelled(read_file(p, size_t{1} << 30), R"("prefix_separator": "z")"), "prefix_separator");
}

}  // namespace

}  // namespace test_variants_checkpoint
