// Opening a model from disk: a Stepformer checkpoint, or a checkpoint from the ecosystem
// (Hugging Face GPT-2 and BERT, nanoGPT/minGPT state dicts, as safetensors) with its
// config.json and tokenizer files, mapped onto the paper's parameter names (docs/ecosystem.md).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/io/checkpoint.hpp"
#include "core/tokenizers/tokenizer.hpp"

namespace sf {

// Which layout the checkpoint's tensors were in.
enum class Layout { Stepformer, HfGpt2, NanoGpt, HfBert };
const char* to_string(Layout l);  // "stepformer", "hf-gpt2", "nanogpt", "hf-bert"

struct OpenedModel {
  Checkpoint checkpoint;                 // the model under the paper's names (+ metadata, extras)
  std::unique_ptr<Tokenizer> tokenizer;  // from the configuration or the folder's tokenizer files
  Layout layout = Layout::Stepformer;
  std::string checkpoint_path;           // the safetensors file read
  std::string dir;                       // the folder of its config.json and tokenizer files
  std::vector<std::string> files;        // every file read, checkpoint first
  // Paper tensor name (the table's, e.g. "layer1.attn.W_q") → where its values came from, e.g.
  // "W_q for heads 1–12 ← h.0.attn.c_attn.weight[:, 0:768]ᵀ". Empty for a Stepformer checkpoint.
  std::map<std::string, std::string> provenance;
};

// Opens `path`: a .safetensors file, or a folder holding one (model.safetensors, or the only
// .safetensors file in it). A Stepformer checkpoint carries its configuration; an ecosystem
// checkpoint needs config.json beside it (Hugging Face's keys) and, for its tokenizer, the
// tokenizer files of docs/ecosystem.md. Throws sf::Error with a message naming the file at fault
// and the fix (e.g. "vocab.json has 50257 entries, the checkpoint's wte has 50304 rows").
OpenedModel open_model(const std::string& path);

}  // namespace sf
