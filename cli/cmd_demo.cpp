// stepformer-cli demo (also what runs with no arguments): the default model, a traced
// forward pass on "hello world", its predictions and a sampled continuation.
#include <filesystem>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/trace_print.hpp"
#include "core/about/data_dirs.hpp"
#include "core/algorithms/algorithms.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace sf::cli {

namespace {

void print_algorithm(std::ostream& os, int number) {
  const PseudoAlgorithm* a = pseudocode(number);
  if (!a) return;
  os << "Algorithm " << a->number << ": " << (a->signature.empty() ? a->name : a->signature) << "\n";
  for (const auto& h : a->header) os << "  " << h << "\n";
  for (const auto& l : a->lines) {
    const std::string number_text = l.number ? std::to_string(l.number) : "";
    os << "  " << std::string(3 - number_text.size(), ' ') << number_text << "  " << std::string(2 * l.indent, ' ')
       << l.text << "\n";
  }
}

// The default configuration initialised with seed 1, with its character tokenizer.
OpenedModel untrained_default() {
  OpenedModel m{Checkpoint{Model::initialised(ModelConfig{}, 1), {}, {}}, nullptr, Layout::Stepformer, "", "", {}, {}, {}};
  m.tokenizer = make_tokenizer(m.checkpoint.model.config);
  return m;
}

int run_demo(const Args&) {
  // The source tree's or the installed data (core/about/data_dirs.hpp), as the app finds it.
  const std::string path = data_path("assets") + "/default.safetensors";
  std::error_code ec;
  const bool from_file = std::filesystem::is_regular_file(path, ec);
  const OpenedModel opened = from_file ? load_model(path) : untrained_default();
  const Model& model = opened.checkpoint.model;
  const Tokenizer& tok = *opened.tokenizer;
  const std::string prompt = "hello world";
  const Tokens x = tok.encode_sequence(prompt, false);

  std::cout << "Stepformer: the pseudocode of \"Formal Algorithms for Transformers\" (Phuong & Hutter 2022), run "
               "line by line.\n\n";
  std::cout << "model: " << (from_file ? path : "the default configuration, initialised with seed 1 (untrained)")
            << "\n       " << config_summary(model.config) << ", " << thousands(model.theta.size())
            << " parameters\n\n";
  print_algorithm(std::cout, 10);

  std::cout << "\nprompt \"" << prompt << "\" as [bos_token, characters…]:\n";
  print_tokens(std::cout, x, tok);

  Trace trace;
  Tracer tracer(trace);
  const MatF P = dtransformer<float>(x, model.config, model.weights(), &tracer);
  std::cout << "\ntrace of P ← DTransformer(x | θ): " << trace.size()
            << " events; shown: the top-level lines, and layer 1's nested calls for t = 1 and h = 1\n"
               "(call = the algorithm is entered with its inputs; line N = line N has run; nested calls come before "
               "the line that made them)\n";
  print_trace(std::cout, trace, {.abbreviate = true});

  std::cout << "\n";
  print_predictions(std::cout, P, x, tok);

  InferenceOptions opt;
  opt.tau = 0.8;
  opt.l_gen = 20;
  opt.seed = 1;
  const InferenceResult r = dinference(x, model, opt);
  std::cout << "\nAlgorithm 14, y ← DInference(x, θ̂) with τ = 0.8, ℓ_gen = 20, seed 1:\n";
  std::cout << "  \"" << prompt << "\" → \"" << tok.decode(r.y) << "\"\n";
  if (!from_file) std::cout << "  (an untrained model: its continuation is noise until it is trained)\n";

  std::cout << "\nnext: stepformer-cli help   (init, forward --trace, sample)\n";
  return 0;
}

}  // namespace

Command demo_command() {
  CommandSpec s;
  s.name = "demo";
  s.summary = "The built-in demo (also what runs with no arguments).";
  s.synopsis = "";
  s.description =
      "Loads assets/default.safetensors when it exists (else builds the default configuration with seed 1), prints "
      "Algorithm 10's pseudocode, runs a traced forward pass on the prompt \"hello world\" and prints the trace "
      "(the top-level lines and layer 1's nested calls), the top predictions of P, and a continuation sampled with "
      "τ = 0.8 (20 tokens, seed 1).";
  return {s, run_demo};
}

}  // namespace sf::cli
