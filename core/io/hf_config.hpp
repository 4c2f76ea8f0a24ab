// config.json beside an ecosystem checkpoint, read with Hugging Face's keys (docs/ecosystem.md):
// the hyperparameters of a GPT-2 (n_layer, n_head, n_embd, …) or BERT (hidden_size,
// num_attention_heads, …) checkpoint. Every refusal names the file and the key.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace sf {

class HfConfig {
 public:
  // Reads DIR/config.json. Throws sf::Error when it is missing (saying which file to put there)
  // or is not a JSON object.
  static HfConfig load(const std::string& dir);

  const std::string& path() const { return path_; }
  // Whether the key is present and not null.
  bool has(const std::string& key) const;
  // The first of `keys` present (aliases, e.g. n_positions or n_ctx), as a positive integer;
  // nothing when none is. Throws naming the key when it is not a positive integer.
  std::optional<int64_t> positive(std::initializer_list<const char*> keys) const;
  // The same, required: throws "config.json has no n_embd (…)" when absent.
  int64_t require_positive(std::initializer_list<const char*> keys) const;
  // A number ≥ 0 (layer_norm_epsilon), or `fallback` when absent.
  double non_negative(const char* key, double fallback) const;
  // A string (activation_function), or `fallback` when absent.
  std::string text(const char* key, const std::string& fallback) const;
  // A boolean (scale_attn_weights), or `fallback` when absent.
  bool flag(const char* key, bool fallback) const;

  // The value of `key` as it is (a vocabulary in config.json), or nullptr when absent or null.
  const nlohmann::json* find(const std::string& key) const { return has(key) ? &j_.at(key) : nullptr; }

  // The error for a value the tensors contradict: "DIR/config.json says n_embd = 768 but
  // wte.weight has 512 columns; …".
  [[noreturn]] void contradiction(const std::string& key, int64_t value, const std::string& tensors_say) const;
  // Any other refusal of the file's content: "DIR/config.json: WHAT".
  [[noreturn]] void refuse(const std::string& what) const;

 private:
  HfConfig(std::string path, nlohmann::json j) : path_(std::move(path)), j_(std::move(j)) {}
  const nlohmann::json* first(std::initializer_list<const char*> keys, std::string& key) const;

  std::string path_;
  nlohmann::json j_;
};

}  // namespace sf
