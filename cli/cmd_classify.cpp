// stepformer-cli classify: the vision transformer (arch "vit", not in the paper) classifies 8×8
// digits: for each image, P ← ETransformer(patches | θ) (Algorithm 9 on patch tokens) and the class
// of the largest P[:, 1] (the class token's column).
#include <Eigen/Core>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/model/error.hpp"
#include "core/training/digits.hpp"

namespace sf::cli {

namespace {

struct Classified {
  int index = 0;  // 1-based line of the file
  int predicted = 0, truth = 0;
  float p = 0;  // P[predicted, 1]
};

int run_classify(const Args& args) {
  const std::string file = args.has("digits") ? args.get("digits") : std::string(kDigitsPath);
  const int64_t first = args.get_int("first", 1, 1, 1'000'000);
  const int64_t count = args.get_int("count", 0, 0, 1'000'000);  // 0: to the end of the file
  const OpenedModel opened = load_model(args.get("model"));
  const Model& model = opened.checkpoint.model;
  if (!is_vision_model(model.config))
    throw UsageError("this model (" + architecture(model.config).title() +
                     ") does not classify images: classify needs a vision transformer (\"arch\": \"vit\"), e.g. "
                     "assets/vit-digits.safetensors");
  const std::vector<std::string> lines = read_digit_lines(file);
  if (first > static_cast<int64_t>(lines.size()))
    throw Error("--first " + std::to_string(first) + " is past the file's " + std::to_string(lines.size()) + " images");
  const int64_t end = count == 0 ? static_cast<int64_t>(lines.size())
                                 : std::min<int64_t>(static_cast<int64_t>(lines.size()), first - 1 + count);
  std::vector<Classified> out;
  int right = 0;
  for (int64_t i = first - 1; i < end; ++i) {
    const Digit d = parse_digit_line(lines[i], file + " line " + std::to_string(i + 1));
    const MatF P = architecture(model.config).forward(model, {}, d.pixels, nullptr, {}, nullptr);
    Eigen::Index best = 0;
    const float p = P.col(0).maxCoeff(&best);
    out.push_back({static_cast<int>(i + 1), static_cast<int>(best), d.label, p});
    right += best == d.label;
  }
  const double accuracy = out.empty() ? 0.0 : static_cast<double>(right) / static_cast<double>(out.size());
  if (args.has("json")) {
    nlohmann::ordered_json j;
    nlohmann::ordered_json images = nlohmann::ordered_json::array();
    for (const Classified& c : out)
      images.push_back({{"index", c.index}, {"predicted", c.predicted}, {"true", c.truth}, {"p", c.p}});
    j["images"] = std::move(images);
    j["correct"] = right;
    j["accuracy"] = accuracy;
    std::cout << j.dump() << "\n";
    return 0;
  }
  for (const Classified& c : out)
    std::cout << "image " << c.index << ": predicted " << c.predicted << " (P = " << c.p << "), true " << c.truth
              << (c.predicted == c.truth ? "" : "  ✗") << "\n";
  std::cout << "accuracy: " << right << " of " << out.size() << " = " << 100.0 * accuracy << "%\n";
  return 0;
}

}  // namespace

Command classify_command() {
  CommandSpec s;
  s.name = "classify";
  s.summary = "ViT (not in the paper): classify 8×8 digits with Algorithm 9 on patch tokens.";
  s.synopsis = "--model VIT [--digits FILE] [--first N] [--count K] [--json]";
  s.description =
      "Runs the vision transformer (arch \"vit\": Algorithm 9 on the image's p×p patches with a class token first; "
      "from the encyclopedia article and Dosovitskiy et al., not in the paper) on each image of a digits file and "
      "prints its predicted class (the largest entry of P's first column, the class token's), the true class and "
      "the accuracy. The digits are UCI's \"Optical Recognition of Handwritten Digits\" (CC BY 4.0) as Debian's "
      "python3-sklearn installs them; the held-out test set is the last 360 images (--first 1438).";
  s.options = {
      {"model", "VIT", "The checkpoint of a vision transformer (\"arch\": \"vit\"), e.g. assets/vit-digits.safetensors.",
       true},
      {"digits", "FILE",
       "Digit lines \"p_1,…,p_64,class\" (intensities 0–16, row by row), gzip-compressed or plain. Default: "
       "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz (package python3-sklearn)."},
      {"first", "N", "The first image to classify, 1-based. Default: 1."},
      {"count", "K", "How many images, from --first. Default: all to the end of the file."},
      {"json", "",
       "Print only one JSON object: {\"images\": [{\"index\": N, \"predicted\": c, \"true\": c, \"p\": P}, …], "
       "\"correct\": n, \"accuracy\": a}."},
  };
  s.examples =
      "  stepformer-cli classify --model assets/vit-digits.safetensors --first 1438 --count 360\n"
      "  stepformer-cli classify --model assets/vit-digits.safetensors --first 1438 --count 5 --json\n";
  return {s, run_classify};
}

}  // namespace sf::cli
