// stepformer-cli sample: the model's inference algorithm. Algorithm 14, y ← DInference(x, θ̂),
// continues a prompt (GPT); Algorithm 15, x̂ ← EDInference(z, θ̂), writes x̂ for a context z (the
// encoder-decoder). A fill-in model (BERT) has no such algorithm: `fill` is its command.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/gpu_attention.hpp"
#include "cli/speculate.hpp"
#include "cli/sampling_cut.hpp"
#include "core/algorithms/algorithms.hpp"
#include "core/parallel/parallel.hpp"

namespace sf::cli {

namespace {

// --json: exactly one object, {"tokens": [...], "text": "...", "stopped": "..."}, where tokens is
// the whole output sequence as the algorithm returns it (1-based ids).
void print_json(const Tokens& tokens, const Tokenizer& tok, const std::string& stopped) {
  nlohmann::ordered_json j;
  j["tokens"] = tokens;
  j["text"] = tok.decode_text(tokens);
  j["stopped"] = stopped;
  std::cout << j.dump() << "\n";
}

// With --attention gpu: the GPU's report, after the command's own output (stderr with --json,
// whose stdout is one JSON object).
void report_gpu(const Args& args, const CliGpu* gpu) {
  if (gpu) gpu->report(args.has("json") ? std::cerr : std::cout);
}

// Algorithm 14 on --prompt / --tokens; `gpu`, when set, runs every MHAttention call (with
// --kv-cache, the cached steps' too).
int continue_prompt(const Args& args, const Model& model, const Tokenizer& tok, CliGpu* gpu) {
  refuse_option(args, "reuse-encoding", "it reuses Algorithm 15's encoder, and this model has none");
  context_tokens(args, model.config, tok);  // refuses --context: Algorithm 14 reads x alone
  if (args.has("draft") || args.has("speculate")) {  // Algorithm 14-S (cli/speculate.cpp)
    if (gpu) throw UsageError("--attention gpu does not run speculative decoding's two models: use --attention cpu");
    return speculate(args, model, tok);
  }
  InferenceOptions opt;
  opt.tau = args.get_double("tau", 1.0, 0.0, 1e6);
  opt.l_gen = static_cast<int>(args.get_int("gen", 16, 0, 1000000));
  opt.seed = args.get_u64("seed", 1);
  opt.trim_context = !args.has("no-trim");
  opt.stop_at_eos = args.has("stop-at-eos");
  opt.kv_cache = args.has("kv-cache");
  opt.cut = top_k_top_p_options(args);
  opt.kv_block_size = kv_block_option(args);
  if (gpu) {
    opt.attn = gpu->attention();
    opt.cached_attn = gpu->cached_attention();
  }
  const Tokens x = input_tokens(args, model.config, tok);

  const InferenceResult r = dinference(x, model, opt);
  if (args.has("json")) {
    Tokens all = x;  // Algorithm 14's x after line 6: the prompt with y appended
    all.insert(all.end(), r.y.begin(), r.y.end());
    print_json(all, tok, r.stopped);
    report_gpu(args, gpu);
    return 0;
  }
  std::cout << "model: " << args.get("model") << " (" << config_summary(model.config) << ")\n";
  std::cout << algorithm_title(14) << "\n";
  std::cout << "prompt:       \"" << tok.decode(x) << "\"  (x = [" << id_list(x) << "], ℓ = " << x.size() << ")\n";
  std::cout << "continuation: \"" << tok.decode(r.y) << "\"  (τ = " << opt.tau << (opt.tau == 0 ? ", argmax" : "")
            << top_k_top_p_summary(opt.cut) << ", ℓ_gen = " << opt.l_gen << ", seed " << opt.seed << ")\n";
  std::cout << "y: " << id_list(r.y, ",") << "\n";
  for (size_t i = 0; i < r.steps.size(); ++i)
    if (r.steps[i].context_start > 1) {
      std::cout << "note: from step i = " << i + 1 << " on, x outgrew ℓ_max = " << model.config.l_max
                << ": the model saw only the last ℓ_max tokens (context trimming; --no-trim stops instead)\n";
      break;
    }
  if (!r.stopped.empty()) std::cout << "note: " << r.stopped << "\n";
  if (opt.kv_block_size > 0 && !r.steps.empty()) print_block_table(r.steps.back().block_table);
  report_gpu(args, gpu);
  return 0;
}

// Algorithm 15 on --context / --context-tokens; `gpu` as for continue_prompt.
int translate(const Args& args, const Model& model, const Tokenizer& tok, CliGpu* gpu) {
  const char* why = "Algorithm 15 starts x̂ at [bos_token] and runs until eos_token (or ℓ_max)";
  for (const char* o : {"prompt", "tokens", "gen", "no-trim", "stop-at-eos", "draft", "speculate"}) refuse_option(args, o, why);
  EdInferenceOptions opt;
  opt.tau = args.get_double("tau", 1.0, 0.0, 1e6);
  opt.seed = args.get_u64("seed", 1);
  opt.reuse_encoding = args.has("reuse-encoding");
  opt.kv_cache = args.has("kv-cache");
  opt.cut = top_k_top_p_options(args);
  opt.kv_block_size = kv_block_option(args);  // pages the decoder's self-attention cache
  if (gpu) {
    opt.attn = gpu->attention();
    opt.cached_attn = gpu->cached_attention();
  }
  const Tokens z = context_tokens(args, model.config, tok);

  const EdInferenceResult r = edinference(z, model, opt);
  if (args.has("json")) {
    print_json(r.x_hat, tok, r.stopped);
    report_gpu(args, gpu);
    return 0;
  }
  std::cout << "model: " << args.get("model") << " (" << config_summary(model.config) << ")\n";
  std::cout << algorithm_title(15) << "  (τ = " << opt.tau << (opt.tau == 0 ? ", argmax" : "")
            << top_k_top_p_summary(opt.cut) << ", seed " << opt.seed
            << (opt.reuse_encoding ? "; the encoder ran once and Z was reused, not the paper's re-encoding" : "")
            << ")\n";
  std::cout << "context: \"" << tok.decode(z) << "\"  (z = [" << id_list(z) << "], ℓ_z = " << z.size() << ")\n";
  std::cout << "x̂:      \"" << tok.decode(r.x_hat) << "\"  (" << r.steps.size() << " tokens drawn)\n";
  std::cout << "ids: " << id_list(r.x_hat, ",") << "\n";
  std::cout << "stopped: " << (r.stopped.empty() ? "eos_token" : r.stopped) << "\n";
  if (opt.kv_block_size > 0 && !r.steps.empty()) print_block_table(r.steps.back().block_table);
  report_gpu(args, gpu);
  return 0;
}

int run_sample(const Args& args) {
  // Usage mistakes that do not depend on the model, before any file is read.
  args.get_double("tau", 1.0, 0.0, 1e6);
  args.get_int("gen", 16, 0, 1000000);
  args.get_u64("seed", 1);
  top_k_top_p_options(args);
  kv_block_option(args);
  if (args.has("prompt") && args.has("tokens")) args.require_one_of({"prompt", "tokens"});
  if (args.has("context") && args.has("context-tokens")) args.require_one_of({"context", "context-tokens"});
  const AttentionChoice attention = attention_choice(args);
  const OpenedModel opened = load_text_model(args.get("model"), "sample");
  const Model& model = opened.checkpoint.model;
  set_compute_threads(static_cast<int>(args.get_int("threads", compute_threads(), 1, 64)));
  const Architecture& arch = architecture(model.config);
  const Tokenizer& tok = *opened.tokenizer;
  const auto gpu = [&] { return attention.gpu ? std::make_unique<CliGpu>(attention.form) : nullptr; };
  switch (arch.output()) {
    case OutputKind::Continuation: return continue_prompt(args, model, tok, gpu().get());
    case OutputKind::Translation: return translate(args, model, tok, gpu().get());
    case OutputKind::FillIn:
    case OutputKind::Classification: break;  // a vit: load_text_model refused it
  }
  throw UsageError("this model (" + arch.title() + ", Algorithm " + std::to_string(arch.forward_algorithm()) +
                   ") fills in [MASK] positions and has no inference algorithm that writes text: use stepformer-cli "
                   "fill --model MODEL --prompt \"…[MASK]…\"");
}

}  // namespace

Command sample_command() {
  CommandSpec s;
  s.name = "sample";
  s.summary = "Generate text: Algorithm 14 (GPT, continue a prompt) or 15 (encoder-decoder, x̂ for a context z).";
  s.synopsis =
      "--model MODEL ((--prompt TEXT | --tokens IDS) [--gen N] [--no-trim] [--stop-at-eos] [--kv-cache [--kv-block B]] | (--context TEXT | "
      "--context-tokens IDS) [--reuse-encoding] [--kv-cache [--kv-block B]]) [--draft MODEL [--speculate K]] [--tau T] [--top-k K] [--top-p P] [--seed S] [--threads N] [--json] "
      "[--attention cpu|gpu] [--gpu-form teaching|fused]";
  s.description =
      "GPT: Algorithm 14, y ← DInference(x, θ̂). Each step runs DTransformer on x, takes p = P[:, last], draws y "
      "from q ∝ p^{1/τ} and appends it to x. Prints the prompt, the continuation (special tokens as <bos>, <eos>, "
      "<mask>) and its 1-based ids (the line \"y: …\"), and notes when the context was trimmed or generation "
      "stopped early.\n"
      "Encoder-decoder: Algorithm 15, x̂ ← EDInference(z, θ̂). x̂ starts as [bos_token]; each step runs "
      "EDTransformer(z, x̂), draws a token from q ∝ p^{1/τ} and appends it, until eos_token is drawn. Prints x̂, its "
      "ids and \"stopped: eos_token\", or why the loop was cut (x̂ reached ℓ_max; the paper's loop has no cap).\n"
      "BERT has no such algorithm: use stepformer-cli fill.";
  s.options = {
      {"model", "MODEL",
       "The model to load: a .safetensors file, or a folder holding an ecosystem checkpoint with its config.json and "
       "tokenizer files (docs/ecosystem.md).",
       true},
      {"prompt", "TEXT",
       "GPT: the prompt as text, encoded as [bos_token, characters…] (§4): at most ℓ_max tokens. [MASK], [BOS] and "
       "[EOS] are the special tokens."},
      {"tokens", "IDS", "GPT: the prompt as 1-based token ids, e.g. 63,8,5 (instead of --prompt)."},
      {"context", "TEXT",
       "Encoder-decoder: the context z as text, encoded [bos_token, characters…, eos_token] as the training pairs' z "
       "are."},
      {"context-tokens", "IDS", "Encoder-decoder: z as 1-based token ids (instead of --context)."},
      {"tau", "T",
       "Temperature τ ≥ 0: τ = 1 samples from p itself, τ → ∞ approaches uniform sampling, τ = 0 takes the most "
       "likely token (argmax; the paper's q ∝ p^{1/τ} is undefined at 0). Default: 1."},
      {"gen", "N", "GPT: ℓ_gen, the number of tokens to generate (≥ 0). Default: 16."},
      {"seed", "S", "Seed of the sampling generator (a whole number ≥ 0). Default: 1."},
      {"threads", "N",
       "Threads for the large matrix products (1–64; not in the paper, speed only): the same tokens on any count. "
       "Default: the machine's cores, at most 4."},
      {"no-trim", "",
       "GPT: stop when x reaches ℓ_max tokens, as the paper's DTransformer cannot take more. Default: trim, i.e. "
       "feed only the last ℓ_max tokens (Carpenter's COMPLETE_TEXT)."},
      {"stop-at-eos", "", "GPT: stop as soon as eos_token is drawn (not in the paper's Algorithm 14)."},
      {"kv-cache", "",
       "Keep each self-attention's K and V between steps and compute only the new token's column (GPT: rebuilt "
       "when the context is trimmed or the prefix changes; encoder-decoder: z encoded once, the cross-attention's "
       "K and V of Z kept too). Not in the paper (the encyclopedia article's KV caching). The same tokens."},
      {"reuse-encoding", "",
       "Encoder-decoder: compute the encoder (Algorithm 8's lines 1–9) once and reuse Z at every step; the paper "
       "re-encodes z each time. The same x̂."},
      {"json", "",
       "Print only one JSON object {\"tokens\": […], \"text\": \"…\", \"stopped\": \"…\"}: the 1-based ids of the "
       "whole output sequence as the algorithm returns it (Algorithm 14: the prompt with y appended; Algorithm 15: "
       "x̂ with its bos_token), its ordinary characters, and \"\", \"eos_token\" or why generation stopped. With "
       "--attention gpu the GPU's report goes to stderr."},
      attention_option(),
      gpu_form_option(),
      {"draft", "MODEL",
       "GPT: run Algorithm 14-S, speculative decoding (not in the paper; Leviathan et al. 2023): MODEL, a smaller GPT "
       "with the same vocabulary, proposes --speculate K tokens per round and --model checks them in one forward pass. "
       "The same output distribution as Algorithm 14 (τ = 0: the same tokens). Prints the rounds, the proposals "
       "accepted and the target's forward passes against plain Algorithm 14's (one per token); --json adds them as "
       "\"rounds\", \"proposed\", \"accepted\", \"target_passes\", \"plain_passes\", \"draft_passes\". Stops at "
       "the target's ℓ_max (no trimming)."},
      {"speculate", "K", "With --draft: the draft's proposals per round, 1–64. Default: 4."},
  };
  for (Option& o : cut_and_paging_option_specs()) s.options.push_back(std::move(o));
  s.examples =
      "  stepformer-cli sample --model model.safetensors --prompt \"hello\" --tau 0.8 --gen 20 --seed 1\n"
      "  stepformer-cli sample --model model.safetensors --prompt \"hello\" --tau 0 --gen 20 --json\n"
      "  stepformer-cli sample --model model.safetensors --prompt \"hello\" --tau 0.8 --top-k 5 --top-p 0.9\n"
      "  stepformer-cli sample --model ed.safetensors --context \"dcab\" --tau 0 --reuse-encoding\n"
      "  stepformer-cli sample --model model.safetensors --prompt \"hello\" --tau 0 --kv-cache --attention gpu\n"
      "  stepformer-cli sample --model default.safetensors --draft draft.safetensors --speculate 4 --prompt \"dcab=\" --tau 0\n";
  return {s, run_sample};
}

}  // namespace sf::cli
