// Inputs that fuzz/ (libFuzzer) found crashing a reader, kept as bytes: each must now be refused with
// an sf::Error and nothing else.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/io/npy.hpp"
#include "core/model/error.hpp"

namespace test_fuzz_regressions {

namespace {

std::string temp_file(const std::string& name, const std::string& bytes) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() / ("stepformer-fuzz-regression-" + name);
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return p.string();
}

std::string npy(const std::string& header, const std::string& data) {
  std::string s = "\x93NUMPY\x01";
  s += '\0';
  s += static_cast<char>(header.size() & 0xFF);
  s += static_cast<char>(header.size() >> 8);
  return s + header + data;
}

}  // namespace

// fuzz_npy (its 75th input): the shape (2,\x80\0) made std::stol throw std::invalid_argument out of read_npy.
TEST(FuzzRegressions, NpyShapeThatIsNotNumbersIsAnError) {
  for (const std::string shape : {std::string("(2,\x80\0)", 6), std::string("(x, 2)")}) {
    const std::string p =
        temp_file("shape.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }\n", std::string(8, '\0')));
    EXPECT_THROW(sf::read_npy(p), sf::Error);
    std::filesystem::remove(p);
  }
}

// A negative or huge shape whose byte count wraps round to the data's size must not reach MatF(rows, cols).
TEST(FuzzRegressions, NpyShapeThatWrapsRoundIsAnError) {
  for (const std::string shape : {"(-1, -4)", "(4611686018427387904, 4)", "(99999999999999999999999,)", "(2, 2"}) {
    const std::string p =
        temp_file("wrap.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }\n", std::string(16, '\0')));
    EXPECT_THROW(sf::read_npy(p), sf::Error) << shape;
    std::filesystem::remove(p);
  }
  const std::string ok = temp_file("ok.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n", std::string(16, '\0')));
  EXPECT_EQ(sf::read_npy(ok).size(), 4);
  std::filesystem::remove(ok);
}

}  // namespace test_fuzz_regressions
