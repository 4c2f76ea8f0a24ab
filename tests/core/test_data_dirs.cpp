// Where the programs find their data (core/about/data_dirs.hpp) and what --version prints
// (core/about/build_info.hpp): the rule for every kind of executable, this process's own answer, and
// the CLI's --version and demo following $STEPFORMER_DATA_DIR. scripts/package_test.sh checks the
// installed programs (/usr/bin → /usr/share/stepformer).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/about/build_info.hpp"
#include "core/about/data_dirs.hpp"
#include "tests/core/test_cli_support.hpp"

namespace test_data_dirs {

namespace fs = std::filesystem;
using sf::BuildInfo;
using sf::data_root_for;

namespace {

// A build made in /src/stepformer/build from the source tree /src/stepformer.
BuildInfo build_in(const char* source, const char* binary) {
  return BuildInfo{"9.9.9", "Release", "-march=x86-64-v2", "GNU 12.2.0", true, source, binary};
}

}  // namespace

TEST(DataDirs, AnInstalledProgramReadsItsPrefixShare) {
  const BuildInfo b = build_in("/src/stepformer", "/src/stepformer/build");
  const auto usr = data_root_for("/usr/bin/stepformer", nullptr, b);
  EXPECT_EQ(usr.path, "/usr/share/stepformer");
  EXPECT_EQ(usr.found_by, "the installed prefix");
  EXPECT_EQ(data_root_for("/opt/sf/bin/stepformer-cli", nullptr, b).path, "/opt/sf/share/stepformer");
}

TEST(DataDirs, AProgramInItsBuildTreeReadsTheSourceTree) {
  const BuildInfo b = build_in("/src/stepformer", "/src/stepformer/build");
  for (const char* exe : {"/src/stepformer/build/app/stepformer", "/src/stepformer/build/stepformer-cli",
                          "/src/stepformer/build/tests/core_tests"}) {
    const auto r = data_root_for(exe, nullptr, b);
    EXPECT_EQ(r.path, "/src/stepformer") << exe;
    EXPECT_EQ(r.found_by, "the build tree") << exe;
  }
}

TEST(DataDirs, AFolderBesideTheBuildTreeIsNotInsideIt) {
  // build-pkg starts with "build" but is another tree: a string prefix test would take it for the build.
  const BuildInfo b = build_in("/src/stepformer", "/src/stepformer/build");
  const auto r = data_root_for("/src/stepformer/build-pkg/stepformer", nullptr, b);
  EXPECT_EQ(r.found_by, "the installed prefix");
  EXPECT_EQ(r.path, "/src/stepformer/share/stepformer");
}

TEST(DataDirs, TheEnvironmentVariableWinsWhenNotEmpty) {
  const BuildInfo b = build_in("/src/stepformer", "/src/stepformer/build");
  for (const char* exe : {"/usr/bin/stepformer", "/src/stepformer/build/app/stepformer"}) {
    const auto r = data_root_for(exe, "/home/teacher/stepformer-data", b);
    EXPECT_EQ(r.path, "/home/teacher/stepformer-data") << exe;
    EXPECT_EQ(r.found_by, "STEPFORMER_DATA_DIR") << exe;
    EXPECT_EQ(data_root_for(exe, "", b).found_by, data_root_for(exe, nullptr, b).found_by) << exe;
  }
}

TEST(DataDirs, ThisTestReadsItsSourceTree) {
  if (std::getenv("STEPFORMER_DATA_DIR")) GTEST_SKIP() << "STEPFORMER_DATA_DIR is set";
  EXPECT_EQ(sf::data_root().found_by, "the build tree");
  EXPECT_EQ(sf::data_root().path, sf::build_info().source_dir);
  EXPECT_TRUE(fs::is_regular_file(sf::data_path("assets") + "/default.safetensors"));
}

TEST(Version, NamesTheVersionTheBuildAndTheDataFolder) {
  const std::string text = sf::version_text("stepformer");
  const BuildInfo& b = sf::build_info();
  EXPECT_EQ(text.substr(0, text.find('\n')), std::string("stepformer ") + b.version);
  EXPECT_NE(std::string(b.version).find('.'), std::string::npos) << b.version;
  for (const std::string line : {std::string("build type: ") + b.build_type, std::string("compiler: ") + b.compiler,
                                 std::string("Eigen: 3."), std::string("GPU compute shaders: "),
                                 "data: " + sf::data_root().path + " (from " + sf::data_root().found_by + ")"})
    EXPECT_NE(text.find("\n" + line), std::string::npos) << line << "\n" << text;
}

#ifdef STEPFORMER_CLI
namespace {

// Sets STEPFORMER_DATA_DIR for one scope (the CLI run by system() inherits it).
struct DataDirOverride {
  explicit DataDirOverride(const fs::path& dir) { setenv("STEPFORMER_DATA_DIR", dir.c_str(), 1); }
  ~DataDirOverride() { unsetenv("STEPFORMER_DATA_DIR"); }
};

struct DataDirCli : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("stepformer_data_dir_test_" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir / "data" / "assets"); }
  void TearDown() override { fs::remove_all(dir); }
};

}  // namespace

TEST_F(DataDirCli, VersionPrintsTheBuildAndTheDataFolderInUse) {
  const auto r = sf::test::run_cli(dir, {"--version"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, sf::version_text("stepformer-cli"));
  const DataDirOverride env(dir / "data");
  EXPECT_EQ(sf::test::line_after(sf::test::run_cli(dir, {"--version"}).out, "data: "),
            (dir / "data").string() + " (from STEPFORMER_DATA_DIR)");
}

TEST_F(DataDirCli, TheDemoReadsTheDefaultModelFromTheDataFolder) {
  const fs::path model = dir / "data" / "assets" / "default.safetensors";
  fs::copy_file(sf::data_path("assets") + "/default.safetensors", model);
  const DataDirOverride env(dir / "data");
  const auto with_model = sf::test::run_cli(dir, {"demo"});
  ASSERT_EQ(with_model.status, 0) << with_model.err;
  EXPECT_EQ(sf::test::line_after(with_model.out, "model: "), model.string());
  // Without the file the demo says it runs the untrained default configuration.
  fs::remove(model);
  const auto without = sf::test::run_cli(dir, {"demo"});
  ASSERT_EQ(without.status, 0) << without.err;
  EXPECT_EQ(sf::test::line_after(without.out, "model: "),
            "the default configuration, initialised with seed 1 (untrained)");
}
#endif

}  // namespace test_data_dirs
