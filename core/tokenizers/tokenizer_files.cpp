// make_tokenizer and load_tokenizer_files: which tokenizer a model has, and the ecosystem's files.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/model/error.hpp"
#include "core/tokenizers/bpe.hpp"
#include "core/tokenizers/gpt2_bpe.hpp"
#include "core/tokenizers/tokenizer.hpp"
#include "core/tokenizers/word.hpp"
#include "core/tokenizers/wordpiece.hpp"

namespace sf {

namespace fs = std::filesystem;

std::string tokenizer_file_names() {
  return "vocab.json + merges.txt or encoder.json + vocab.bpe or tokenizer.json (GPT-2), vocab.txt (BERT)";
}

namespace {

// Hugging Face tokenizers' tokenizer.json: model.type "BPE" (GPT-2's byte-level BPE: model.vocab,
// model.merges as "a b" strings or [a, b] pairs) or "WordPiece" (model.vocab); added_tokens.
std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot read " + path + " (Hugging Face tokenizers' tokenizer.json)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + " is not valid JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object() || !j["model"].contains("vocab") ||
      !j["model"]["vocab"].is_object())
    throw Error(path + " has no \"model\": {\"vocab\": {…}} object (is it a Hugging Face tokenizer.json?)");
  const nlohmann::json& model = j["model"];
  const std::string type = model.value("type", std::string("BPE"));
  const nlohmann::json& vocab = model["vocab"];
  std::vector<std::string> pieces(vocab.size());
  for (const auto& [piece, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() >= static_cast<long long>(vocab.size()) ||
        !pieces[id.get<size_t>()].empty())
      throw Error(path + ": model.vocab entry \"" + piece + "\" has id " + id.dump() + "; ids must be 0 … " +
                  std::to_string(vocab.size() - 1) + ", each once");
    pieces[id.get<size_t>()] = piece;
  }
  std::vector<std::string> specials;
  if (j.contains("added_tokens") && j["added_tokens"].is_array())
    for (const auto& t : j["added_tokens"]) {
      const std::string content = t.value("content", std::string());
      const long long id = t.value("id", -1LL);
      if (id < 0 || id >= static_cast<long long>(pieces.size()) || pieces[id] != content)
        throw Error(path + ": added token \"" + content + "\" (id " + std::to_string(id) +
                    ") does not match model.vocab (" + std::to_string(pieces.size()) + " entries)");
      specials.push_back(content);
    }
  if (type == "WordPiece") {
    const bool lowercase = j.contains("normalizer") && j["normalizer"].is_object() ? j["normalizer"].value("lowercase", true) : true;
    return std::make_unique<WordPieceTokenizer>(std::move(pieces), lowercase, "tokenizer.json");
  }
  if (type != "BPE") throw Error(path + ": model.type \"" + type + "\" is not supported (BPE or WordPiece)");
  std::vector<std::pair<std::string, std::string>> merges;
  const nlohmann::json ms = model.value("merges", nlohmann::json::array());
  for (size_t r = 0; r < ms.size(); ++r) {
    const nlohmann::json& m = ms[r];
    const std::string where = path + ": model.merges entry " + std::to_string(r + 1) + " (" + m.dump() + ")";
    if (m.is_array()) {
      if (m.size() != 2 || !m[0].is_string() || !m[1].is_string()) throw Error(where + " is not a pair [\"left\", \"right\"]");
      merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || sp == 0 || sp + 1 == s.size() || s.find(' ', sp + 1) != std::string::npos)
        throw Error(where + " is not \"left right\" (two pieces separated by one space)");
      merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else {
      throw Error(where + " is neither \"left right\" nor [\"left\", \"right\"]");
    }
  }
  return std::make_unique<Gpt2Tokenizer>(std::move(pieces), merges, specials, "tokenizer.json");
}

// The partner of a GPT-2 file: vocab.json ↔ merges.txt, encoder.json ↔ vocab.bpe.
const std::vector<std::pair<std::string, std::string>> kGpt2Pairs = {{"vocab.json", "merges.txt"}, {"encoder.json", "vocab.bpe"}};

std::unique_ptr<Tokenizer> load_pair(const fs::path& dir, const std::pair<std::string, std::string>& names) {
  for (const std::string& n : {names.first, names.second})
    if (!fs::exists(dir / n))
      throw Error((dir / n).string() + " is missing: GPT-2's tokenizer needs " + names.first + " and " + names.second +
                  " side by side (download both from the Hugging Face model page's \"Files\" tab)");
  return load_gpt2_files((dir / names.first).string(), (dir / names.second).string());
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer_files(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    if (!fs::exists(path, ec)) throw Error(path + " does not exist (expected a folder with " + tokenizer_file_names() + ")");
    const fs::path p(path);
    const std::string name = p.filename().string();
    for (const auto& pair : kGpt2Pairs)
      if (name == pair.first || name == pair.second) return load_pair(p.parent_path(), pair);
    if (name == "vocab.txt") return load_wordpiece_files(path);
    if (name == "tokenizer.json") return load_tokenizer_json(path);
    throw Error(path + " is not a tokenizer file Stepformer reads (" + tokenizer_file_names() + ")");
  }
  const fs::path dir(path);
  for (const auto& pair : kGpt2Pairs)
    if (fs::exists(dir / pair.first) || fs::exists(dir / pair.second)) return load_pair(dir, pair);
  if (fs::exists(dir / "vocab.txt")) return load_wordpiece_files((dir / "vocab.txt").string());
  if (fs::exists(dir / "tokenizer.json")) return load_tokenizer_json((dir / "tokenizer.json").string());
  return nullptr;
}

std::unique_ptr<Tokenizer> make_tokenizer(const ModelConfig& c, const std::string& dir) {
  switch (c.tokenizer) {
    case TokenizerKind::Char: return std::make_unique<CharTokenizer>(c);
    case TokenizerKind::Word: return std::make_unique<WordTokenizer>(c);
    case TokenizerKind::Bpe: return std::make_unique<BpeTokenizer>(c);
    case TokenizerKind::Gpt2:
    case TokenizerKind::WordPiece: break;
  }
  const std::string where = dir.empty() ? std::string("the current folder") : dir;
  std::unique_ptr<Tokenizer> t = load_tokenizer_files(dir.empty() ? "." : dir);
  const char* wanted = c.tokenizer == TokenizerKind::Gpt2 ? "vocab.json + merges.txt, encoder.json + vocab.bpe or tokenizer.json"
                                                          : "vocab.txt (or a WordPiece tokenizer.json)";
  if (!t)
    throw Error("the model's " + std::string(to_string(c.tokenizer)) + " tokenizer needs " + wanted + " in " + where +
                "; none is there (download them from the Hugging Face model page's \"Files\" tab)");
  if (t->kind() != c.tokenizer)
    throw Error("the model's configuration asks for the " + std::string(to_string(c.tokenizer)) +
                " tokenizer, but the files in " + where + " are " + t->describe());
  return t;
}

}  // namespace sf
