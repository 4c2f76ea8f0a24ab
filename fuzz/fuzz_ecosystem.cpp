// The ecosystem's layouts (Hugging Face GPT-2/BERT, nanoGPT, minGPT): a folder with config.json and
// model.safetensors, opened as the app and the CLI open it. Input: config.json, a NUL, model.safetensors.
// The tokenizer files are the test data's (BERT's vocab.txt when the configuration mentions "bert").
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/io/model_files.hpp"
#include "core/model/error.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string vocab_json = fuzz::test_data("ecosystem/hf-gpt2/vocab.json");
  static const std::string merges_txt = fuzz::test_data("ecosystem/hf-gpt2/merges.txt");
  static const std::string vocab_txt = fuzz::test_data("ecosystem/hf-bert/vocab.txt");
  const auto [config, model] = fuzz::split(data, size);
  fuzz::write("config.json", config);
  const std::string path = fuzz::write("model.safetensors", model);
  if (config.find("bert") != std::string_view::npos) {
    fuzz::remove("vocab.json");
    fuzz::remove("merges.txt");
    fuzz::write("vocab.txt", vocab_txt);
  } else {
    fuzz::remove("vocab.txt");
    fuzz::write("vocab.json", vocab_json);
    fuzz::write("merges.txt", merges_txt);
  }
  try {
    const sf::OpenedModel m = sf::open_model(path);
    (void)m;
  } catch (const sf::Error&) {
  }
  return 0;
}
