// The font of exported figures: DejaVu Sans, the one the app draws with (gui_support.cpp), read
// with stb_truetype so that figures are laid out and rasterised without a window.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sf {

class FigureFont {
 public:
  // The app's font (throws sf::Error naming the package to install when it is missing).
  static const FigureFont& sans();
  explicit FigureFont(std::string ttf_bytes);
  // Width of `s` (UTF-8) at `px` pixels; its ascent (baseline below the top of the line).
  float width(const std::string& s, float px) const;
  float ascent(float px) const;
  // Draws `s` with its top-left at (x, y) into the alpha mask `a` (w × h, 0–255, max-combined).
  void draw(std::vector<uint8_t>& a, int w, int h, float x, float y, const std::string& s, float px) const;
  // `s` cut to at most max_w pixels, ending in "…" when cut (whole UTF-8 characters).
  std::string fit(const std::string& s, float px, float max_w) const;

 private:
  std::string ttf_;
  struct Info;
  std::shared_ptr<Info> info_;
};

// The code points of UTF-8 text (a malformed byte is U+FFFD).
std::vector<uint32_t> utf8_codepoints(const std::string& s);

}  // namespace sf
