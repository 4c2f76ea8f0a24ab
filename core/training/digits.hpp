// The 8×8 handwritten digits (UCI "Optical Recognition of Handwritten Digits", Alpaydin & Kaynak,
// CC BY 4.0), as Debian's python3-sklearn installs them: digits.csv.gz, 1,797 lines, each 64
// intensities 0 … 16 (row by row) and the class 0 … 9 last. The vision transformer (arch "vit")
// trains on the first 1,437 images; the last 360, in the file's order, are the held-out test set,
// never used for training or for choosing the recipe.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/model/types.hpp"
#include "core/model/params.hpp"
#include "core/training/datasets.hpp"
#include "core/training/recipe.hpp"
#include "core/training/training.hpp"

namespace sf {

inline constexpr const char* kDigitsPath = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";
inline constexpr const char* kDigitsSource =
    "8×8 handwritten digits: UCI \"Optical Recognition of Handwritten Digits\" (Alpaydin & Kaynak), CC BY 4.0, "
    "as installed by Debian's python3-sklearn";
inline constexpr int kDigitsTest = 360;

struct Digit {
  Tokens pixels;  // 64 intensities 0 … 16, row by row
  int label = 0;  // the class 0 … 9
};

// Throws sf::Error unless `image` holds 64 intensities 0 … 16.
void check_image(const Tokens& image);
// One line "p_1,…,p_64,class"; `where` names it in the error ("digits.csv.gz line 7").
Digit parse_digit_line(const std::string& line, const std::string& where);
// The file's lines (gzip-compressed or plain text). Throws sf::Error naming the file, and the
// package python3-sklearn when it is the Debian path and absent.
std::vector<std::string> read_digit_lines(const std::string& path = kDigitsPath);
// Every image of the file, in its order. Throws as read_digit_lines and parse_digit_line.
std::vector<Digit> load_digits(const std::string& path = kDigitsPath);

// The training data: the first N − 360 images, of which the last n_val (in the file's order: other
// writers, as the test set has) are a validation split, the rest train. Test images never enter it.
Dataset digits_dataset(const std::vector<std::string>& lines, int n_val = 287);
// k-fold cross-validation on the first N − 360 images (the recipe was chosen so, docs/vision.md):
// they are cut into `folds` contiguous blocks (each holds other writers' digits, as the test set
// does); block `fold` (1 … folds) is the validation set, the others train. Test images never enter it.
inline constexpr int kDigitsFolds = 5;
Dataset digits_fold(const std::vector<std::string>& lines, int fold, int folds = kDigitsFolds);
// The held-out test set: the last 360 lines.
std::vector<std::string> digits_test_lines(const std::vector<std::string>& lines);

// NOT in the paper (augmentation): the digit line with its image moved dx pixels right and dy down
// (negative: left, up), the pixels moved in from outside the image 0, the class unchanged.
std::string shift_digit_line(const std::string& line, int dx, int dy);
// NOT in the paper (augmentation): `lines` and each of them moved by every (dx, dy) with
// |dx|, |dy| ≤ shift, (2·shift + 1)² lines per image; shift = 0: `lines` unchanged.
std::vector<std::string> shifted_digit_lines(const std::vector<std::string>& lines, int shift);

// The vision transformer's recipe: the Recipe ("vit-digits": its configuration, arch "vit", vocab
// "0" … "9", and the practical mode's settings) and what its training adds that Algorithm 12 does
// not have, all chosen by cross-validation (digits_fold; docs/vision.md gives the accuracy and time).
struct DigitsRecipe {
  Recipe recipe;
  int shift = 0;  // the training images also appear moved by up to this many pixels (shifted_digit_lines)
};
inline constexpr const char* kDigitsRecipe = "vit-digits";
DigitsRecipe digits_recipe();
// Trains a fresh model (seed) of the recipe on `data` (digits_dataset or digits_fold), its training
// images shifted as r.shift says, for r.recipe.options.steps updates; the validation images are
// never shifted nor evaluated here. `each`, when given, is called after every update.
using DigitsProgress = std::function<void(const Trainer&, const StepInfo&)>;
Model train_digits(const DigitsRecipe& r, Dataset data, uint64_t seed = 1, const DigitsProgress& each = {});
// The fraction of `lines` (digit lines) whose predicted class (argmax of P[:, 1]) is their class.
double digits_accuracy(const Model& m, const std::vector<std::string>& lines);

}  // namespace sf
