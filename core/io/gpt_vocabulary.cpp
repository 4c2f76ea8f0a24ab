#include "core/io/gpt_vocabulary.hpp"

#include <filesystem>
#include <optional>

#include "core/io/pickle_meta.hpp"
#include "core/model/error.hpp"
#include "core/tokenizers/token_list.hpp"
#include "core/tokenizers/utf8.hpp"

namespace sf {

namespace fs = std::filesystem;

namespace {

// A vocab.txt of a character or token list is a few kB; GPT-2's 50257 tokens would be ~400 kB.
constexpr size_t kMaxVocabTxtBytes = size_t{16} << 20;

bool present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// 1. GPT-2's own files, when any of them is there; `source` names the vocabulary file.
std::unique_ptr<Tokenizer> gpt2_files(const fs::path& dir, std::string& source) {
  const std::pair<const char*, const char*> files[] = {{"vocab.json", "vocab.json"}, {"merges.txt", "vocab.json"},
                                                       {"encoder.json", "encoder.json"}, {"vocab.bpe", "encoder.json"},
                                                       {"tokenizer.json", "tokenizer.json"}};
  for (const auto& [name, vocabulary] : files) {
    if (!present(dir / name)) continue;
    std::unique_ptr<Tokenizer> t = load_tokenizer_files((dir / name).string());
    if (t->kind() != TokenizerKind::Gpt2)
      throw Error("the checkpoint in " + dir.string() + " is in GPT-2's layout, but its " + name + " is " + t->describe());
    source = vocabulary;
    return t;
  }
  return nullptr;
}

// 2. config.json's "vocab" (a string of characters) or "itos" (a list of strings).
std::optional<std::vector<std::string>> config_tokens(const HfConfig& cfg, std::string& source) {
  if (const nlohmann::json* v = cfg.find("vocab")) {
    if (!v->is_string())
      cfg.refuse(std::string("\"vocab\" must be a string holding one character per token (it is ") + v->type_name() + ")");
    source = "config.json's \"vocab\"";
    return utf8_split(v->get<std::string>());
  }
  if (const nlohmann::json* v = cfg.find("itos")) {
    std::vector<std::string> tokens;
    if (v->is_array())
      for (const nlohmann::json& t : *v) {
        if (!t.is_string()) break;
        tokens.push_back(t.get<std::string>());
      }
    if (!v->is_array() || tokens.size() != v->size())
      cfg.refuse("\"itos\" must be a list of strings, token 0 first (as nanoGPT's meta.pkl has it)");
    source = "config.json's \"itos\"";
    return tokens;
  }
  return std::nullopt;
}

std::string plain_ids_note() {
  return "no tokenizer files (vocab.json + merges.txt, a vocabulary in config.json, vocab.txt or meta.pkl): tokens "
         "are shown as their ids #k (#k is the model's own token k − 1); type ids in the prompt, e.g. 1 2 3";
}

}  // namespace

GptVocabulary gpt_vocabulary(const std::string& dir_name, const HfConfig& cfg, int rows) {
  const fs::path dir(dir_name);
  GptVocabulary v;
  if ((v.tokenizer = gpt2_files(dir, v.source))) return v;
  std::optional<std::vector<std::string>> tokens = config_tokens(cfg, v.source);
  if (!tokens && present(dir / "vocab.txt")) {
    v.file = (dir / "vocab.txt").string();
    v.source = "vocab.txt";
    tokens = read_token_list(v.file, kMaxVocabTxtBytes);
  }
  if (!tokens && present(dir / "meta.pkl")) {
    v.file = (dir / "meta.pkl").string();
    v.source = "meta.pkl";
    tokens = read_meta_pkl(v.file);
  }
  if (!tokens) {
    v.tokenizer = std::make_unique<PlainIdsTokenizer>(rows);
    v.note = plain_ids_note();
    return v;
  }
  v.tokenizer = std::make_unique<TokenListTokenizer>(std::move(*tokens), v.source);
  v.note = "the vocabulary is the model's own token list from " + v.source + " (" + std::to_string(v.tokenizer->N_V()) +
           " tokens, no special tokens): a prompt is read as those tokens, with nothing added";
  return v;
}

}  // namespace sf
