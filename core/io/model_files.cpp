// open_model: which file, which layout, then a Stepformer checkpoint or an ecosystem import with
// its config.json and tokenizer (core/io/model_files.hpp, docs/ecosystem.md).
#include "core/io/model_files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/io/ecosystem.hpp"
#include "core/io/gpt_vocabulary.hpp"
#include "core/io/hf_config.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace fs = std::filesystem;

const char* to_string(Layout l) {
  switch (l) {
    case Layout::Stepformer: return "stepformer";
    case Layout::HfGpt2: return "hf-gpt2";
    case Layout::NanoGpt: return "nanogpt";
    case Layout::HfBert: return "hf-bert";
  }
  return "stepformer";
}

namespace {

// The one command that turns a PyTorch pickle into safetensors (run where PyTorch and the
// safetensors package are installed). clone() unties shared tensors, which save_file refuses. For
// a nanoGPT checkpoint it also writes config.json beside `out`: the sizes from its model_args
// (when there is no config.json yet) and the vocabulary as "itos" from meta.pkl, looked for beside
// the pickle and where nanoGPT's sample.py looks (data/DATASET/meta.pkl). Tested by
// tests/reference/test_conversion_command.py.
std::string conversion_command(const std::string& pickle, const std::string& out) {
  const std::string cfg = (fs::path(out).parent_path() / "config.json").string();
  const std::string meta = (fs::path(pickle).parent_path() / "meta.pkl").string();
  return "python3 -c \"import json, os, pickle, torch; from safetensors.torch import save_file; "
         "ck = torch.load('" + pickle + "', map_location='cpu'); sd = ck.get('model', ck); "
         "save_file({k.removeprefix('_orig_mod.'): v.clone().contiguous() for k, v in sd.items()}, '" + out + "'); "
         "a = ck.get('model_args', {}); cfg = json.load(open('" + cfg + "')) if os.path.exists('" + cfg + "') else "
         "({'model_type': 'gpt2', 'n_layer': a['n_layer'], 'n_head': a['n_head'], 'n_embd': a['n_embd'], "
         "'n_positions': a['block_size'], 'vocab_size': a['vocab_size'], 'activation_function': 'gelu'} if a else {}); "
         "meta = next((p for p in ['" + meta + "', os.path.join('data', str(ck.get('config', {}).get('dataset')), 'meta.pkl')] "
         "if os.path.exists(p)), None); "
         "cfg.update({'itos': [m['itos'][i] for i in range(len(m['itos']))]} if meta and (m := pickle.load(open(meta, 'rb'))) else {}); "
         "cfg and json.dump(cfg, open('" + cfg + "', 'w'), indent=1)\"";
}

[[noreturn]] void refuse_pickle(const std::string& path) {
  const std::string out = (fs::path(path).parent_path() / "model.safetensors").string();
  throw Error(path + " is a PyTorch pickle; Stepformer never reads pickles (loading one can run any code it holds). "
              "Convert it to safetensors: " + conversion_command(path, out));
}

// A zip archive (torch.save since PyTorch 1.6) or a protocol-2+ pickle, by its first bytes; a
// safetensors file, whose JSON header starts at byte 8 with '{', never is.
bool looks_like_pickle(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char head[9] = {};
  f.read(head, sizeof head);
  const std::string magic(head, static_cast<size_t>(f.gcount()));
  if (magic.size() == 9 && magic[8] == '{') return false;
  return magic.rfind("PK\x03\x04", 0) == 0 ||
         (magic.size() >= 2 && static_cast<unsigned char>(magic[0]) == 0x80 && magic[1] >= 2 && magic[1] <= 5);
}

// A safetensors file by its first bytes: an 8-byte little-endian header length that fits in the
// file, then the JSON header's '{'. A text file (README.md) or an image never is.
bool looks_like_safetensors(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  const auto size = static_cast<uint64_t>(std::max<std::streamoff>(f.tellg(), 0));
  f.seekg(0);
  unsigned char head[9] = {};
  f.read(reinterpret_cast<char*>(head), sizeof head);
  if (f.gcount() != sizeof head) return false;
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{head[i]} << (8 * i);
  return n <= size - 8 && head[8] == '{';
}

// The checkpoint file a path names: the file itself, or a folder's model.safetensors or only
// .safetensors file.
std::string checkpoint_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(path + " does not exist");
  if (!fs::is_directory(path, ec)) {
    const std::string ext = fs::path(path).extension().string();
    if (ext == ".bin" || ext == ".pt" || ext == ".pth" || ext == ".ckpt" || ext == ".pkl" || looks_like_pickle(path))
      refuse_pickle(path);
    // A file named *.safetensors that fails to parse gets the reader's exact reason (truncated,
    // damaged); any other file opened by mistake gets plain words.
    if (ext != ".safetensors" && !looks_like_safetensors(path))
      throw Error(fs::path(path).filename().string() + " is not a model: Stepformer opens .safetensors files or "
                  "model folders. Choose a .safetensors file, or the folder that holds model.safetensors.");
    return path;
  }
  const fs::path dir(path);
  if (fs::exists(dir / "model.safetensors", ec)) return (dir / "model.safetensors").string();
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".safetensors") found.push_back(entry.path().filename().string());
  std::sort(found.begin(), found.end());
  if (found.size() == 1) return (dir / found[0]).string();
  if (found.size() > 1) {
    std::string list;
    for (const std::string& f : found) list += (list.empty() ? "" : ", ") + f;
    throw Error("the folder " + path + " holds several .safetensors files (" + list +
                "): open one of them; a checkpoint sharded over several files is not supported");
  }
  for (const char* pickle : {"pytorch_model.bin", "ckpt.pt", "model.pt"})
    if (fs::exists(dir / pickle, ec)) refuse_pickle((dir / pickle).string());
  throw Error("the folder " + path + " holds no .safetensors file: download model.safetensors from the model's "
              "Hugging Face page into it");
}

// The layout, from the tensor names.
Layout detect_layout(const SafetensorsFile& file) {
  // A Stepformer checkpoint has its configuration; one without it is still told by W_e, so that
  // its own reader says what is missing.
  if ((file.has_metadata() && file.metadata().count("config")) || file.find("W_e")) return Layout::Stepformer;
  const std::string p = file.find("transformer.wte.weight") ? "transformer." : "";
  if (const SafeTensor* wte = file.find(p + "wte.weight")) {
    const SafeTensor* qkv = file.find(p + "h.0.attn.c_attn.weight");
    if (!qkv) throw Error(file.name() + ": it has " + wte->name + " but no " + p + "h.0.attn.c_attn.weight; not a GPT-2 checkpoint Stepformer can read");
    const int64_t C = wte->shape.size() == 2 ? wte->shape[1] : -1;
    if (qkv->shape == std::vector<int64_t>{C, 3 * C}) return Layout::HfGpt2;  // Conv1D [in, out]
    if (qkv->shape == std::vector<int64_t>{3 * C, C}) return Layout::NanoGpt;  // nn.Linear [out, in]
    throw Error(file.name() + ": tensor \"" + qkv->name + "\" has shape " + shape_string(qkv->shape) + " but " +
                shape_string({C, 3 * C}) + " (Hugging Face's Conv1D) or " + shape_string({3 * C, C}) +
                " (nanoGPT's nn.Linear) is expected, with n_embd = " + std::to_string(C) + " from " + wte->name);
  }
  if (file.find("bert.embeddings.word_embeddings.weight")) return Layout::HfBert;
  if (file.find("embeddings.word_embeddings.weight"))
    throw Error(file.name() + ": this is a BERT without its masked-LM head (a BertModel: no \"bert.\" prefix, no "
                              "cls.predictions.*); Algorithm 9 needs the head: download the weights of a "
                              "BertForMaskedLM or BertForPreTraining model");
  std::string names;
  int shown = 0;
  for (const auto& [name, t] : file.tensors())
    if (shown++ < 4) names += (names.empty() ? "" : ", ") + name;
  throw Error(file.name() + ": the tensors (" + (names.empty() ? "none" : names + ", …") +
              ") are in no layout Stepformer knows: a Stepformer checkpoint (W_e, … with __metadata__.config), "
              "Hugging Face GPT-2 (wte.weight, h.0.attn.c_attn.weight, …), a nanoGPT/minGPT state dict "
              "(transformer.wte.weight, transformer.h.0.attn.c_attn.weight, lm_head.weight) or Hugging Face BERT "
              "(bert.embeddings.word_embeddings.weight, …, cls.predictions.*); see docs/ecosystem.md");
}

// The file holding a BERT tokenizer's vocabulary, in load_tokenizer_files' order (for messages).
std::string vocabulary_file(const std::string& dir) {
  for (const char* name : {"vocab.txt", "tokenizer.json"})
    if (fs::exists(fs::path(dir) / name)) return name;
  return "the tokenizer";
}

// The tokenizer of an ecosystem checkpoint (GPT layouts: gpt_vocabulary's sources; BERT: its
// WordPiece files), its special tokens written into the configuration; a file it read is added to
// `files`.
std::unique_ptr<Tokenizer> ecosystem_tokenizer(TensorImport& im, const HfConfig& cfg, const std::string& dir, bool bert,
                                               std::vector<std::string>& files) {
  ModelConfig& c = im.config;
  const int rows = c.N_V();
  GptVocabulary v;
  if (bert) {
    v.tokenizer = make_tokenizer(c, dir);
    v.source = vocabulary_file(dir);
  } else {
    v = gpt_vocabulary(dir, cfg, rows);
  }
  std::unique_ptr<Tokenizer>& tok = v.tokenizer;
  if (!v.file.empty()) files.push_back(v.file);
  if (tok->N_V() > rows)
    throw Error((fs::path(dir) / v.source).string() + " has " + std::to_string(tok->N_V()) + " entries, the checkpoint's " + im.vocab_tensor + " has " +
                std::to_string(rows) + " rows: the vocabulary belongs to another model (use the one from the checkpoint's own page)");
  if (tok->N_V() < rows)
    im.notes.push_back(v.source + " has " + std::to_string(tok->N_V()) + " entries and " + im.vocab_tensor + " " +
                       std::to_string(rows) + " rows: ids " + std::to_string(tok->N_V() + 1) + "–" + std::to_string(rows) +
                       " have no piece (a vocabulary padded for speed, as nanoGPT's 50304)");
  // The model's own special tokens (paper id = file id + 1); the paper's defaults where it has none.
  c.bos_id = tok->bos_token();
  c.eos_id = tok->eos_token();
  c.mask_id = tok->mask_token() > 0 ? tok->mask_token() : -1;
  c.pad_id = tok->pad_token();
  if (!v.note.empty())
    im.notes.push_back(v.note);
  else if (tok->bos_token() == 0)
    im.notes.push_back("the tokenizer has no begin/end token (<|endoftext|> or [CLS], [SEP]): a prompt is read with "
                       "none added, and bos_token and eos_token are the paper's N_V − 1 and N_V");
  return std::move(tok);
}

}  // namespace

OpenedModel open_model(const std::string& path) {
  const std::string file = checkpoint_file(path);
  const SafetensorsFile st = SafetensorsFile::open(file);
  const std::string dir = fs::path(file).has_parent_path() ? fs::path(file).parent_path().string() : ".";
  const Layout layout = detect_layout(st);
  if (layout == Layout::Stepformer) {
    OpenedModel m{read_checkpoint(st), nullptr, layout, file, dir, {file}, {}, {}};
    m.tokenizer = make_tokenizer(m.checkpoint.model.config, dir);
    return m;
  }
  const HfConfig cfg = HfConfig::load(dir);
  TensorImport im = layout == Layout::HfBert ? plan_bert(st, cfg) : plan_gpt2(st, cfg, layout == Layout::HfGpt2);
  std::vector<std::string> files{file, cfg.path()};
  std::unique_ptr<Tokenizer> tok = ecosystem_tokenizer(im, cfg, dir, layout == Layout::HfBert, files);
  if (const std::string why = validate(im.config); !why.empty())
    throw Error(file + ": the model's special tokens do not fit: " + why);
  return OpenedModel{Checkpoint{im.run(), {}, {}}, std::move(tok), layout, file, dir, std::move(files),
                     im.provenance(), std::move(im.notes)};
}

}  // namespace sf
