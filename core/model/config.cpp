#include "core/model/config.hpp"

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

const char* to_string(PositionInit p) {
  switch (p) {
    case PositionInit::Learned: return "learned";
    case PositionInit::SinusoidLmax: return "sinusoid_lmax";
    case PositionInit::Sinusoid10000: return "sinusoid_10000";
  }
  return "learned";
}

static PositionInit position_init_from(const std::string& s) {
  if (s == "learned") return PositionInit::Learned;
  if (s == "sinusoid_lmax") return PositionInit::SinusoidLmax;
  if (s == "sinusoid_10000") return PositionInit::Sinusoid10000;
  throw Error("config: position_init must be \"learned\", \"sinusoid_lmax\" or \"sinusoid_10000\", not \"" + s + "\"");
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
  if (c.vocab.empty()) e << "vocab must hold at least one character; ";
  if (c.vocab.size() > 1000000) e << "vocab is larger than 1,000,000 tokens; ";
  std::set<std::string> seen;
  for (size_t i = 0; i < c.vocab.size(); ++i) {
    const std::string& tok = c.vocab[i];
    if (utf8_length(tok) != 1) {
      e << "vocab entry " << i + 1 << " (\"" << tok << "\") must be exactly one UTF-8 character; ";
      break;
    }
    if (!seen.insert(tok).second) {
      e << "vocab entry " << i + 1 << " (\"" << tok << "\") appears twice; ";
      break;
    }
  }
  std::string s = e.str();
  if (s.size() >= 2) s.resize(s.size() - 2);
  return s;
}

std::string to_json(const ModelConfig& c) {
  nlohmann::ordered_json j;
  j["arch"] = c.arch;
  for (const std::string& key : int_keys(architecture(c))) j[key] = *config_int(c, key);
  j["eps"] = c.eps;
  j["position_init"] = to_string(c.position_init);
  j["vocab"] = c.vocab;
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
    std::set<std::string> known{"arch", "eps", "vocab", "position_init", "N_V"};
    known.insert(ints.begin(), ints.end());
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
    if (j.contains("position_init")) {
      if (!j["position_init"].is_string()) throw Error("config: \"position_init\" must be a string");
      c.position_init = position_init_from(j["position_init"].get<std::string>());
    }
    if (j.contains("vocab")) {
      const auto& v = j["vocab"];
      c.vocab.clear();
      if (v.is_string()) {
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
