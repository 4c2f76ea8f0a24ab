// Inputs that fuzz/ (libFuzzer) found crashing a reader, kept as bytes: each must now be refused with
// an sf::Error and nothing else. And the fuzzers' seeds: they must stay readable, or a fuzzer starts
// from inputs its reader refuses at once.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/io/npy.hpp"
#include "core/io/session_file.hpp"
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

// fuzz_session's seeds (fuzz/corpus/fuzz_session/) are all valid sessions or lessons, and between them
// they set the reader's newer fields (issues 22–26): a vit's image, a training run, a backward-pass
// cursor with its caller, the flash listing (alg 104, not in the paper), top-p and the paged KV cache,
// a stop's focus and image. Mutating a valid file that has a field reaches that field's checks.
TEST(FuzzSeeds, SessionSeedsAreReadAndReachTheNewerFields) {
  const std::filesystem::path dir = std::filesystem::path(STEPFORMER_TEST_DATA) / ".." / ".." / "fuzz" / "corpus" / "fuzz_session";
  int files = 0, lessons = 0;
  bool image = false, training = false, backward = false, caller = false, flash = false, top_p = false, paged = false,
       focus = false, stop_image = false;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    SCOPED_TRACE(e.path().string());
    sf::SessionFile f;
    ASSERT_NO_THROW(f = sf::load_session(e.path().string()));
    ++files;
    lessons += f.is_lesson();
    const sf::SessionState& s = f.state;
    image |= s.image.has_value();
    training |= s.run.kind == "training";
    top_p |= s.sampling.top_p < 1.0 || s.translation.top_p < 1.0;
    paged |= s.sampling.paged;
    std::vector<sf::CursorRef> cursors = {s.cursor};
    for (const sf::LessonStop& st : f.stops) {
      cursors.push_back(st.cursor);
      focus |= !st.focus.empty();
      stop_image |= st.image.has_value();
    }
    for (const sf::CursorRef& c : cursors) {
      backward |= c.pass == sf::Pass::Backward;
      caller |= c.caller.has_value() && !c.caller->none();
      flash |= c.alg == 104;
    }
  }
  EXPECT_GE(files, 13);
  EXPECT_GE(lessons, 12);
  EXPECT_TRUE(image);
  EXPECT_TRUE(training);
  EXPECT_TRUE(backward);
  EXPECT_TRUE(caller);
  EXPECT_TRUE(flash);
  EXPECT_TRUE(top_p);
  EXPECT_TRUE(paged);
  EXPECT_TRUE(focus);
  EXPECT_TRUE(stop_image);
}

}  // namespace test_fuzz_regressions
