#include "core/io/model_files.hpp"

#include <filesystem>

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

OpenedModel open_model(const std::string& path) {
  std::string file = path;
  if (fs::is_directory(path)) {
    file = (fs::path(path) / "model.safetensors").string();
    if (!fs::exists(file)) throw Error("the folder " + path + " has no model.safetensors");
  }
  OpenedModel m{load_checkpoint(file), nullptr};
  m.checkpoint_path = file;
  m.dir = fs::path(file).parent_path().string();
  m.files = {file};
  m.tokenizer = make_tokenizer(m.checkpoint.model.config, m.dir);
  return m;
}

}  // namespace sf
