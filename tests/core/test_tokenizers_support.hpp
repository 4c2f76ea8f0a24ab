// Shared by tests/core/test_tokenizers*.cpp: the test data, a scratch folder, writing files, and
// expecting an sf::Error whose message holds given words.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>

#include "core/model/error.hpp"

namespace sf::test {

inline std::filesystem::path tokenizer_data() { return std::filesystem::path(STEPFORMER_TEST_DATA) / "tokenizers"; }

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot read " << p;
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void write_all(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

// A fresh folder under the system's temporary directory, removed at the end of the test.
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& name) {
    path = std::filesystem::temp_directory_path() / ("stepformer-" + name + "-" + std::to_string(getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  std::filesystem::path operator/(const std::string& n) const { return path / n; }
};

// Runs f; it must throw sf::Error with every one of `words` in its message.
inline void expect_error(const std::function<void()>& f, std::initializer_list<std::string> words) {
  try {
    f();
    ADD_FAILURE() << "no sf::Error was thrown (expected one mentioning \"" << *words.begin() << "\")";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const std::string& w : words) EXPECT_NE(msg.find(w), std::string::npos) << "\"" << w << "\" is not in: " << msg;
  }
}

}  // namespace sf::test
