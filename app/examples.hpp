// The bundled example models (File › Examples), listed in assets/examples.json:
// [{"file": "default.safetensors", "title": "…", "prompt": "…", "context": "…"}, …].
#pragma once
#include <string>
#include <vector>

namespace sf {

struct ExampleModel {
  std::string file;     // relative to the assets folder
  std::string title;
  std::string prompt;
  std::string context;  // "" for models without a context
  bool built = false;   // whether the file exists
  std::string path() const;
};

// Reads assets/examples.json; an empty list with `error` set when it cannot be read.
std::vector<ExampleModel> load_examples(std::string& error);

}  // namespace sf
