// stepformer-cli info: what a model file is, and where every paper tensor came from: the layout
// (a Stepformer checkpoint, or Hugging Face GPT-2 / BERT, nanoGPT/minGPT mapped onto the paper's
// names by core/io/model_files), the configuration, the files read, the tokenizer, the import's
// notes, and each tensor of the parameter table with its shape and provenance.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/arch/vit.hpp"

namespace sf::cli {

namespace {

const char* layout_title(Layout l) {
  switch (l) {
    case Layout::Stepformer: return "a Stepformer checkpoint (every tensor under its paper name)";
    case Layout::HfGpt2: return "Hugging Face GPT-2 (Conv1D weights [in, out]), mapped onto Algorithm 10's names";
    case Layout::NanoGpt: return "a nanoGPT/minGPT state dict (nn.Linear weights [out, in]), mapped onto Algorithm 10's names";
    case Layout::HfBert: return "Hugging Face BERT with its masked-LM head, mapped onto Algorithm 9's names";
  }
  return "";
}

// "ℝ^{16×277}", "4 heads × ℝ^{4×16}", "ℝ^{16}"
std::string entry_shape(const ParamEntry& e) {
  const std::string m = e.cols == 1 && e.role != ParamRole::Weight && e.role != ParamRole::OutputWeight &&
                                e.role != ParamRole::Embedding && e.role != ParamRole::Position
                            ? "ℝ^{" + std::to_string(e.rows) + "}"
                            : "ℝ^{" + std::to_string(e.rows) + "×" + std::to_string(e.cols) + "}";
  return e.count > 1 ? std::to_string(e.count) + " heads × " + m : m;
}

// Where a tensor came from: the import's provenance, or the checkpoint itself.
std::string source_of(const OpenedModel& m, const std::string& name) {
  const auto it = m.provenance.find(name);
  if (it != m.provenance.end()) return it->second;
  return m.layout == Layout::Stepformer ? "stored under this name in the checkpoint" : "";
}

std::string special(const Tokenizer& tok, int id) {
  return id > 0 ? std::to_string(id) + " (" + tok.label(id) + ")" : std::string("none");
}

void print_tokenizer(const Tokenizer& tok) {
  std::cout << "tokenizer: " << tok.describe() << "\n";
  if (tok.file_id(1) != 1) std::cout << "  token ids: 1-based paper ids, paper id = the files' 0-based id + 1\n";
  std::cout << "  bos_token = " << special(tok, tok.bos_token()) << ", eos_token = " << special(tok, tok.eos_token())
            << ", mask_token = " << special(tok, tok.mask_token()) << "\n";
}

// A vision transformer reads an image, not tokens: its classes stand where the tokenizer would.
void print_vision_input(const ModelConfig& c) {
  std::cout << "input x: an 8×8 image, " << kImagePixels << " pixel intensities 0 … " << kDigitMax
            << " row by row (no tokenizer; run it with stepformer-cli classify)\n";
  std::cout << "classes: " << vit_classes(c) << " (" << c.vocab.front() << " … " << c.vocab.back()
            << "), the rows of P\n";
}

void print_json(const OpenedModel& m) {
  const Model& model = m.checkpoint.model;
  nlohmann::ordered_json j;
  j["layout"] = to_string(m.layout);
  j["checkpoint"] = m.checkpoint_path;
  j["files"] = m.files;
  j["config"] = nlohmann::ordered_json::parse(to_json(model.config));
  if (is_vision_model(model.config))
    j["classes"] = model.config.vocab;  // P's rows; the image input has no tokenizer
  else
    j["tokenizer"] = {{"describe", m.tokenizer->describe()}, {"N_V", m.tokenizer->N_V()},
                      {"bos_token", m.tokenizer->bos_token()}, {"eos_token", m.tokenizer->eos_token()},
                      {"mask_token", m.tokenizer->mask_token()}, {"pad_token", m.tokenizer->pad_token()}};
  j["parameters"] = model.theta.size();
  j["notes"] = m.notes;
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (const ParamEntry& e : model.table.entries())
    tensors.push_back({{"name", e.name}, {"symbol", e.symbol}, {"shape", e.shape()}, {"source", source_of(m, e.name)}});
  j["tensors"] = std::move(tensors);
  if (model.config.tied_unembedding) j["W_u"] = source_of(m, "W_u").empty() ? "W_u = W_eᵀ (tied)" : source_of(m, "W_u");
  std::cout << j.dump(2) << "\n";
}

int run_info(const Args& args) {
  const OpenedModel m = load_model(args.get("model"));
  if (args.has("json")) {
    print_json(m);
    return 0;
  }
  const Model& model = m.checkpoint.model;
  const Tokenizer& tok = *m.tokenizer;
  std::cout << "model: " << args.get("model") << "\n";
  std::cout << "layout: " << to_string(m.layout) << ", " << layout_title(m.layout) << "\n";
  std::cout << "files read:";
  for (const std::string& f : m.files) std::cout << " " << f;
  std::cout << "\nconfiguration: " << config_summary(model.config) << "\n";
  std::cout << "forward algorithm: " << algorithm_title(architecture(model.config).forward_algorithm()) << "\n";
  std::cout << "parameters: " << thousands(model.theta.size()) << "\n";
  if (is_vision_model(model.config))
    print_vision_input(model.config);
  else
    print_tokenizer(tok);
  if (!m.notes.empty()) {
    std::cout << "notes:\n";
    for (const std::string& n : m.notes) std::cout << "  - " << n << "\n";
  }
  std::cout << "tensors (" << model.table.entries().size() << "): name, the paper's symbol and shape, source\n";
  for (const ParamEntry& e : model.table.entries())
    std::cout << "  " << e.name << "  " << e.symbol << " ∈ " << entry_shape(e) << "  " << source_of(m, e.name) << "\n";
  if (model.config.tied_unembedding)
    std::cout << "  (W_u)  " << (source_of(m, "W_u").empty() ? "W_u = W_eᵀ (tied; no tensor of its own)" : source_of(m, "W_u"))
              << "\n";
  return 0;
}

}  // namespace

Command info_command() {
  CommandSpec s;
  s.name = "info";
  s.summary = "What a model file is: layout, configuration, tokenizer, and where each paper tensor came from.";
  s.synopsis = "--model MODEL [--json]";
  s.description =
      "Opens MODEL as every other command does (a Stepformer checkpoint, a Hugging Face GPT-2 or BERT checkpoint, "
      "a nanoGPT/minGPT state dict saved as safetensors, or a folder holding one with its config.json and "
      "tokenizer files; docs/ecosystem.md) and prints the layout it was in, the files read, the configuration in "
      "the paper's hyperparameters, the tokenizer with its special tokens, what the import ignored or defaulted, "
      "and every tensor of the paper's parameter table with its shape and its source, e.g. \"W_q for heads 1–12 ← "
      "h.0.attn.c_attn.weight[:, 0:768]ᵀ, 64 columns per head\" (slices are Python's: 0-based, end excluded).";
  s.options = {
      {"model", "MODEL", "The model to open: a .safetensors file or a folder holding one.", true},
      {"json", "", "Print one JSON object instead: layout, checkpoint, files, config, tokenizer, parameters, notes, "
                   "tensors [{name, symbol, shape, source}] (and W_u when it is tied)."},
  };
  s.examples =
      "  stepformer-cli info --model ~/models/gpt2          # config.json, vocab.json, merges.txt, model.safetensors\n"
      "  stepformer-cli info --model assets/default.safetensors --json\n";
  return {s, run_info};
}

}  // namespace sf::cli
