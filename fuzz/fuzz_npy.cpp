// NumPy .npy files (1-D and 2-D float32/float64), read from a file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/io/npy.hpp"
#include "core/model/error.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string p = fuzz::write("x.npy", std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    const sf::MatF m = sf::read_npy(p);
    (void)m;
  } catch (const sf::Error&) {
  }
  return 0;
}
