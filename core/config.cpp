#include "core/config.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/utf8.hpp"

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

std::string validate(const ModelConfig& c) {
  std::ostringstream e;
  auto positive = [&](const char* name, int v, int hi) {
    if (v < 1 || v > hi) e << name << " must be between 1 and " << hi << " (it is " << v << "); ";
  };
  if (c.arch != "gpt") e << "arch must be \"gpt\" (it is \"" << c.arch << "\"); ";
  positive("L", c.L, 64);
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
  j["L"] = c.L;
  j["H"] = c.H;
  j["d_e"] = c.d_e;
  j["d_attn"] = c.d_attn;
  j["d_mid"] = c.d_mid;
  j["d_mlp"] = c.d_mlp;
  j["l_max"] = c.l_max;
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
  static const std::set<std::string> known{"arch",  "L",     "H",   "d_e",   "d_attn",        "d_mid",
                                           "d_mlp", "l_max", "eps", "vocab", "position_init", "N_V"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key())) throw Error("config: unknown key \"" + it.key() + "\"");
  ModelConfig c;
  try {
    auto get_int = [&](const char* k, int& dst) {
      if (!j.contains(k)) return;
      if (!j[k].is_number_integer()) throw Error(std::string("config: \"") + k + "\" must be an integer");
      auto v = j[k].get<long long>();
      if (v < -1000000000LL || v > 1000000000LL) throw Error(std::string("config: \"") + k + "\" is out of range");
      dst = static_cast<int>(v);
    };
    if (j.contains("arch")) {
      if (!j["arch"].is_string()) throw Error("config: \"arch\" must be a string");
      c.arch = j["arch"].get<std::string>();
    }
    get_int("L", c.L);
    get_int("H", c.H);
    get_int("d_e", c.d_e);
    get_int("d_attn", c.d_attn);
    get_int("d_mid", c.d_mid);
    get_int("d_mlp", c.d_mlp);
    get_int("l_max", c.l_max);
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
