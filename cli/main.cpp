// stepformer-cli: the command line of Stepformer. Dispatches to the commands of
// cli/commands.hpp; every error ends here as ONE line on stderr,
//   stepformer-cli: error: …
// with exit status 2 for a usage mistake and 1 for anything that failed while running.
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/about/build_info.hpp"
#include "core/model/error.hpp"

namespace {

using sf::cli::Command;

const std::vector<Command>& commands() {
  static const std::vector<Command> list{sf::cli::init_command(), sf::cli::forward_command(),
                                         sf::cli::sample_command(), sf::cli::fill_command(),
                                         sf::cli::train_command(),  sf::cli::demo_command(),
                                         sf::cli::info_command(), sf::cli::tokenize_command(),
                                         sf::cli::backward_command(), sf::cli::lens_command(),
                                         sf::cli::classify_command()};
  return list;
}

const Command* find_command(const std::string& name) {
  for (const auto& c : commands())
    if (c.spec.name == name) return &c;
  return nullptr;
}

void print_overview() {
  std::cout << "stepformer-cli: step through the pseudocode of \"Formal Algorithms for Transformers\" (Phuong & "
               "Hutter 2022) while a real transformer computes.\n\n"
               "usage: stepformer-cli                       run the built-in demo\n"
               "       stepformer-cli COMMAND [OPTIONS]\n"
               "       stepformer-cli help COMMAND          the options of COMMAND (or: COMMAND --help)\n"
               "       stepformer-cli --version             the version, the build's options and the data folder\n\n"
               "commands:\n";
  for (const auto& c : commands()) {
    std::string name = c.spec.name;
    name.resize(10, ' ');
    std::cout << "  " << name << c.spec.summary << "\n";
  }
  std::cout << "  help      Print this overview, or the help of one command.\n\n"
               "Token ids are 1-based, as in the paper: ordinary characters 1 … N_V−3, then mask_token = N_V−2,\n"
               "bos_token = N_V−1, eos_token = N_V. A --prompt TEXT is encoded as [bos_token, characters…] (and\n"
               "eos_token for BERT); [MASK], [BOS] and [EOS] in it are the special tokens.\n\n"
               "A model is one of the paper's three architectures: GPT (Algorithms 10, 13, 14), BERT (9, 12, fill)\n"
               "or the encoder-decoder (8, 11, 15, with a context z: --context TEXT).\n\n"
               "exit status: 0 success, 1 runtime error (file, model or input), 2 usage error.\n";
}

// One line, whatever the message holds.
void error_line(const std::string& message) {
  std::string m = message;
  for (char& ch : m)
    if (ch == '\n' || ch == '\r') ch = ' ';
  std::cout.flush();
  std::cerr << "stepformer-cli: error: " << m << std::endl;
}

int run(const std::vector<std::string>& argv, std::string& command_name) {
  if (argv.empty()) return find_command("demo")->run(sf::cli::Args{});
  const std::string& first = argv[0];
  if (first == "-h" || first == "--help" || (first == "help" && argv.size() == 1)) {
    print_overview();
    return 0;
  }
  if (first == "--version") {
    std::cout << sf::version_text("stepformer-cli");
    return 0;
  }
  if (first == "help") {
    if (argv.size() > 2) throw sf::cli::UsageError("help takes one command name");
    if (argv[1] == "help") {
      print_overview();
      return 0;
    }
    const Command* c = find_command(argv[1]);
    if (!c) throw sf::cli::UsageError("unknown command \"" + argv[1] + "\" (see stepformer-cli --help)");
    std::cout << sf::cli::usage_text(c->spec);
    return 0;
  }
  const Command* c = find_command(first);
  if (!c) throw sf::cli::UsageError("unknown command \"" + first + "\" (see stepformer-cli --help)");
  command_name = first;
  const sf::cli::Args args = sf::cli::parse_args(c->spec, {argv.begin() + 1, argv.end()});
  if (args.help) {
    std::cout << sf::cli::usage_text(c->spec);
    return 0;
  }
  return c->run(args);
}

}  // namespace

int main(int argc, char** argv) {
  std::string command_name;
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc), command_name);
  } catch (const sf::cli::UsageError& e) {
    error_line(std::string(e.what()) +
               (command_name.empty() ? "" : " (see stepformer-cli help " + command_name + ")"));
    return 2;
  } catch (const sf::Error& e) {
    error_line(e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    error_line("out of memory");
    return 1;
  } catch (const std::exception& e) {
    error_line(e.what());
    return 1;
  } catch (...) {
    error_line("unexpected failure");
    return 1;
  }
}
