// The commands of stepformer-cli. Each lives in its own file (cli/cmd_NAME.cpp) and is one
// CommandSpec (options and help) plus a function that runs it; main.cpp lists them. To add a
// command: write cli/cmd_NAME.cpp with a NAME_command() factory, declare it here and add it
// to the list in main.cpp.
#pragma once
#include <functional>

#include "cli/args.hpp"

namespace sf::cli {

struct Command {
  CommandSpec spec;
  // Runs the parsed command; returns the exit status. Throws UsageError (exit 2), sf::Error
  // or std::exception (exit 1); main prints them as one line.
  std::function<int(const Args&)> run;
};

Command init_command();     // cli/cmd_init.cpp
Command forward_command();  // cli/cmd_forward.cpp
Command sample_command();   // cli/cmd_sample.cpp
Command fill_command();     // cli/cmd_fill.cpp
Command demo_command();     // cli/cmd_demo.cpp
Command train_command();    // cli/cmd_train.cpp
int run_train_digits(const Args& args);  // cli/cmd_train_digits.cpp: train --recipe vit-digits
Command tokenize_command(); // cli/cmd_tokenize.cpp
Command info_command();     // cli/cmd_info.cpp
Command backward_command(); // cli/cmd_backward.cpp
Command lens_command();     // cli/cmd_lens.cpp (not in the paper: an interpretation tool)
Command classify_command(); // cli/cmd_classify.cpp

}  // namespace sf::cli
