// A small command-line parser for stepformer-cli: each command declares its options once
// (name, value placeholder, help text, whether required); the same declaration drives
// parsing, the checks and the --help text.
//
//   --name VALUE, --name=VALUE   an option with a value
//   --flag                       a flag (an option declared with no value placeholder)
//   -h, --help                   usage of the command
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace sf::cli {

// A mistake in how the program was called: exit status 2. (Everything else that goes wrong
// while running, such as an unreadable file, is a runtime error: exit status 1.)
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Option {
  std::string name;   // "model", given as --model
  std::string value;  // placeholder for the help ("FILE"); empty for a flag
  std::string help;   // one or more sentences
  bool required = false;
};

struct CommandSpec {
  std::string name;         // "forward"
  std::string summary;      // one line for the command list
  std::string synopsis;     // what follows "stepformer-cli NAME" in the usage line
  std::string description;  // paragraphs printed after the usage line
  std::vector<Option> options;
  std::string examples;     // optional, printed last
};

class Args {
 public:
  bool help = false;  // -h or --help was given

  bool has(const std::string& name) const { return values_.count(name) > 0; }
  // The value of an option that was given; throws UsageError when it was not.
  const std::string& get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  // Numbers, checked strictly (the whole text, within [lo, hi]); throw UsageError.
  long long get_int(const std::string& name, long long fallback, long long lo, long long hi) const;
  uint64_t get_u64(const std::string& name, uint64_t fallback) const;
  double get_double(const std::string& name, double fallback, double lo, double hi) const;
  // Exactly one of the named options must be given.
  void require_one_of(const std::vector<std::string>& names) const;

 private:
  friend Args parse_args(const CommandSpec& spec, const std::vector<std::string>& argv);
  std::map<std::string, std::string> values_;  // flags map to ""
};

// Parses the arguments after the command name; throws UsageError naming the problem.
// When -h or --help is among them, nothing else is looked at: only `help` is set.
Args parse_args(const CommandSpec& spec, const std::vector<std::string>& argv);

// The full help of a command: usage line, description, every option, examples.
std::string usage_text(const CommandSpec& spec);

// Strict number parsing ("12", "0.8"; not "12abc", "", "nan"); `what` names the value in
// the message. Throw UsageError.
long long parse_int(const std::string& text, const std::string& what, long long lo, long long hi);
uint64_t parse_u64(const std::string& text, const std::string& what);
double parse_double(const std::string& text, const std::string& what, double lo, double hi);

}  // namespace sf::cli
