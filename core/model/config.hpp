// The model configuration: the paper's hyperparameters as one plain struct with defaults.
#pragma once
#include <string>
#include <vector>

namespace sf {

// How W_p starts. The paper (§5) writes ℓ_max in the sinusoid where Vaswani et al. use 10000.
enum class PositionInit { Learned, SinusoidLmax, Sinusoid10000 };

struct ModelConfig {
  // The architecture (core/arch/): "gpt" (Algorithm 10), "bert" (Algorithm 9) or "ed"
  // (Algorithm 8). Each uses only its own integer keys (Architecture::config_keys()).
  std::string arch = "gpt";
  int L = 2;                 // layers (gpt, bert)
  int L_enc = 2;             // encoder layers (ed)
  int L_dec = 2;             // decoder layers (ed)
  int d_f = 64;              // size of Algorithm 9's final projection W_f (bert)
  int H = 4;                 // heads
  int d_e = 64;              // embedding size
  int d_attn = 16;           // query/key size per head
  int d_mid = 16;            // value size per head
  int d_mlp = 256;           // MLP hidden size
  int l_max = 64;            // ℓ_max, maximum context length
  float eps = 1e-5f;         // ε under the root in layer_norm (the paper has none)
  PositionInit position_init = PositionInit::Learned;
  // The ordinary tokens, in id order (ids 1 … N_V−3), each one Unicode character (UTF-8).
  // mask_token = N_V−2, bos_token = N_V−1, eos_token = N_V follow them (§4).
  std::vector<std::string> vocab = default_vocab();

  int N_V() const { return static_cast<int>(vocab.size()) + 3; }
  int mask_token() const { return N_V() - 2; }
  int bos_token() const { return N_V() - 1; }
  int eos_token() const { return N_V(); }

  // Space, a–z, 0–9 and 24 punctuation marks: 61 ordinary tokens, N_V = 64.
  static std::vector<std::string> default_vocab();
};

// The integer hyperparameters by their JSON key ("L", "H", "d_f", …); nullptr for an unknown key.
int* config_int(ModelConfig& c, const std::string& key);
const int* config_int(const ModelConfig& c, const std::string& key);

// Returns "" when the configuration is possible, else a message naming what is wrong.
std::string validate(const ModelConfig& c);

// JSON (the checkpoint's __metadata__["config"] and `init --config FILE.json`).
std::string to_json(const ModelConfig& c);
// Parses and validates; throws std::runtime_error with a clear message.
ModelConfig config_from_json(const std::string& text);
ModelConfig load_config_file(const std::string& path);

const char* to_string(PositionInit p);

}  // namespace sf
