#include "core/io/hf_config.hpp"

#include <filesystem>

#include "core/io/fileio.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

constexpr size_t kMaxConfigBytes = size_t{16} << 20;  // Hugging Face's config.json files are a few kB

}  // namespace

HfConfig HfConfig::load(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error("no config.json beside the checkpoint in " + dir +
                ": a checkpoint from the ecosystem keeps its hyperparameters there; download config.json from the "
                "model's Hugging Face page into that folder (for nanoGPT/minGPT write one with GPT-2's keys: "
                "docs/ecosystem.md)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path, kMaxConfigBytes));
  } catch (const nlohmann::json::exception& ex) {
    throw Error(path + ": not valid JSON (" + ex.what() + ")");
  }
  if (!j.is_object()) throw Error(path + ": must be a JSON object such as {\"n_layer\": 12, \"n_head\": 12, …}");
  return HfConfig(path, std::move(j));
}

bool HfConfig::has(const std::string& key) const {
  const auto it = j_.find(key);
  return it != j_.end() && !it->is_null();
}

const nlohmann::json* HfConfig::first(std::initializer_list<const char*> keys, std::string& key) const {
  for (const char* k : keys)
    if (has(k)) {
      key = k;
      return &j_.at(k);
    }
  key = *keys.begin();
  return nullptr;
}

std::optional<int64_t> HfConfig::positive(std::initializer_list<const char*> keys) const {
  std::string key;
  const nlohmann::json* v = first(keys, key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer() || v->get<int64_t>() < 1 || v->get<int64_t>() > (int64_t{1} << 30))
    refuse("\"" + key + "\" must be a positive integer (it is " + v->dump() + ")");
  return v->get<int64_t>();
}

int64_t HfConfig::require_positive(std::initializer_list<const char*> keys) const {
  if (const auto v = positive(keys)) return *v;
  std::string names;
  for (const char* k : keys) names += std::string(names.empty() ? "" : " or ") + "\"" + k + "\"";
  refuse("the key " + names + " is missing; this is not the config.json of such a model (use the one from the "
         "model's Hugging Face page, or write it with the keys of docs/ecosystem.md)");
}

double HfConfig::non_negative(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  const nlohmann::json& v = j_.at(key);
  if (!v.is_number() || !(v.get<double>() >= 0)) refuse("\"" + std::string(key) + "\" must be a number ≥ 0 (it is " + v.dump() + ")");
  return v.get<double>();
}

std::string HfConfig::text(const char* key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  const nlohmann::json& v = j_.at(key);
  if (!v.is_string()) refuse("\"" + std::string(key) + "\" must be a string (it is " + v.dump() + ")");
  return v.get<std::string>();
}

bool HfConfig::flag(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  const nlohmann::json& v = j_.at(key);
  if (!v.is_boolean()) refuse("\"" + std::string(key) + "\" must be true or false (it is " + v.dump() + ")");
  return v.get<bool>();
}

void HfConfig::contradiction(const std::string& key, int64_t value, const std::string& tensors_say) const {
  throw Error(path_ + " says " + key + " = " + std::to_string(value) + " but " + tensors_say +
              "; this config.json does not belong to the checkpoint beside it (use the one from the same model)");
}

void HfConfig::refuse(const std::string& what) const { throw Error(path_ + ": " + what); }

}  // namespace sf
