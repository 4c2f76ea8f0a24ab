// The tokenizer of a GPT-layout checkpoint from the ecosystem (Hugging Face GPT-2, nanoGPT,
// minGPT), looked for beside it in this order (docs/ecosystem.md, "Models without tokenizer files"):
//   1. GPT-2's tokenizer files: vocab.json + merges.txt, encoder.json + vocab.bpe, tokenizer.json;
//   2. config.json's "vocab" (a string: one token per character, UTF-8 code points) or "itos"
//      (a list of strings: token k − 1 first … as the model numbers them);
//   3. vocab.txt: one token per line (core/tokenizers/token_list.hpp; in a BERT folder vocab.txt
//      stays BERT's WordPiece);
//   4. nanoGPT's meta.pkl, read without running anything (core/io/pickle_meta.hpp);
//   5. none of them: plain ids, token k labelled #k.
#pragma once
#include <memory>
#include <string>

#include "core/io/hf_config.hpp"
#include "core/tokenizers/tokenizer.hpp"

namespace sf {

struct GptVocabulary {
  std::unique_ptr<Tokenizer> tokenizer;
  std::string source;  // the vocabulary's file in the folder, for messages: "vocab.json", "config.json's \"itos\"",
                       // "meta.pkl", … ("" for plain ids)
  std::string file;    // the file read for it beyond config.json ("" when none)
  std::string note;    // one line for people when the tokenizer is not GPT-2's files ("" otherwise)
};

// `rows`: the model's N_V (its token embedding's rows), the size of a plain-ids tokenizer. Throws
// sf::Error naming the file for a malformed vocabulary, or for GPT-2 files that are not GPT-2's.
GptVocabulary gpt_vocabulary(const std::string& dir, const HfConfig& cfg, int rows);

}  // namespace sf
