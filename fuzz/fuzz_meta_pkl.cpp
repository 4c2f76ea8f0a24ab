// nanoGPT's meta.pkl: the plain-data pickle machine and the token list taken from it; then the
// token list as a tokenizer, and a text through it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/io/pickle_meta.hpp"
#include "core/model/error.hpp"
#include "core/tokenizers/token_list.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    sf::TokenListTokenizer t(sf::parse_meta_pkl(std::string_view(reinterpret_cast<const char*>(data), size), "meta.pkl"),
                             "meta.pkl");
    (void)t.decode_text(t.encode_sequence("hello, world!\n", false));
  } catch (const sf::Error&) {
  }
  return 0;
}
