#include "core/model/config.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/arch/architecture.hpp"
#include "core/model/error.hpp"
#include "core/tokenizers/utf8.hpp"

namespace sf {

std::vector<std::string> ModelConfig::default_vocab() {
  std::vector<std::string> v{" "};
  for (char c = 'a'; c <= 'z'; ++c) v.emplace_back(1, c);
  for (char c = '0'; c <= '9'; ++c) v.emplace_back(1, c);
  for (char c : std::string(".,;:!?'\"-+=*/<>()[]{}#&%")) v.emplace_back(1, c);
  return v;
}

const char* to_string(NormPosition v) { return v == NormPosition::Pre ? "pre" : "post"; }
const char* to_string(Norm v) { return v == Norm::LayerNorm ? "layer_norm" : "rms_norm"; }
const char* to_string(Position v) {
  switch (v) {
    case Position::Learned: return "learned";
    case Position::Sinusoidal: return "sinusoidal";
    case Position::Rope: return "rope";
    case Position::Alibi: return "alibi";
    case Position::None: return "none";
    case Position::Relative: return "relative";
  }
  return "learned";
}
const char* to_string(Activation v) {
  switch (v) {
    case Activation::GELU: return "gelu";
    case Activation::GELUTanh: return "gelu_tanh";
    case Activation::ReLU: return "relu";
    case Activation::SwiGLU: return "swiglu";
  }
  return "gelu";
}
const char* to_string(MaskKind v) { return v == MaskKind::Causal ? "causal" : "prefix"; }
const char* to_string(AttentionKind v) {
  return v == AttentionKind::Exact ? "exact" : v == AttentionKind::Flash ? "flash" : "random_features";
}
const char* to_string(TokenizerKind v) {
  switch (v) {
    case TokenizerKind::Char: return "char";
    case TokenizerKind::Word: return "word";
    case TokenizerKind::Bpe: return "bpe";
    case TokenizerKind::Gpt2: return "gpt2";
    case TokenizerKind::WordPiece: return "wordpiece";
  }
  return "char";
}

NormPosition ModelConfig::norm_pos() const {
  if (norm_position) return *norm_position;
  const Architecture* a = find_architecture(arch);
  return a ? a->paper_norm_position() : NormPosition::Pre;
}

Activation ModelConfig::act() const {
  if (activation) return *activation;
  const Architecture* a = find_architecture(arch);
  return a ? a->paper_activation() : Activation::GELU;
}

std::string variant_summary(const ModelConfig& c) {
  std::vector<std::string> parts;
  const Architecture* a = find_architecture(c.arch);
  if (a && c.norm_pos() != a->paper_norm_position()) parts.push_back(c.norm_pos() == NormPosition::Pre ? "pre-LN" : "post-LN");
  if (c.norm == Norm::RmsNorm) parts.push_back("RMSNorm");
  switch (c.position) {
    case Position::Learned: break;
    case Position::Sinusoidal:
      parts.push_back(c.position_base > 0 ? "sinusoidal positions (base " + std::to_string(static_cast<long long>(c.position_base)) + ")"
                                          : "sinusoidal positions (base ℓ_max)");
      break;
    case Position::Rope: parts.push_back("RoPE"); break;
    case Position::Alibi: parts.push_back("ALiBi"); break;
    case Position::None: parts.push_back("no positions"); break;
    case Position::Relative: parts.push_back("relative bias"); break;
  }
  if (a && c.act() != a->paper_activation()) parts.push_back(to_string(c.act()));
  if (c.tied_unembedding) parts.push_back("tied W_u = W_eᵀ");
  if (c.kv_heads() != c.H) parts.push_back(c.kv_heads() == 1 ? "multi-query (H_kv = 1)" : "grouped-query (H_kv = " + std::to_string(c.kv_heads()) + ")");
  if (c.mask == MaskKind::Prefix) parts.push_back("prefix-LM mask at \"" + c.prefix_separator + "\"");
  if (c.attention == AttentionKind::Flash)
    parts.push_back("FlashAttention (B_r = " + std::to_string(c.block_r) + ", B_c = " + std::to_string(c.block_c) + ")");
  if (c.attention == AttentionKind::RandomFeatures)
    parts.push_back(std::string("random-feature attention (D = ") + std::to_string(c.rf_features) + ", seed " +
                    std::to_string(c.rf_seed) + (c.rf_orthogonal ? ", orthogonal)" : ")"));
  if (c.window > 0) parts.push_back("window " + std::to_string(c.window));
  if (c.embedding_norm) parts.push_back("embedding layer norm");
  if (c.token_types > 0) parts.push_back("token-type embedding (segment 1)");
  if (c.unembedding_bias) parts.push_back("bias b_u on W_u");
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

namespace {

// The shared integer hyperparameters, in JSON order; an architecture adds its own keys.
const std::vector<std::string> kSharedKeys{"H", "d_e", "d_attn", "d_mid", "d_mlp", "l_max"};

// The integer keys of c's architecture then the shared ones, in JSON order.
std::vector<std::string> int_keys(const Architecture& a) {
  std::vector<std::string> keys = a.config_keys();
  keys.insert(keys.end(), kSharedKeys.begin(), kSharedKeys.end());
  return keys;
}

// One of `names` (the enum's values in order) for the string key k, or throws naming them.
template <class E>
void get_choice(const nlohmann::json& j, const char* k, std::initializer_list<const char*> names, E& dst) {
  if (!j.contains(k)) return;
  std::string list;
  for (const char* n : names) list += std::string(list.empty() ? "" : ", ") + "\"" + n + "\"";
  if (!j[k].is_string()) throw Error(std::string("config: \"") + k + "\" must be one of " + list);
  const std::string v = j[k].get<std::string>();
  int i = 0;
  for (const char* n : names) {
    if (v == n) {
      dst = static_cast<E>(i);
      return;
    }
    ++i;
  }
  throw Error(std::string("config: \"") + k + "\" must be one of " + list + ", not \"" + v + "\"");
}

// "window" (sliding-window attention) and T5's "relative_buckets", "relative_max_distance"
// (issue 25); validate() checks how they fit together.
void read_window_and_relative(const nlohmann::json& j, ModelConfig& c) {
  auto get_count = [&](const char* k, int& dst, const char* what) {
    if (!j.contains(k)) return;
    if (!j[k].is_number_integer() || j[k].get<long long>() < 0 || j[k].get<long long>() > 65536)
      throw Error(std::string("config: \"") + k + "\" (" + what + ") must be an integer from 0 to 65536");
    dst = static_cast<int>(j[k].get<long long>());
  };
  get_count("window", c.window, "the sliding window w: keys t_x − w ≤ t_z ≤ t_x; 0 is off");
  get_count("relative_buckets", c.relative_buckets, "T5's number of relative-distance buckets, such as 32");
  get_count("relative_max_distance", c.relative_max_distance, "T5's largest distinguished distance, such as 128");
}

void read_variants(const nlohmann::json& j, ModelConfig& c) {
  if (j.contains("norm_position")) {
    NormPosition v{};
    get_choice(j, "norm_position", {"pre", "post"}, v);
    c.norm_position = v;
  }
  get_choice(j, "norm", {"layer_norm", "rms_norm"}, c.norm);
  get_choice(j, "position", {"learned", "sinusoidal", "rope", "alibi", "none", "relative"}, c.position);
  if (j.contains("position_base")) {
    const auto& b = j["position_base"];
    if (b.is_string() && b.get<std::string>() == "l_max") c.position_base = 0;
    else if (b.is_number()) c.position_base = b.get<double>();
    else throw Error("config: \"position_base\" must be \"l_max\" (the paper) or a number such as 10000 (Vaswani et al.)");
  }
  if (j.contains("rope_base")) {
    if (!j["rope_base"].is_number()) throw Error("config: \"rope_base\" must be a number such as 10000");
    c.rope_base = j["rope_base"].get<double>();
  }
  if (j.contains("activation")) {
    Activation v{};
    get_choice(j, "activation", {"gelu", "gelu_tanh", "relu", "swiglu"}, v);
    c.activation = v;
  }
  if (j.contains("tied_unembedding")) {
    if (!j["tied_unembedding"].is_boolean()) throw Error("config: \"tied_unembedding\" must be true or false");
    c.tied_unembedding = j["tied_unembedding"].get<bool>();
  }
  if (j.contains("H_kv")) {
    if (!j["H_kv"].is_number_integer()) throw Error("config: \"H_kv\" must be an integer dividing H");
    const long long v = j["H_kv"].get<long long>();
    if (v < 0 || v > 65536) throw Error("config: \"H_kv\" is out of range");
    c.H_kv = static_cast<int>(v);
  }
  get_choice(j, "mask", {"causal", "prefix"}, c.mask);
  get_choice(j, "attention", {"exact", "flash", "random_features"}, c.attention);
  for (auto [k, dst] : {std::pair{"block_r", &c.block_r}, {"block_c", &c.block_c}}) {
    if (!j.contains(k)) continue;
    if (!j[k].is_number_integer() || j[k].get<long long>() < 1 || j[k].get<long long>() > 65536)
      throw Error(std::string("config: \"") + k + "\" (FlashAttention's " + (k[6] == 'r' ? "query" : "key") +
                  " block size) must be an integer from 1 to 65536, such as 16");
    *dst = static_cast<int>(j[k].get<long long>());
  }
  read_window_and_relative(j, c);
  get_choice(j, "tokenizer", {"char", "word", "bpe", "gpt2", "wordpiece"}, c.tokenizer);
  auto get_bool = [&](const char* k, bool& dst) {
    if (!j.contains(k)) return;
    if (!j[k].is_boolean()) throw Error(std::string("config: \"") + k + "\" must be true or false");
    dst = j[k].get<bool>();
  };
  get_bool("embedding_norm", c.embedding_norm);
  get_bool("unembedding_bias", c.unembedding_bias);
  auto get_small = [&](const char* k, int& dst, long long lo, long long hi) {
    if (!j.contains(k)) return;
    if (!j[k].is_number_integer() || j[k].get<long long>() < lo || j[k].get<long long>() > hi)
      throw Error(std::string("config: \"") + k + "\" must be an integer between " + std::to_string(lo) + " and " +
                  std::to_string(hi));
    dst = static_cast<int>(j[k].get<long long>());
  };
  get_small("token_types", c.token_types, 0, 1024);
  get_small("vocab_size", c.vocab_size, 0, 10000000);
  get_small("bos_id", c.bos_id, -1, 10000000);
  get_small("eos_id", c.eos_id, -1, 10000000);
  get_small("mask_id", c.mask_id, -1, 10000000);
  get_small("pad_id", c.pad_id, 0, 10000000);
  get_small("rf_features", c.rf_features, 1, 65536);  // Algorithm 4-R's D
  get_small("rf_seed", c.rf_seed, 0, 2147483647);
  get_bool("rf_orthogonal", c.rf_orthogonal);
  if (j.contains("merges")) {
    if (!j["merges"].is_array()) throw Error("config: \"merges\" must be an array of \"left right\" strings");
    for (const auto& m : j["merges"]) {
      if (!m.is_string()) throw Error("config: \"merges\" entries must be strings such as \"t h\"");
      c.merges.push_back(m.get<std::string>());
    }
  }
  if (j.contains("prefix_separator")) {
    if (!j["prefix_separator"].is_string()) throw Error("config: \"prefix_separator\" must be a one-character string");
    c.prefix_separator = j["prefix_separator"].get<std::string>();
  }
}

}  // namespace

int* config_int(ModelConfig& c, const std::string& key) {
  return const_cast<int*>(config_int(static_cast<const ModelConfig&>(c), key));
}

const int* config_int(const ModelConfig& c, const std::string& key) {
  if (key == "L") return &c.L;
  if (key == "L_enc") return &c.L_enc;
  if (key == "L_dec") return &c.L_dec;
  if (key == "d_f") return &c.d_f;
  if (key == "H") return &c.H;
  if (key == "d_e") return &c.d_e;
  if (key == "d_attn") return &c.d_attn;
  if (key == "d_mid") return &c.d_mid;
  if (key == "d_mlp") return &c.d_mlp;
  if (key == "l_max") return &c.l_max;
  if (key == "patch") return &c.patch;
  return nullptr;
}

std::string validate(const ModelConfig& c) {
  std::ostringstream e;
  auto positive = [&](const char* name, int v, int hi) {
    if (v < 1 || v > hi) e << name << " must be between 1 and " << hi << " (it is " << v << "); ";
  };
  const Architecture* arch = find_architecture(c.arch);
  if (!arch) {
    e << "arch must be one of";
    for (const Architecture* a : all_architectures()) e << " \"" << a->name() << "\"";
    e << " (it is \"" << c.arch << "\"); ";
  } else {
    for (const std::string& key : arch->config_keys()) {
      const bool layers = key.rfind("L", 0) == 0;
      positive(key.c_str(), *config_int(c, key), layers ? 64 : 65536);
    }
    const std::string why = arch->validate(c);
    if (!why.empty()) e << why << "; ";
  }
  positive("H", c.H, 64);
  positive("d_e", c.d_e, 8192);
  positive("d_attn", c.d_attn, 8192);
  positive("d_mid", c.d_mid, 8192);
  positive("d_mlp", c.d_mlp, 65536);
  positive("l_max", c.l_max, 65536);
  if (!(c.eps >= 0.0f) || !std::isfinite(c.eps)) e << "eps must be a finite number ≥ 0; ";
  if (c.H_kv < 0 || c.H_kv > c.H || (c.H_kv > 0 && c.H % c.H_kv != 0))
    e << "H_kv (key/value heads) must divide H = " << c.H << " (it is " << c.H_kv
      << "): 1 is multi-query attention, H is ordinary multi-head attention; ";
  if (c.position == Position::Rope && c.d_attn % 2 != 0)
    e << "position \"rope\" rotates pairs of coordinates of Q and K, so d_attn must be even (it is " << c.d_attn << "); ";
  if (c.position == Position::Sinusoidal && c.d_e % 2 != 0)
    e << "position \"sinusoidal\" fills sin/cos pairs, so d_e must be even (it is " << c.d_e << "); ";
  if (c.position_base != 0 && !(c.position_base > 1 && std::isfinite(c.position_base)))
    e << "position_base must be \"l_max\" or a number > 1 such as 10000; ";
  if (!(c.rope_base > 1 && std::isfinite(c.rope_base))) e << "rope_base must be a number > 1 such as 10000; ";
  if (c.block_r < 1 || c.block_c < 1)
    e << "FlashAttention's block sizes block_r and block_c must be at least 1 (they are " << c.block_r << " and "
      << c.block_c << "); ";
  if (c.attention == AttentionKind::RandomFeatures && c.position == Position::Alibi)
    e << "attention \"random_features\" never forms the scores S, so ALiBi's bias cannot be added: use position "
         "\"learned\", \"sinusoidal\" or \"rope\", or attention \"exact\"; ";
  if (c.rf_features < 1 || c.rf_seed < 0)
    e << "random-feature attention needs rf_features (D) ≥ 1 and rf_seed ≥ 0 (they are " << c.rf_features << " and "
      << c.rf_seed << "); ";
  if (c.window < 0)
    e << "window must be 0 (off) or a width w ≥ 1 (it is " << c.window << "): the causal mask keeps t_x − w ≤ t_z ≤ t_x; ";
  const bool buckets_ok = c.relative_buckets >= 4 && c.relative_buckets % 2 == 0;
  if (c.position == Position::Relative && !buckets_ok)
    e << "relative_buckets must be an even number ≥ 4 such as T5's 32 (it is " << c.relative_buckets
      << "): a bidirectional attention gives each sign of t_z − t_x half of them, and each half needs an exact "
         "bucket for distance 0 and logarithmic ones; ";
  if (c.position == Position::Relative && buckets_ok && c.relative_max_distance < c.relative_buckets)
    e << "relative_max_distance must be at least relative_buckets (they are " << c.relative_max_distance << " and "
      << c.relative_buckets << "): the logarithmic buckets span the distances from the exact ones up to it; ";
  if (c.attention == AttentionKind::RandomFeatures && c.position == Position::Relative)
    e << "attention \"random_features\" never forms the scores S, so the relative bias B cannot be added: use "
         "position \"learned\", \"sinusoidal\" or \"rope\", or attention \"exact\" or \"flash\"; ";
  if (c.attention == AttentionKind::RandomFeatures && c.window > 0)
    e << "attention \"random_features\" sums over a prefix of the keys, so a sliding window (window " << c.window
      << ") cannot be applied: set window 0, or use attention \"exact\" or \"flash\"; ";
  if (c.mask == MaskKind::Prefix && utf8_length(c.prefix_separator) != 1)
    e << "prefix_separator must be one character (it is \"" << c.prefix_separator << "\"); ";
  if (c.file_tokenizer()) {
    if (!c.vocab.empty()) e << "a " << to_string(c.tokenizer) << " tokenizer reads its vocabulary from its files: vocab must be empty; ";
    if (c.vocab_size < 1) e << "a " << to_string(c.tokenizer) << " tokenizer needs vocab_size (N_V) ≥ 1; ";
  } else {
    if (c.vocab_size != 0) e << "vocab_size is only for the gpt2 and wordpiece tokenizers (N_V is the vocab's size + 3); ";
    if (c.vocab.empty()) e << (c.tokenizer == TokenizerKind::Char ? "vocab must hold at least one character; " : "vocab must hold at least one token; ");
  }
  if (c.vocab.size() > 1000000) e << "vocab is larger than 1,000,000 tokens; ";
  std::set<std::string> seen;
  for (size_t i = 0; i < c.vocab.size(); ++i) {
    const std::string& tok = c.vocab[i];
    if (c.tokenizer == TokenizerKind::Char ? utf8_length(tok) != 1 : tok.empty()) {
      e << "vocab entry " << i + 1 << " (\"" << tok << "\") must be "
        << (c.tokenizer == TokenizerKind::Char ? "exactly one UTF-8 character" : "a non-empty string") << "; ";
      break;
    }
    if (!seen.insert(tok).second) {
      e << "vocab entry " << i + 1 << " (\"" << tok << "\") appears twice; ";
      break;
    }
  }
  if (!c.merges.empty() && c.tokenizer != TokenizerKind::Bpe) e << "merges are only for the bpe tokenizer; ";
  auto special = [&](const char* name, int id, bool may_be_none) {
    if (id > c.N_V() || (id < 0 && !may_be_none))
      e << name << " must be a token id in [1, N_V] = [1, " << c.N_V() << "] (it is " << id << "); ";
  };
  special("bos_id", c.bos_id, false);
  special("eos_id", c.eos_id, false);
  special("mask_id", c.mask_id, true);
  special("pad_id", c.pad_id, false);
  if (c.token_types < 0) e << "token_types must be ≥ 0; ";
  if (c.mask == MaskKind::Prefix && utf8_length(c.prefix_separator) == 1 && !c.file_tokenizer() &&
      std::find(c.vocab.begin(), c.vocab.end(), c.prefix_separator) == c.vocab.end())
    e << "prefix_separator \"" << c.prefix_separator << "\" is not in the vocabulary, so no prefix could ever be found; ";
  std::string s = e.str();
  if (s.size() >= 2) s.resize(s.size() - 2);
  return s;
}

std::string to_json(const ModelConfig& c) {
  nlohmann::ordered_json j;
  j["arch"] = c.arch;
  for (const std::string& key : int_keys(architecture(c))) j[key] = *config_int(c, key);
  j["eps"] = c.eps;
  j["norm_position"] = to_string(c.norm_pos());
  j["norm"] = to_string(c.norm);
  j["position"] = to_string(c.position);
  if (c.position == Position::Sinusoidal) {
    if (c.position_base > 0) j["position_base"] = c.position_base;
    else j["position_base"] = "l_max";
  }
  if (c.position == Position::Rope) j["rope_base"] = c.rope_base;
  j["activation"] = to_string(c.act());
  j["tied_unembedding"] = c.tied_unembedding;
  j["H_kv"] = c.kv_heads();
  j["mask"] = to_string(c.mask);
  if (c.mask == MaskKind::Prefix) j["prefix_separator"] = c.prefix_separator;
  if (c.attention == AttentionKind::Flash) {  // the paper's exact attention writes no key (older files stay as they were)
    j["attention"] = to_string(c.attention);
    j["block_r"] = c.block_r;
    j["block_c"] = c.block_c;
  }
  if (c.attention == AttentionKind::RandomFeatures) {  // ω is not stored: rf_seed regenerates it
    j["attention"] = to_string(c.attention);
    j["rf_features"] = c.rf_features;
    j["rf_seed"] = c.rf_seed;
    j["rf_orthogonal"] = c.rf_orthogonal;
  }
  if (c.window > 0) j["window"] = c.window;  // off writes no key (older files stay as they were)
  if (c.position == Position::Relative) {
    j["relative_buckets"] = c.relative_buckets;
    j["relative_max_distance"] = c.relative_max_distance;
  }
  if (c.embedding_norm) j["embedding_norm"] = true;
  if (c.token_types > 0) j["token_types"] = c.token_types;
  if (c.unembedding_bias) j["unembedding_bias"] = true;
  if (c.tokenizer != TokenizerKind::Char) j["tokenizer"] = to_string(c.tokenizer);
  if (c.file_tokenizer()) j["vocab_size"] = c.vocab_size;
  else j["vocab"] = c.vocab;
  if (!c.merges.empty()) j["merges"] = c.merges;
  for (auto [k, v] : {std::pair{"bos_id", c.bos_id}, {"eos_id", c.eos_id}, {"mask_id", c.mask_id}, {"pad_id", c.pad_id}})
    if (v != 0) j[k] = v;
  return j.dump();
}

ModelConfig config_from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& ex) {
    throw Error(std::string("config: not valid JSON (") + ex.what() + ")");
  }
  if (!j.is_object()) throw Error("config: the JSON must be an object such as {\"L\": 2, \"H\": 4, ...}");
  ModelConfig c;
  try {
    if (j.contains("arch")) {
      if (!j["arch"].is_string()) throw Error("config: \"arch\" must be a string");
      c.arch = j["arch"].get<std::string>();
    }
    const Architecture* arch = find_architecture(c.arch);
    if (!arch) throw Error("config: " + validate(c));
    const std::vector<std::string> ints = int_keys(*arch);
    std::set<std::string> known{"arch",  "eps",         "vocab",     "position_init",    "N_V",  "norm_position",
                                "norm",  "position",    "position_base", "rope_base", "activation",
                                "tied_unembedding", "H_kv", "mask", "prefix_separator", "attention", "block_r", "block_c",
                                "window", "relative_buckets", "relative_max_distance",
                                "embedding_norm", "token_types",
                                "unembedding_bias", "tokenizer", "merges", "vocab_size", "bos_id", "eos_id", "mask_id", "pad_id"};
    known.insert(ints.begin(), ints.end());
    known.insert({"rf_features", "rf_seed", "rf_orthogonal"});  // random-feature attention (Algorithm 4-R)
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (known.count(it.key())) continue;
      std::string keys;
      for (const std::string& k : arch->config_keys()) keys += (keys.empty() ? "" : ", ") + k;
      if (config_int(c, it.key()))
        throw Error("config: \"" + it.key() + "\" is not a key of arch \"" + c.arch + "\" (its own keys are " + keys +
                    ")");
      throw Error("config: unknown key \"" + it.key() + "\"");
    }
    auto get_int = [&](const char* k, int& dst) {
      if (!j.contains(k)) return;
      if (!j[k].is_number_integer()) throw Error(std::string("config: \"") + k + "\" must be an integer");
      auto v = j[k].get<long long>();
      if (v < -1000000000LL || v > 1000000000LL) throw Error(std::string("config: \"") + k + "\" is out of range");
      dst = static_cast<int>(v);
    };
    for (const std::string& key : ints) get_int(key.c_str(), *config_int(c, key));
    if (j.contains("eps")) {
      if (!j["eps"].is_number()) throw Error("config: \"eps\" must be a number");
      c.eps = j["eps"].get<float>();
    }
    // Files written before the variants have "position_init" ("learned", or a sinusoid that only
    // initialised W_p): their W_p is stored and trained, which is position "learned".
    if (j.contains("position_init") && !j["position_init"].is_string())
      throw Error("config: \"position_init\" must be a string");
    read_variants(j, c);
    if (c.file_tokenizer() && !j.contains("vocab")) c.vocab.clear();
    if (j.contains("vocab")) {
      const auto& v = j["vocab"];
      c.vocab.clear();
      if (v.is_string()) {
        if (c.tokenizer != TokenizerKind::Char) throw Error("config: a word or bpe \"vocab\" must be an array of strings");
        c.vocab = utf8_split(v.get<std::string>());
      } else if (v.is_array()) {
        for (const auto& t : v) {
          if (!t.is_string()) throw Error("config: \"vocab\" entries must be strings");
          c.vocab.push_back(t.get<std::string>());
        }
      } else {
        throw Error("config: \"vocab\" must be a string of characters or an array of one-character strings");
      }
    }
    if (j.contains("N_V")) {
      if (!j["N_V"].is_number_integer() || j["N_V"].get<long long>() != c.N_V())
        throw Error("config: \"N_V\" is " + j["N_V"].dump() + " but the vocabulary gives N_V = " +
                    std::to_string(c.N_V()) + " (its characters + 3 special tokens)");
    }
  } catch (const nlohmann::json::exception& ex) {
    throw Error(std::string("config: ") + ex.what());
  }
  std::string why = validate(c);
  if (!why.empty()) throw Error("config: " + why);
  return c;
}

ModelConfig load_config_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open config file " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return config_from_json(ss.str());
}

}  // namespace sf
