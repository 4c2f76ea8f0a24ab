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
  // "W_q for heads 1–12 ← h.0.attn.c_attn.weight[:, 0:768]ᵀ, 64 columns per head"; a tied W_u has
  // an entry too ("W_u = W_eᵀ (tied to wte.weight)"). Empty for a Stepformer checkpoint.
  std::map<std::string, std::string> provenance;
  // For people: what the import ignored, defaulted or padded (e.g. "ignored: the attn.bias
  // buffers …", "ids 50258–50304 have no piece in vocab.json …"). Empty for a Stepformer checkpoint.
  std::vector<std::string> notes;
};

// Opens `path`: a .safetensors file, or a folder holding one (model.safetensors, or the only
// .safetensors file in it); PyTorch pickles (pytorch_model.bin, *.pt) are refused, never read, with
// the command that converts them. The layout is told by the tensor names: a Stepformer checkpoint
// carries its configuration; an ecosystem checkpoint needs config.json beside it (Hugging Face's
// keys) and, for its tokenizer, the tokenizer files of docs/ecosystem.md. Paper ids are the files'
// 0-based ids + 1. Throws sf::Error with a message naming the file at fault and the fix (e.g.
// "vocab.json has 50257 entries, the checkpoint's wte.weight has 50000 rows"); nothing else changes.
OpenedModel open_model(const std::string& path);

}  // namespace sf
