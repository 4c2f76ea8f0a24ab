// stepformer-cli sample: Algorithm 14, y ← DInference(x, θ̂): continue a prompt.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/algorithms.hpp"

namespace sf::cli {

namespace {

int run_sample(const Args& args) {
  InferenceOptions opt;
  opt.tau = args.get_double("tau", 1.0, 0.0, 1e6);
  opt.l_gen = static_cast<int>(args.get_int("gen", 16, 0, 1000000));
  opt.seed = args.get_u64("seed", 1);
  opt.trim_context = !args.has("no-trim");
  opt.stop_at_eos = args.has("stop-at-eos");
  args.require_one_of({"prompt", "tokens"});  // usage mistakes before any file is read
  const Model model = load_model(args.get("model"));
  const CharTokenizer tok(model.config);
  const Tokens x = input_tokens(args, model.config, tok);

  const InferenceResult r = dinference(x, model, opt);
  std::cout << "model: " << args.get("model") << " (" << config_summary(model.config) << ")\n";
  std::cout << "prompt:       \"" << tok.decode(x) << "\"  (x = [" << id_list(x) << "], ℓ = " << x.size() << ")\n";
  std::cout << "continuation: \"" << tok.decode(r.y) << "\"  (τ = " << opt.tau << (opt.tau == 0 ? ", argmax" : "")
            << ", ℓ_gen = " << opt.l_gen << ", seed " << opt.seed << ")\n";
  std::cout << "y: " << id_list(r.y, ",") << "\n";
  for (size_t i = 0; i < r.steps.size(); ++i)
    if (r.steps[i].context_start > 1) {
      std::cout << "note: from step i = " << i + 1 << " on, x outgrew ℓ_max = " << model.config.l_max
                << ": the model saw only the last ℓ_max tokens (context trimming; --no-trim stops instead)\n";
      break;
    }
  if (!r.stopped.empty()) std::cout << "note: " << r.stopped << "\n";
  return 0;
}

}  // namespace

Command sample_command() {
  CommandSpec s;
  s.name = "sample";
  s.summary = "Run Algorithm 14, y ← DInference(x, θ̂): continue a prompt token by token.";
  s.synopsis = "--model MODEL (--prompt TEXT | --tokens IDS) [--tau T] [--gen N] [--seed S] [--no-trim] [--stop-at-eos]";
  s.description =
      "Each step runs DTransformer on x, takes p = P[:, last], draws y from q ∝ p^{1/τ} and appends it to x. "
      "Prints the prompt, the continuation (special tokens as <bos>, <eos>, <mask>) and its 1-based ids (the line "
      "\"y: …\"), and notes when the context was trimmed or generation stopped early.";
  s.options = {
      {"model", "MODEL", "The checkpoint to load (.safetensors).", true},
      {"prompt", "TEXT",
       "The prompt as text, encoded as [bos_token, characters…] (§4): length(TEXT) + 1 tokens, at most ℓ_max."},
      {"tokens", "IDS", "The prompt as 1-based token ids, e.g. 63,8,5 (instead of --prompt)."},
      {"tau", "T",
       "Temperature τ ≥ 0: τ = 1 samples from p itself, τ → ∞ approaches uniform sampling, τ = 0 takes the most "
       "likely token (argmax; the paper's q ∝ p^{1/τ} is undefined at 0). Default: 1."},
      {"gen", "N", "ℓ_gen, the number of tokens to generate (≥ 0). Default: 16."},
      {"seed", "S", "Seed of the sampling generator (a whole number ≥ 0). Default: 1."},
      {"no-trim", "",
       "Stop when x reaches ℓ_max tokens, as the paper's DTransformer cannot take more. Default: trim, i.e. feed only "
       "the last ℓ_max tokens (Carpenter's COMPLETE_TEXT)."},
      {"stop-at-eos", "", "Stop as soon as eos_token is drawn (not in the paper's Algorithm 14)."},
  };
  s.examples =
      "  stepformer-cli sample --model model.safetensors --prompt \"hello\" --tau 0.8 --gen 20 --seed 1\n"
      "  stepformer-cli sample --model model.safetensors --prompt \"hello\" --tau 0 --gen 20\n";
  return {s, run_sample};
}

}  // namespace sf::cli
