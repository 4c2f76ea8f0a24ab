// Any safetensors file: the header, then every tensor the reader agrees to read.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/io/safetensors.hpp"
#include "core/model/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const sf::SafetensorsFile f =
        sf::SafetensorsFile::from_bytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.safetensors");
    for (const auto& [name, t] : f.tensors()) {
      if (!f.unreadable_reason(t).empty()) continue;
      try {
        const std::vector<float> v = f.read_vector(t);
        (void)v;
      } catch (const sf::Error&) {
      }
    }
  } catch (const sf::Error&) {
  }
  return 0;
}
