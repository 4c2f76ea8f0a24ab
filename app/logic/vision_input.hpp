// The image a vision transformer (arch "vit", not in the paper: Dosovitskiy et al.; core/arch/vit.hpp)
// reads as its input x: one of the held-out test digits (the last 360 images of the digits file,
// digits_test_lines; 1-based in the UI) or one drawn by hand. The Session holds one and traces
// Algorithm 9 on its pixels instead of the prompt's tokens. Headless (tests and the fuzzer use it).
#pragma once
#include <string>
#include <vector>

#include "core/arch/vit.hpp"
#include "core/training/digits.hpp"

namespace sf {

class VisionInput {
 public:
  // The digits file the test set is read from, the first time it is needed (tests point it elsewhere).
  std::string digits_path = kDigitsPath;

  // 64 intensities 0 … 16, row by row (all 0 until something is chosen).
  const Tokens& pixels() const { return pixels_; }
  // The test digit shown (1 … 360), 0 when the image was drawn (or edited after being picked).
  int test_index() const { return test_index_; }
  // The test digit's class 0 … 9; −1 for a drawn image.
  int true_class() const;
  // How many test digits there are: 360, or 0 when the digits file cannot be read (data_error says why).
  int test_count() const;
  const std::string& data_error() const;
  const std::vector<Digit>& test_digits() const;

  // The first image for a freshly opened vit: test digit 1, or a blank drawn image without the file.
  // Keeps whatever was chosen before.
  void choose_default();
  // Test digit n (1-based). False with `error` outside 1 … test_count() or without the file.
  bool select_test(int n, std::string& error);
  // A drawn image: false with `error` unless it holds 64 intensities 0 … 16 (check_image).
  bool set_pixels(const Tokens& pixels, std::string& error);
  // Pixel (row r, column c, both 1-based) set to v (0 … 16); the image becomes a drawn one.
  bool set_pixel(int r, int c, int v, std::string& error);
  // A blank drawn image.
  void clear();

 private:
  void load() const;
  Tokens pixels_ = Tokens(kImagePixels, 0);
  int test_index_ = 0;
  bool chosen_ = false;
  mutable bool loaded_ = false;
  mutable std::vector<Digit> test_;
  mutable std::string data_error_;
};

}  // namespace sf
