// stepformer-cli init: a freshly initialised model θ, written as a checkpoint.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/io/checkpoint.hpp"
#include "core/model/config.hpp"
#include "core/model/error.hpp"

namespace sf::cli {

namespace {

int run_init(const Args& args) {
  ModelConfig config;
  if (args.has("config")) {
    const std::string path = args.get("config");
    try {
      config = load_config_file(path);
    } catch (const Error& e) {  // name the file when the message does not
      const std::string m = e.what();
      throw Error(m.find(path) == std::string::npos ? path + ": " + m : m);
    }
  }
  const uint64_t seed = args.get_u64("seed", 1);
  const std::string out = args.get("out");
  const Model model = Model::initialised(config, seed);
  save_checkpoint(out, model, {{"seed", std::to_string(seed)}, {"created_by", "stepformer-cli init"}});
  std::cout << "wrote " << out << ": " << thousands(model.theta.size()) << " parameters, " << config_summary(config)
            << ", seed " << seed << "\n";
  return 0;
}

}  // namespace

Command init_command() {
  CommandSpec s;
  s.name = "init";
  s.summary = "Create a model (GPT, BERT or encoder-decoder) with freshly initialised θ; write its checkpoint.";
  s.synopsis = "[--config FILE.json] [--seed N] --out MODEL.safetensors";
  s.description =
      "The initialisation is seeded and deterministic (GPT-2 style): weights ~ N(0, 0.02²), output projections "
      "~ N(0, (0.02/√(2L))²), biases and β = 0, γ = 1 (a sinusoidal W_p is computed, not stored)."
      " The same configuration and seed always give the same θ.";
  s.options = {
      {"config", "FILE.json",
       "The model configuration, a JSON object with any of the keys arch, the architecture's own keys, H, d_e, "
       "d_attn, d_mid, d_mlp, l_max, eps, the variants (norm_position \"pre\"|\"post\", norm \"layer_norm\"|\"rms_norm\", "
       "position \"learned\"|\"sinusoidal\"|\"rope\"|\"alibi\"|\"none\"|\"relative\" with position_base \"l_max\"|10000, rope_base, "
       "relative_buckets and relative_max_distance (T5's relative bias, not in the paper), window (sliding-window "
       "attention, 0 = off; not in the paper), "
       "activation \"gelu\"|\"gelu_tanh\"|\"relu\"|\"swiglu\", tied_unembedding, H_kv, mask \"causal\"|\"prefix\" with "
       "prefix_separator; docs/checkpoint-format.md) and "
       "vocab (a string of characters, or an array of one-character strings; N_V = characters + 3 special tokens). "
       "arch is \"gpt\" (Algorithm 10; key L), \"bert\" (Algorithm 9; keys L and d_f, the size of W_f) or \"ed\" "
       "(the encoder-decoder, Algorithm 8; keys L_enc and L_dec instead of L). Keys left out keep their defaults. "
       "Default: the built-in configuration (gpt, L=2, H=4, d_e=64, d_attn=d_mid=16, d_mlp=256, ℓ_max=64, "
       "N_V=64)."},
      {"seed", "N", "Seed of the initialisation, a whole number ≥ 0. Default: 1."},
      {"out", "MODEL.safetensors",
       "Where to write the checkpoint (safetensors, F32, the configuration in its metadata). An existing file is "
       "replaced atomically.",
       true},
  };
  s.examples =
      "  stepformer-cli init --out model.safetensors\n"
      "  echo '{\"L\": 1, \"H\": 2, \"d_e\": 16, \"l_max\": 32}' > tiny.json\n"
      "  stepformer-cli init --config tiny.json --seed 7 --out tiny.safetensors\n"
      "  echo '{\"arch\": \"bert\", \"L\": 2, \"d_f\": 32, \"d_e\": 32}' > bert.json\n"
      "  echo '{\"arch\": \"ed\", \"L_enc\": 2, \"L_dec\": 2, \"d_e\": 32}' > ed.json\n"
      "  stepformer-cli init --config ed.json --out ed.safetensors\n";
  return {s, run_init};
}

}  // namespace sf::cli
