// stepformer-cli fill: a fill-in model (BERT, Algorithm 9) predicts the tokens at the [MASK]
// positions of x from the columns of P ← ETransformer(x | θ) there (the paper prints no
// algorithm for this; core/algorithms/fill_in.hpp).
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/gpu_attention.hpp"
#include "cli/trace_print.hpp"
#include "core/algorithms/fill_in.hpp"
#include "core/model/error.hpp"

namespace sf::cli {

namespace {

void print_json(const FillResult& r, const Tokenizer& tok) {
  nlohmann::ordered_json j;
  j["filled_tokens"] = r.filled;
  j["text"] = tok.decode_text(r.filled);
  nlohmann::ordered_json positions = nlohmann::ordered_json::array();
  for (const FillPosition& f : r.positions) {
    nlohmann::ordered_json pos;
    pos["t"] = f.t;
    pos["chosen"] = f.chosen;
    pos["chosen_text"] = tok.label(f.chosen);
    nlohmann::ordered_json top = nlohmann::ordered_json::array();
    for (const FillCandidate& c : f.top) top.push_back({{"id", c.id}, {"token", tok.label(c.id)}, {"p", c.p}});
    pos["top"] = std::move(top);
    positions.push_back(std::move(pos));
  }
  j["positions"] = std::move(positions);
  std::cout << j.dump() << "\n";
}

// The largest |p − p_cpu| over the [MASK] positions of two fills of the same prompt.
float max_p_diff(const FillResult& a, const FillResult& b) {
  float e = 0;
  for (size_t i = 0; i < a.positions.size(); ++i)
    e = std::max(e, (a.positions[i].p - b.positions[i].p).cwiseAbs().maxCoeff());
  return e;
}

int run_fill(const Args& args) {
  // Usage mistakes before any file is read.
  args.require_one_of({"prompt", "tokens"});
  const double tau = args.get_double("tau", 0.0, 0.0, 1e6);
  const uint64_t seed = args.get_u64("seed", 1);
  const int top_k = static_cast<int>(args.get_int("top", 5, 1, 1'000'000));
  if (args.has("trace") && args.has("json")) throw UsageError("--json prints one JSON object: leave out --trace");
  const AttentionChoice attention = attention_choice(args);
  const OpenedModel opened = load_text_model(args.get("model"), "fill");
  const Model& model = opened.checkpoint.model;
  const Architecture& arch = architecture(model.config);
  if (arch.output() != OutputKind::FillIn) {
    const std::string bert = architecture_with_output(OutputKind::FillIn);
    throw UsageError("this model (" + arch.title() + ") does not fill in [MASK]: fill needs a model trained by "
                     "masked language modelling (Algorithm 12" +
                     (bert.empty() ? "" : ", arch \"" + bert + "\"") + "); use stepformer-cli sample");
  }
  const Tokenizer& tok = *opened.tokenizer;
  const Tokens x = input_tokens(args, model.config, tok, prompt_with_eos(arch));
  if (std::find(x.begin(), x.end(), tok.mask_token()) == x.end())
    throw Error(args.has("prompt")
                    ? "the prompt has no [MASK] to fill: write [MASK] where the model should predict a token, e.g. "
                      "--prompt \"h[MASK]llo\""
                    : "--tokens has no mask_token (id " + std::to_string(tok.mask_token()) + ") to fill");

  Trace trace;
  Tracer tracer(trace);
  std::unique_ptr<CliGpu> gpu;
  if (attention.gpu) gpu = std::make_unique<CliGpu>(attention.form);
  const FillResult r = fill_masks(x, model, tau, seed, top_k, args.has("trace") ? &tracer : nullptr,
                                  gpu ? gpu->attention() : MHAttentionFn<float>{});
  // With --attention gpu: the GPU's report, after the command's own output (stderr with --json,
  // whose stdout is one JSON object).
  const auto report_gpu = [&](std::ostream& os) {
    if (!gpu) return;
    gpu->report(os);
    os << "max |p − p_cpu| at the [MASK] positions = " << max_p_diff(r, fill_masks(x, model, tau, seed, top_k))
       << " (p_cpu: the same pass with core's attention)\n";
  };
  if (args.has("json")) {
    print_json(r, tok);
    report_gpu(std::cerr);
    return 0;
  }
  std::cout << "model: " << args.get("model") << " (" << config_summary(model.config) << ")\n";
  std::cout << "forward algorithm: " << algorithm_title(arch.forward_algorithm()) << "\n";
  print_tokens(std::cout, x, tok);
  if (args.has("trace")) print_algorithm_trace(std::cout, arch.forward_algorithm(), trace);
  std::cout << "\nfilled: \"" << tok.decode_text(r.filled) << "\"  (" << tok.decode(r.filled) << "; τ = " << tau
            << (tau == 0 ? ", argmax" : ", seed " + std::to_string(seed)) << ")\n";
  std::cout << "filled x = [" << id_list(r.filled) << "]\n";
  std::cout << "at each [MASK] position t, P[:, t] is the model's distribution for x[t]; the top " << top_k << ":\n";
  for (const FillPosition& f : r.positions) {
    std::cout << "  t = " << f.t << "  chose " << show_token(tok, f.chosen) << " (id " << f.chosen << ")  top:";
    for (size_t i = 0; i < f.top.size(); ++i)
      std::cout << (i ? ", " : " ") << show_token(tok, f.top[i].id) << " " << fixed(f.top[i].p, 4);
    std::cout << "\n";
  }
  report_gpu(std::cout);
  return 0;
}

}  // namespace

Command fill_command() {
  CommandSpec s;
  s.name = "fill";
  s.summary = "BERT: fill in each [MASK] of a prompt from P ← ETransformer(x | θ) (Algorithm 9).";
  s.synopsis =
      "--model BERT (--prompt TEXT | --tokens IDS) [--tau T] [--seed S] [--top K] [--trace] [--json] "
      "[--attention cpu|gpu] [--gpu-form teaching|fused]";
  s.description =
      "Runs Algorithm 9 once on x and, at each position t holding mask_token, takes P[:, t], the model's "
      "distribution for x[t], as a masked language model is trained to (Algorithm 12): the most likely token when "
      "τ = 0 (the default), else a token drawn from q ∝ p^{1/τ}. Prints the filled text and, for each masked "
      "position, the top K candidates with their probabilities. The paper prints no algorithm for this step.";
  s.options = {
      {"model", "BERT",
       "The checkpoint of a fill-in model (\"arch\": \"bert\"), .safetensors, or a folder holding a Hugging Face BERT "
       "with its masked-LM head, config.json and vocab.txt (docs/ecosystem.md).",
       true},
      {"prompt", "TEXT",
       "The text with [MASK] where tokens are missing, e.g. \"h[MASK]llo\". Encoded as the training sequences are, "
       "[bos_token, characters…, eos_token], at most ℓ_max tokens; [BOS] and [EOS] may be written too."},
      {"tokens", "IDS",
       "x as 1-based token ids (mask_token = N_V−2), e.g. 63,8,62,12; nothing is added. Instead of --prompt."},
      {"tau", "T", "Temperature τ ≥ 0; 0 takes the most likely token (argmax). Default: 0."},
      {"seed", "S", "Seed of the sampling generator when τ > 0. Default: 1."},
      {"top", "K", "How many candidates to show per masked position. Default: 5."},
      {"trace", "", "Print the trace of Algorithm 9: every executed pseudocode line with the values it bound."},
      {"json", "",
       "Print only one JSON object: {\"filled_tokens\": […], \"text\": \"…\", \"positions\": [{\"t\": 3, "
       "\"chosen\": id, \"chosen_text\": \"e\", \"top\": [{\"id\": …, \"token\": \"…\", \"p\": …}, …]}, …]} "
       "(t and ids 1-based). With --attention gpu the GPU's report goes to stderr."},
      attention_option(),
      gpu_form_option(),
  };
  s.examples =
      "  stepformer-cli fill --model bert.safetensors --prompt \"h[MASK]llo\"\n"
      "  stepformer-cli fill --model bert.safetensors --prompt \"s[MASK]rt=[MASK]bc\" --tau 0.8 --seed 3 --json\n"
      "  stepformer-cli fill --model bert.safetensors --prompt \"h[MASK]llo\" --attention gpu --gpu-form teaching\n";
  return {s, run_fill};
}

}  // namespace sf::cli
