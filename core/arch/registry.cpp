// The architectures Stepformer knows, in the order the app lists them. A new architecture is
// its own files plus one line here.
#include "core/arch/bert.hpp"
#include "core/arch/ed.hpp"
#include "core/arch/gpt.hpp"
#include "core/arch/vit.hpp"
#include "core/model/error.hpp"

namespace sf {

const std::vector<const Architecture*>& all_architectures() {
  static const GptArchitecture gpt;
  static const BertArchitecture bert;
  static const EdArchitecture ed;
  static const VitArchitecture vit;
  static const std::vector<const Architecture*> all{&gpt, &bert, &ed, &vit};
  return all;
}

const Architecture* find_architecture(const std::string& name) {
  for (const Architecture* a : all_architectures())
    if (a->name() == name) return a;
  return nullptr;
}

const Architecture& architecture(const std::string& name) {
  if (const Architecture* a = find_architecture(name)) return *a;
  std::string known;
  for (const Architecture* a : all_architectures()) known += (known.empty() ? "\"" : ", \"") + a->name() + "\"";
  throw Error("unknown architecture \"" + name + "\" (known: " + known + ")");
}

const Architecture& architecture(const ModelConfig& c) { return architecture(c.arch); }

}  // namespace sf
