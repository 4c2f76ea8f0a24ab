// BERT's vocab.txt; then a text through the tokenizer read.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/model/error.hpp"
#include "core/tokenizers/wordpiece.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string p = fuzz::write("vocab.txt", std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    const std::unique_ptr<sf::WordPieceTokenizer> t = sf::load_wordpiece_files(p);
    try {
      const auto ids = t->encode("Hello [MASK] world, 12 naïve tokens! [SEP]");
      (void)t->decode(ids);
    } catch (const sf::Error&) {
    }
  } catch (const sf::Error&) {
  }
  return 0;
}
