// Stepformer's own checkpoints: a safetensors file with the paper's parameter names and its configuration.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/io/checkpoint.hpp"
#include "core/model/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const sf::Checkpoint c = sf::parse_checkpoint(std::string(reinterpret_cast<const char*>(data), size), "fuzz.safetensors");
    (void)c;
  } catch (const sf::Error&) {
  }
  return 0;
}
