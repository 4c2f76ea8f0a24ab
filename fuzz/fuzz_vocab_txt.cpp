// vocab.txt as a GPT-layout model's token list (one token per line, \n \t \r \\ escapes); then a
// text through the tokenizer, and the plain-ids tokenizer on the same bytes as a prompt.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/model/error.hpp"
#include "core/tokenizers/token_list.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const sf::TokenListTokenizer t(sf::parse_token_list(bytes, "vocab.txt"), "vocab.txt");
    (void)t.decode_text(t.encode_sequence("hello, world!\nthe café", false));
  } catch (const sf::Error&) {
  }
  const sf::PlainIdsTokenizer ids(50257);
  for (const sf::UnknownChar& u : ids.unknown(bytes)) (void)u.chr.size();
  try {
    (void)ids.decode_text(ids.encode(bytes));
  } catch (const sf::Error&) {
  }
  return 0;
}
