#include "app/examples.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/session.hpp"

namespace sf {

std::string ExampleModel::path() const { return assets_dir() + "/" + file; }

std::vector<ExampleModel> load_examples(std::string& error) {
  std::vector<ExampleModel> out;
  const std::string path = assets_dir() + "/examples.json";
  std::ifstream in(path);
  if (!in) {
    error = "cannot read " + path;
    return out;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    for (const auto& e : j) {
      ExampleModel m;
      m.file = e.at("file").get<std::string>();
      m.title = e.value("title", m.file);
      m.prompt = e.value("prompt", "");
      m.context = e.value("context", "");
      m.built = std::filesystem::exists(m.path());
      out.push_back(std::move(m));
    }
  } catch (const std::exception& ex) {
    error = path + ": " + ex.what();
    out.clear();
  }
  return out;
}

}  // namespace sf
