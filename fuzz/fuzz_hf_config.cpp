// config.json beside an ecosystem checkpoint: every accessor the planners use.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/io/hf_config.hpp"
#include "core/model/error.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::write("config.json", std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    const sf::HfConfig c = sf::HfConfig::load(fuzz::scratch().string());
    (void)c.has("n_layer");
    try { (void)c.positive({"n_layer", "num_hidden_layers"}); } catch (const sf::Error&) {}
    try { (void)c.require_positive({"n_head", "num_attention_heads"}); } catch (const sf::Error&) {}
    try { (void)c.non_negative("layer_norm_epsilon", 1e-5); } catch (const sf::Error&) {}
    try { (void)c.text("activation_function", "gelu_new"); } catch (const sf::Error&) {}
    try { (void)c.flag("tie_word_embeddings", true); } catch (const sf::Error&) {}
  } catch (const sf::Error&) {
  }
  return 0;
}
