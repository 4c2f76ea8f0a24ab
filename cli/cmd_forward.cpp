// stepformer-cli forward: one pass of the model's forward algorithm, optionally traced:
// Algorithm 10 P ← DTransformer(x | θ), 9 P ← ETransformer(x | θ) or 8 P ← EDTransformer(z, x | θ).
#include <string>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/gpu_attention.hpp"
#include "cli/trace_print.hpp"
#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"
#include "core/io/npy.hpp"

namespace sf::cli {

namespace {

// P with every MHAttention call as compute shaders on a headless GL context (EGL), printing the
// device, each call, the time of every dispatch and how far P is from the CPU's.
MatF forward_on_gpu(std::ostream& os, const Architecture& arch, const Model& model, const Tokens& z, const Tokens& x,
                    const std::string& form) {
  CliGpu gpu(form);
  const MatF P = arch.forward(model, z, x, nullptr, gpu.attention());
  const MatF P_cpu = arch.forward(model, z, x);
  gpu.report(os);
  os << "max |P − P_cpu| = " << (P - P_cpu).cwiseAbs().maxCoeff() << " (P_cpu: the same pass with core's attention)\n";
  return P;
}

int run_forward(const Args& args) {
  args.require_one_of({"prompt", "tokens"});  // usage mistakes before any file is read
  if (args.has("context") && args.has("context-tokens")) args.require_one_of({"context", "context-tokens"});
  const AttentionChoice attention = attention_choice(args);
  const OpenedModel opened = load_text_model(args.get("model"), "forward");
  const Model& model = opened.checkpoint.model;
  const Architecture& arch = architecture(model.config);
  const int alg = arch.forward_algorithm();
  const Tokenizer& tok = *opened.tokenizer;
  const Tokens z = context_tokens(args, model.config, tok);
  const Tokens x = input_tokens(args, model.config, tok, prompt_with_eos(arch));

  std::cout << "model: " << args.get("model") << " (" << config_summary(model.config) << ")\n";
  std::cout << "forward algorithm: " << algorithm_title(alg) << "\n";
  if (arch.has_context()) {
    std::cout << "context z = [" << id_list(z) << "]  (ℓ_z = " << z.size() << ": \"" << tok.decode(z) << "\")\n";
  }
  print_tokens(std::cout, x, tok);

  Trace trace;
  Tracer tracer(trace);
  const MatF P = attention.gpu ? forward_on_gpu(std::cout, arch, model, z, x, attention.form)
                                : arch.forward(model, z, x, args.has("trace") ? &tracer : nullptr);

  if (args.has("trace")) print_algorithm_trace(std::cout, alg, trace);
  std::cout << "\n";
  print_predictions(std::cout, P, x, tok, arch.output());
  if (args.has("out")) {
    write_npy(args.get("out"), P);
    std::cout << "\nwrote P ∈ ℝ^{" << P.rows() << "×" << P.cols() << "} to " << args.get("out")
              << " (float32 .npy, shape (N_V, ℓ_x) = (" << P.rows() << ", " << P.cols() << "))\n";
  }
  return 0;
}

}  // namespace

Command forward_command() {
  CommandSpec s;
  s.name = "forward";
  s.summary = "Run the model's forward algorithm (10 GPT, 9 BERT, 8 encoder-decoder) and show P.";
  s.synopsis =
      "--model MODEL (--prompt TEXT | --tokens IDS) [--context TEXT | --context-tokens IDS] [--out P.npy] [--trace] "
      "[--attention cpu|gpu] [--gpu-form teaching|fused]";
  s.description =
      "Runs the forward algorithm of the model's architecture once: Algorithm 10, P ← DTransformer(x | θ) (GPT); "
      "Algorithm 9, P ← ETransformer(x | θ) (BERT); or Algorithm 8, P ← EDTransformer(z, x | θ) (encoder-decoder, "
      "which also needs the context z). P ∈ ℝ^{N_V×ℓ_x}.\n"
      "Prints the tokens of x, then for each position t the three most likely tokens under P[:, t] with their "
      "probabilities. For GPT and the encoder-decoder P[:, t] predicts the next token x[t+1] (from x[1:t], and z); "
      "for BERT P[:, t] is the distribution for x[t] itself, and the [MASK] positions are marked *. With --trace it "
      "first prints every pseudocode line the pass executed, in order, indented by call depth, with the loop "
      "indices in force and the name and shape of every value bound.";
  s.options = {
      {"model", "MODEL",
       "The model to load: a .safetensors file written by stepformer-cli init or train, or a checkpoint from the "
       "ecosystem (Hugging Face GPT-2 or BERT, nanoGPT/minGPT) in a folder with its config.json and tokenizer files, "
       "a vocabulary (config.json's \"vocab\" or \"itos\", vocab.txt, meta.pkl) or none (plain ids) "
       "(docs/ecosystem.md).",
       true},
      {"prompt", "TEXT",
       "The input x as text, encoded as the paper's §4 sequence: [bos_token, characters…] (BERT: "
       "[bos_token, characters…, eos_token], the whole sequence as in training), at most ℓ_max tokens. [MASK], "
       "[BOS] and [EOS] in TEXT are mask_token, bos_token and eos_token; every other character must be in the "
       "model's vocabulary. A model's own token list (nanoGPT's meta.pkl, …) has no bos_token: its tokens alone; a "
       "model without tokenizer files takes ids, e.g. \"1 2 3\"."},
      {"tokens", "IDS",
       "The input x as a comma-separated list of token ids, 1-based as the paper numbers them (1 … N_V; N_V−2 is "
       "mask_token, N_V−1 bos_token, N_V eos_token), e.g. 63,8,5. For a model from the ecosystem, paper id = the "
       "tokenizer files' 0-based id + 1 (GPT-2's <|endoftext|>, 50256 in vocab.json, is 50257); for a model without "
       "tokenizer files, id k (labelled #k) is the model's own token k − 1. Nothing is added. "
       "Give --prompt or --tokens, not both."},
      {"context", "TEXT",
       "Encoder-decoder models only, and required there: the context z as text, encoded [bos_token, characters…, "
       "eos_token] as the training pairs' z are; at most ℓ_max tokens."},
      {"context-tokens", "IDS", "Encoder-decoder models: the context z as 1-based token ids (instead of --context)."},
      {"out", "P.npy", "Also write P ∈ ℝ^{N_V×ℓ_x} as a float32 NumPy file of shape (N_V, ℓ_x) (column t is P[:, t])."},
      {"trace", "", "Print the trace: every executed pseudocode line with the values it bound."},
      attention_option(),
      gpu_form_option(),
  };
  s.examples =
      "  stepformer-cli forward --model model.safetensors --prompt \"hello\"\n"
      "  stepformer-cli forward --model model.safetensors --tokens 63,8,5,12 --out P.npy --trace\n"
      "  stepformer-cli forward --model model.safetensors --prompt \"hello\" --attention gpu --gpu-form teaching\n"
      "  stepformer-cli forward --model bert.safetensors --prompt \"h[MASK]llo\" --attention gpu\n"
      "  stepformer-cli forward --model ed.safetensors --context \"dcab\" --prompt \"abc\" --out P.npy\n";
  return {s, run_forward};
}

}  // namespace sf::cli
