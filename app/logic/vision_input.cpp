#include "app/logic/vision_input.hpp"

#include "core/arch/vit.hpp"
#include "core/model/error.hpp"

namespace sf {

void VisionInput::load() const {
  if (loaded_) return;
  loaded_ = true;
  try {
    const std::vector<std::string> lines = read_digit_lines(digits_path);
    const std::vector<std::string> test = digits_test_lines(lines);
    for (size_t i = 0; i < test.size(); ++i)
      test_.push_back(parse_digit_line(test[i], "test digit " + std::to_string(i + 1)));
  } catch (const std::exception& e) {
    test_.clear();
    data_error_ = e.what();
  }
}

const std::vector<Digit>& VisionInput::test_digits() const {
  load();
  return test_;
}

int VisionInput::test_count() const { return static_cast<int>(test_digits().size()); }

const std::string& VisionInput::data_error() const {
  load();
  return data_error_;
}

int VisionInput::true_class() const {
  return test_index_ > 0 ? test_digits()[static_cast<size_t>(test_index_ - 1)].label : -1;
}

void VisionInput::choose_default() {
  if (chosen_) return;
  std::string ignored;  // no file: the blank image stays, and the Vision tab says why (data_error)
  if (!select_test(1, ignored)) clear();
}

bool VisionInput::select_test(int n, std::string& error) {
  const int count = test_count();
  if (count == 0) {
    error = "no test digits: " + data_error() + " (draw a digit instead)";
    return false;
  }
  if (n < 1 || n > count) {
    error = "a test digit is 1 … " + std::to_string(count) + "; " + std::to_string(n) + " is not";
    return false;
  }
  pixels_ = test_[static_cast<size_t>(n - 1)].pixels;
  test_index_ = n;
  chosen_ = true;
  return true;
}

bool VisionInput::set_pixels(const Tokens& pixels, std::string& error) {
  try {
    check_image(pixels);
  } catch (const Error& e) {
    error = e.what();
    return false;
  }
  pixels_ = pixels;
  test_index_ = 0;
  chosen_ = true;
  return true;
}

bool VisionInput::set_pixel(int r, int c, int v, std::string& error) {
  if (r < 1 || r > kImageSide || c < 1 || c > kImageSide) {
    error = "a pixel's row and column are 1 … 8";
    return false;
  }
  Tokens next = pixels_.empty() ? Tokens(kImagePixels, 0) : pixels_;  // nothing chosen yet: a blank image
  next[static_cast<size_t>((r - 1) * kImageSide + (c - 1))] = v;
  return set_pixels(next, error);
}

void VisionInput::clear() {
  pixels_.assign(kImagePixels, 0);
  test_index_ = 0;
  chosen_ = true;
}

}  // namespace sf
