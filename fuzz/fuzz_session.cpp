// Sessions and lessons (.stepformer, JSON); a session read is written back and read again.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/io/session_file.hpp"
#include "core/model/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const sf::SessionFile s = sf::session_from_json(std::string(reinterpret_cast<const char*>(data), size));
    const sf::SessionFile again = sf::session_from_json(sf::session_to_json(s));
    (void)again;
  } catch (const sf::Error&) {
  }
  return 0;
}
