// Running the built stepformer-cli (path in STEPFORMER_CLI) from a test: its arguments quoted for
// /bin/sh, stdout and stderr captured separately into files of a temporary directory, and the
// one-line error contract every failure keeps. Shared by tests/core/test_cli*.cpp.
#pragma once
#ifdef STEPFORMER_CLI

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sf::test {

struct CliResult {
  int status = -1;  // exit status (or -1 when the program did not exit normally)
  std::string out, err;
  std::vector<std::string> out_lines() const { return split(out); }
  std::vector<std::string> err_lines() const { return split(err); }
  static std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> lines;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }
};

inline std::string sh_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q.append("'\\''");
    else
      q.push_back(c);
  }
  q.push_back('\'');
  return q;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs stepformer-cli with these arguments; its stdout and stderr go through files in `dir`.
inline CliResult run_cli(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  std::string cmd = sh_quote(STEPFORMER_CLI);
  for (const auto& a : args) cmd.append(" ").append(sh_quote(a));
  const std::filesystem::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  cmd.append(" >").append(sh_quote(out.string())).append(" 2>").append(sh_quote(err.string())).append(" </dev/null");
  const int raw = std::system(cmd.c_str());
  CliResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// The one-line error contract: exit status `status`, nothing on stdout, one line on stderr
// starting "stepformer-cli: error: " with a message after it. Returns that line.
inline std::string expect_one_line_error(const CliResult& r, int status, const std::string& shown) {
  EXPECT_EQ(r.status, status) << shown << "\n" << r.err;
  EXPECT_EQ(r.out, "") << shown;
  const auto lines = r.err_lines();
  EXPECT_EQ(lines.size(), 1u) << shown << "\n" << r.err;
  if (lines.empty()) return "";
  EXPECT_EQ(lines[0].rfind("stepformer-cli: error: ", 0), 0u) << shown << "\n" << r.err;
  EXPECT_GT(lines[0].size(), std::string("stepformer-cli: error: ").size() + 10) << shown;
  return lines[0];
}

// The line of `out` that starts with `prefix` (without it), or "".
inline std::string line_after(const std::string& out, const std::string& prefix) {
  for (const auto& l : CliResult::split(out))
    if (l.rfind(prefix, 0) == 0) return l.substr(prefix.size());
  return "";
}

}  // namespace sf::test

#endif
