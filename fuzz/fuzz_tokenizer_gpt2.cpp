// GPT-2's tokenizer files: vocab.json, a NUL, merges.txt; then a text through the tokenizer read.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/model/error.hpp"
#include "core/tokenizers/gpt2_bpe.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [vocab, merges] = fuzz::split(data, size);
  const std::string v = fuzz::write("vocab.json", vocab), m = fuzz::write("merges.txt", merges);
  try {
    const std::unique_ptr<sf::Gpt2Tokenizer> t = sf::load_gpt2_files(v, m);
    try {
      const auto ids = t->encode("Hello world, 12 naïve tokens!<|endoftext|>\n");
      (void)t->decode(ids);
    } catch (const sf::Error&) {
    }
  } catch (const sf::Error&) {
  }
  return 0;
}
