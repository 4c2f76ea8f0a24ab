// stepformer-cli forward: one pass of Algorithm 10, P ← DTransformer(x | θ), optionally traced.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/trace_print.hpp"
#include "core/algorithms.hpp"
#include "core/npy.hpp"

namespace sf::cli {

namespace {

int run_forward(const Args& args) {
  args.require_one_of({"prompt", "tokens"});  // usage mistakes before any file is read
  const Model model = load_model(args.get("model"));
  const CharTokenizer tok(model.config);
  const Tokens x = input_tokens(args, model.config, tok);

  std::cout << "model: " << args.get("model") << " (" << config_summary(model.config) << ")\n";
  print_tokens(std::cout, x, tok);

  Trace trace;
  Tracer tracer(trace);
  const MatF P = dtransformer<float>(x, model.config, model.weights(), args.has("trace") ? &tracer : nullptr);

  if (args.has("trace")) {
    std::cout << "\ntrace of Algorithm 10: " << trace.size()
              << " events (call = the algorithm is entered with its inputs; line N = line N has run, with what it "
                 "bound; nested calls come before the line that made them)\n";
    print_trace(std::cout, trace);
  }
  std::cout << "\n";
  print_predictions(std::cout, P, x, tok);
  if (args.has("out")) {
    write_npy(args.get("out"), P);
    std::cout << "\nwrote P ∈ ℝ^{" << P.rows() << "×" << P.cols() << "} to " << args.get("out")
              << " (float32 .npy, shape (N_V, ℓ) = (" << P.rows() << ", " << P.cols() << "))\n";
  }
  return 0;
}

}  // namespace

Command forward_command() {
  CommandSpec s;
  s.name = "forward";
  s.summary = "Run Algorithm 10, P ← DTransformer(x | θ), on one sequence and show the predictions.";
  s.synopsis = "--model MODEL (--prompt TEXT | --tokens IDS) [--out P.npy] [--trace]";
  s.description =
      "Prints the tokens of x, then for each position t the three most likely next tokens under P[:, t] = "
      "P̂(x[t+1] | x[1:t]) with their probabilities, and the probability of the actual next token. With --trace it "
      "first prints every pseudocode line the pass executed (Algorithms 10, 1, 2, 6, 5 and 4), in order, indented by "
      "call depth, with the loop indices in force and the name and shape of every value bound.";
  s.options = {
      {"model", "MODEL", "The checkpoint to load (a .safetensors file written by stepformer-cli init or the app).", true},
      {"prompt", "TEXT",
       "The input as text. It is encoded as the paper's §4 sequence [bos_token, characters…]: x[1] = bos_token, then "
       "one token per character, so x has length(TEXT) + 1 tokens, at most ℓ_max. Every character must be in the "
       "model's vocabulary."},
      {"tokens", "IDS",
       "The input as a comma-separated list of token ids, 1-based as the paper numbers them (1 … N_V; N_V−2 is "
       "mask_token, N_V−1 bos_token, N_V eos_token), e.g. 63,8,5. Nothing is added. Give --prompt or --tokens, not "
       "both."},
      {"out", "P.npy", "Also write P ∈ ℝ^{N_V×ℓ} as a float32 NumPy file of shape (N_V, ℓ) (column t is P[:, t])."},
      {"trace", "", "Print the trace: every executed pseudocode line with the values it bound."},
  };
  s.examples =
      "  stepformer-cli forward --model model.safetensors --prompt \"hello\"\n"
      "  stepformer-cli forward --model model.safetensors --tokens 63,8,5,12 --out P.npy --trace\n";
  return {s, run_forward};
}

}  // namespace sf::cli
