// The model configuration: the paper's hyperparameters as one plain struct with defaults.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace sf {

// The variants of the seeds (issue 10). The paper's choices are the defaults; everything else is
// labelled "variant" with the seed that describes it wherever it shows (core/pseudocode/variants).
// Where layer_norm sits in a layer: before each sub-layer (GPT-2; the paper's Algorithm 10) or
// after the residual sum (the paper's Algorithms 8 and 9, BERT, GPT-1).
enum class NormPosition { Pre, Post };
// Algorithm 6, or RMSNorm (§6 of the paper mentions it; the encyclopedia article): no m, no β.
enum class Norm { LayerNorm, RmsNorm };
// How positions enter: W_p learned (the paper), the fixed sinusoid (§5, computed, not stored),
// rotary (RoPE), linear biases (ALiBi), nothing, or a learned relative position bias (T5, issue 25).
enum class Position { Learned, Sinusoidal, Rope, Alibi, None, Relative };
// The MLP's non-linearity: exact erf GELU (eq. 5), GPT-2's tanh approximation, ReLU (the paper's
// Algorithm 8) or SwiGLU (a gated MLP with W_gate, b_gate).
enum class Activation { GELU, GELUTanh, ReLU, SwiGLU };
// GPT's self-attention mask: causal (the paper), or prefix-LM: bidirectional over the first p
// tokens, where p is the position of the first prefix_separator in the input.
enum class MaskKind { Causal, Prefix };
// Not in the paper (issue 25): how Algorithm 5's heads compute Attention: Algorithm 4 (exact, the
// paper) or FlashAttention (Algorithm 4-F, Dao et al.; equal up to rounding, blocks B_r × B_c),
// or random-feature attention (Algorithm 4-R, Peng et al. 2021: a seeded estimate of Algorithm 4).
enum class AttentionKind { Exact, Flash, RandomFeatures };
// How text becomes token ids (paper §4; core/tokenizers/, docs/tokenizers.md). Char, Word and Bpe
// keep their vocabulary in the configuration (ids 1 … |vocab|, then the paper's three special
// tokens); Gpt2 (byte-level BPE) and WordPiece (BERT) read the ecosystem's tokenizer files beside
// the checkpoint: the configuration then has no vocab, N_V = vocab_size, and the special tokens
// are the model's own (paper id = the files' 0-based id + 1).
enum class TokenizerKind { Char, Word, Bpe, Gpt2, WordPiece };

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

  // ---- variants (JSON keys of the same names) ----
  std::optional<NormPosition> norm_position{};  // unset: the paper's for the arch (norm_pos())
  Norm norm = Norm::LayerNorm;
  Position position = Position::Learned;
  double position_base = 0;     // the sinusoid's base: 0 means ℓ_max (the paper), e.g. 10000 (Vaswani et al.)
  double rope_base = 10000;     // RoPE: θ_i = rope_base^{−2(i−1)/d_attn}
  std::optional<Activation> activation{};  // unset: the paper's for the arch (act())
  bool tied_unembedding = false;         // W_u = W_eᵀ, no W_u tensor (Dinan–Yaida–Zhang, GPT-2)
  int H_kv = 0;                          // key/value heads, dividing H; 0 means H (no sharing)
  MaskKind mask = MaskKind::Causal;      // GPT only
  std::string prefix_separator = "=";    // MaskKind::Prefix: p = position of its first occurrence
  // "attention": "exact" | "flash" (not in the paper): Algorithms 8–10's MHAttention heads run
  // Algorithm 4 or FlashAttention with query blocks of block_r columns and key blocks of block_c
  // tokens (both ≥ 1). Training's gradient is exact attention's either way (docs/variants.md).
  AttentionKind attention = AttentionKind::Exact;
  int block_r = 16, block_c = 16;
  // "attention": "random_features" (not in the paper, Algorithm 4-R): D = rf_features random Fourier
  // features per head, drawn from rf_seed (fixed, never trained, not in the checkpoint's tensors:
  // regenerated from rf_seed), Gram–Schmidt-orthogonalised in blocks of d_attn when rf_orthogonal.
  int rf_features = 64;
  int rf_seed = 1;
  bool rf_orthogonal = false;
  // Not in the paper (issue 25, encyclopedia article 004): "window": w ≥ 1 makes every self-attention
  // a sliding window: the causal mask keeps t_x − w ≤ t_z ≤ t_x (w + 1 keys, the query's own token
  // among them), the bidirectional one |t_x − t_z| ≤ w, the prefix-LM one both its own condition and
  // |t_x − t_z| ≤ w. Cross-attention (Algorithm 8's decoder reading Z) is not windowed. 0: off.
  int window = 0;
  // Not in the paper (issue 25; T5, Raffel et al.): position "relative" adds B[t_z, t_x] =
  // W_rel[h, bucket(t_z − t_x)] to S/√d_attn in every self-attention, bucketed as T5 does:
  // exact below relative_buckets/2 (bidirectional: /4 per sign), logarithmic up to relative_max_distance.
  int relative_buckets = 32, relative_max_distance = 128;
  // The vision transformer (arch "vit", not in the paper): the patch side p (2 or 4) that cuts its
  // 8×8 image into (8/p)² patch tokens (core/arch/vit.hpp).
  int patch = 4;

  // ---- ecosystem extras (issue 11; variants "not in the paper", JSON keys of the same names) ----
  bool embedding_norm = false;    // BERT: layer_norm(e_t | γ_emb, β_emb) after the embedding sum
  int token_types = 0;            // BERT: W_s ∈ ℝ^{d_e×token_types}; W_s[:, 1] (segment 0) added to every e_t
  bool unembedding_bias = false;  // BERT's MLM head: P = softmax(W_u X + b_u 1ᵀ)

  // ---- the vocabulary and its tokenizer (§4) ----
  TokenizerKind tokenizer = TokenizerKind::Char;
  // Char: the ordinary tokens in id order (ids 1 … N_V−3), each one Unicode character (UTF-8).
  // Word: whole words ("[UNK]" among them for unknown words). Bpe: the pieces in id order (the
  // characters first, then each merge's result). mask_token = N_V−2, bos_token = N_V−1,
  // eos_token = N_V follow them (§4). Empty for Gpt2 and WordPiece (their files hold it).
  std::vector<std::string> vocab = default_vocab();
  // Bpe only: the merges in rank order, each "left right" (the two pieces joined by one space).
  std::vector<std::string> merges{};
  // Gpt2, WordPiece: N_V, the number of rows of W_e (0 for the kinds with a vocab).
  int vocab_size = 0;
  // The special tokens as 1-based paper ids; 0 means the paper's (mask N_V−2, bos N_V−1, eos N_V);
  // −1 means the model has none (GPT-2 has no [MASK]). pad_id: the id padding uses (0: none).
  int bos_id = 0, eos_id = 0, mask_id = 0, pad_id = 0;

  int N_V() const { return vocab_size > 0 ? vocab_size : static_cast<int>(vocab.size()) + 3; }
  int mask_token() const { return mask_id > 0 ? mask_id : mask_id < 0 ? 0 : N_V() - 2; }  // 0: none
  int bos_token() const { return bos_id > 0 ? bos_id : N_V() - 1; }
  int eos_token() const { return eos_id > 0 ? eos_id : N_V(); }
  // True when the tokenizer's vocabulary lives in files beside the checkpoint (Gpt2, WordPiece).
  bool file_tokenizer() const { return tokenizer == TokenizerKind::Gpt2 || tokenizer == TokenizerKind::WordPiece; }

  // The variants as they apply to this configuration (the arch's paper choice where unset).
  NormPosition norm_pos() const;
  Activation act() const;
  int kv_heads() const { return H_kv > 0 ? H_kv : H; }
  // The sinusoid's base: ℓ_max (the paper) unless position_base is set.
  double sinusoid_base() const { return position_base > 0 ? position_base : l_max; }
  // The key/value head that query head h (1-based) reads: ⌊(h−1)·H_kv/H⌋ + 1.
  int kv_head_of(int h) const { return (h - 1) * kv_heads() / H + 1; }

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

const char* to_string(NormPosition v);
const char* to_string(Norm v);
const char* to_string(Position v);
const char* to_string(Activation v);
const char* to_string(MaskKind v);
const char* to_string(AttentionKind v);  // "exact", "flash", "random_features"
const char* to_string(TokenizerKind v);  // "char", "word", "bpe", "gpt2", "wordpiece"
// One line naming every variant that differs from the paper's choice for the arch, e.g.
// "pre-LN, RMSNorm, RoPE, SwiGLU, tied W_u, H_kv = 1"; "" for the paper's model.
std::string variant_summary(const ModelConfig& c);

}  // namespace sf
