// stepformer-cli tokenize: how a tokenizer cuts a text (paper §4), piece by piece, with the ids
// its own files give them and the paper's 1-based ids.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/io/model_files.hpp"
#include "core/tokenizers/tokenizer.hpp"
#include "core/tokenizers/utf8.hpp"

namespace sf::cli {

namespace {

// PATH: a folder of tokenizer files, one of those files, or a checkpoint (its model's tokenizer).
std::unique_ptr<Tokenizer> tokenizer_at(const std::string& path) {
  const std::filesystem::path p(path);
  if (p.extension() != ".safetensors") {
    if (auto t = load_tokenizer_files(path)) return t;
  }
  return std::move(load_text_model(path, "tokenize").tokenizer);
}

// s padded with spaces to `width` characters (not bytes: labels are UTF-8).
std::string pad(const std::string& s, size_t width) {
  const size_t n = utf8_length(s);
  return n >= width ? s : s + std::string(width - n, ' ');
}

int run_tokenize(const Args& args) {
  const auto tokenizer = tokenizer_at(args.get("tokenizer"));
  const std::vector<TextPiece> pieces = tokenizer->tokenize(args.get("text"));
  if (args.has("json")) {
    nlohmann::json out = nlohmann::json::array();
    for (const TextPiece& p : pieces)
      out.push_back({{"piece", p.id ? tokenizer->piece(p.id) : p.text},
                     {"label", p.id ? tokenizer->label(p.id) : p.text},
                     {"id", p.id ? nlohmann::json(tokenizer->file_id(p.id)) : nlohmann::json()},
                     {"paper_id", p.id ? nlohmann::json(p.id) : nlohmann::json()}});
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::cout << tokenizer->describe() << "\n"
            << pieces.size() << " piece" << (pieces.size() == 1 ? "" : "s")
            << " (id: as the tokenizer's files number it; paper id: 1-based, as the paper numbers tokens)\n";
  std::cout << "    #  " << pad("label", 20) << "  " << pad("piece", 20) << "  " << pad("id", 8) << "  paper id\n";
  for (size_t i = 0; i < pieces.size(); ++i) {
    const TextPiece& p = pieces[i];
    const std::string label = p.id ? tokenizer->label(p.id) : p.text + " (no id)";
    const std::string piece = p.id ? tokenizer->piece(p.id) : "";
    const std::string id = p.id ? std::to_string(tokenizer->file_id(p.id)) : "—";
    const std::string paper = p.id ? std::to_string(p.id) : "—";
    const std::string n = std::to_string(i + 1);
    std::cout << std::string(5 - std::min<size_t>(5, n.size()), ' ') << n << "  " << pad(label, 20) << "  " << pad(piece, 20)
              << "  " << pad(id, 8) << "  " << paper << "\n";
  }
  return 0;
}

}  // namespace

Command tokenize_command() {
  CommandSpec s;
  s.name = "tokenize";
  s.summary = "Show how a tokenizer (character, word, BPE, GPT-2, WordPiece) cuts a text, with each piece's ids.";
  s.synopsis = "--tokenizer PATH --text TEXT [--json]";
  s.description =
      "Prints each piece of TEXT: its readable label (GPT-2's leading-space marker Ġ shown as ␣, Ċ as ↵), the piece "
      "as the tokenizer's files write it, its id as those files number it (0-based for GPT-2's and BERT's files) and "
      "its paper id (1-based: paper id = file id + 1 for the ecosystem's files). Special tokens written in the text "
      "(<|endoftext|>; [CLS] [SEP] [MASK] [PAD] [UNK]; the paper's [MASK] [BOS] [EOS]) are single pieces. "
      "docs/tokenizers.md describes the five tokenizers.";
  s.options = {
      {"tokenizer", "PATH",
       "A folder with tokenizer files (vocab.json + merges.txt, encoder.json + vocab.bpe or tokenizer.json for "
       "GPT-2; vocab.txt for BERT), one of those files, or a checkpoint (.safetensors, or its folder): the model's "
       "own tokenizer.",
       true},
      {"text", "TEXT", "The text to tokenize.", true},
      {"json", "", "Print a JSON array [{\"piece\", \"label\", \"id\", \"paper_id\"}, …] instead (ids null for a "
                   "piece with no id)."},
  };
  s.examples =
      "  stepformer-cli tokenize --tokenizer gpt2/ --text \"Hello world\"\n"
      "  stepformer-cli tokenize --tokenizer bert-tiny/vocab.txt --text \"The [MASK] sat.\" --json\n"
      "  stepformer-cli tokenize --tokenizer model.safetensors --text \"dcab=\"\n";
  return {s, run_tokenize};
}

}  // namespace sf::cli
