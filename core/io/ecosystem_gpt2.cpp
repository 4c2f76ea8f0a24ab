// GPT-2-shaped checkpoints onto Algorithm 10's parameters (docs/ecosystem.md):
//  - Hugging Face GPT-2 (gpt2, distilgpt2, gpt2-medium): wte, wpe, h.N.{ln_1, attn.c_attn,
//    attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, ln_f, with or without a "transformer." prefix. Its
//    Conv1D stores W as [in, out] and computes x W + b: row-major [in, out] is the paper's
//    (out, in) matrix column-major, so the paper's W = the file's Wᵀ, read without reshuffling.
//  - nanoGPT and minGPT state dicts: the same names under "transformer.", nn.Linear's [out, in]
//    (the paper's W itself), lm_head.weight, biases optional (nanoGPT's bias=False).
// GPT-2 is the paper's GPT (Algorithm 10, pre-LN) with the tanh GELU (gelu_new) and W_u tied to W_e.
#include <optional>

#include "core/io/ecosystem.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

std::string n(int64_t v) { return std::to_string(v); }

// activation_function → the variant; nothing for one Stepformer does not have.
std::optional<Activation> gpt2_activation(const std::string& name) {
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::GELUTanh;
  if (name == "gelu") return Activation::GELU;
  if (name == "relu") return Activation::ReLU;
  return std::nullopt;
}

}  // namespace

TensorImport plan_gpt2(const SafetensorsFile& file, const HfConfig& cfg, bool conv1d) {
  TensorImport im(file);
  // HF's own files have no prefix; GPT2LMHeadModel's state dict, nanoGPT's and minGPT's have "transformer.".
  const std::string p = file.find("transformer.wte.weight") ? "transformer." : "";
  const SafeTensor* wte_found = file.find(p + "wte.weight");
  if (!wte_found || wte_found->shape.size() != 2)
    throw Error(file.name() + ": " + p + "wte.weight must be a matrix [N_V, n_embd]");
  const int64_t N_V = wte_found->shape[0], C = wte_found->shape[1];
  const std::string wte_name = im.vocab_tensor = wte_found->name;

  // ---- config.json against the tensors ----
  const std::string model_type = cfg.text("model_type", "gpt2");
  if (model_type != "gpt2")
    cfg.refuse("model_type is \"" + model_type + "\" but the checkpoint is in GPT-2's layout (" + wte_name +
               "); put the config.json of this checkpoint beside it");
  const int64_t n_embd = cfg.require_positive({"n_embd"});
  if (n_embd != C) cfg.contradiction("n_embd", n_embd, wte_name + " has " + n(C) + " columns");
  const int64_t n_layer = cfg.require_positive({"n_layer"});
  const int layers = count_layers(file, p + "h.");
  if (n_layer != layers)
    cfg.contradiction("n_layer", n_layer,
                      "the checkpoint has " + n(layers) + " layers (" + p + "h.0 … " + p + "h." + n(layers - 1) + ")");
  const int64_t n_head = cfg.require_positive({"n_head"});
  if (n_embd % n_head != 0)
    cfg.refuse("n_head = " + n(n_head) + " does not divide n_embd = " + n(n_embd) + " (each head has n_embd / n_head dimensions)");
  // nanoGPT calls ℓ_max block_size; older GPT-2 configs n_ctx.
  const int64_t n_positions = cfg.require_positive({"n_positions", "n_ctx", "block_size"});
  if (const SafeTensor* wpe = file.find(p + "wpe.weight"); wpe && wpe->shape.size() == 2 && wpe->shape[0] != n_positions)
    cfg.contradiction(cfg.has("n_positions") ? "n_positions" : cfg.has("n_ctx") ? "n_ctx" : "block_size", n_positions,
                      wpe->name + " has " + n(wpe->shape[0]) + " rows");
  if (const auto vocab_size = cfg.positive({"vocab_size"}); vocab_size && *vocab_size != N_V)
    cfg.contradiction("vocab_size", *vocab_size, wte_name + " has " + n(N_V) + " rows");
  const int64_t d_mlp = cfg.positive({"n_inner"}).value_or(4 * n_embd);  // n_inner: null means 4·n_embd
  const std::string act_name = cfg.text("activation_function", "gelu_new");
  const auto act = gpt2_activation(act_name);
  if (!act)
    cfg.refuse("activation_function \"" + act_name +
               "\" is not one Stepformer computes (gelu_new, gelu_pytorch_tanh, gelu_fast: the tanh GELU; gelu: exact; relu)");
  if (!cfg.has("activation_function"))
    im.notes.push_back("config.json has no activation_function: Hugging Face's default gelu_new (the tanh GELU); a "
                       "nanoGPT model (nn.GELU(), exact) needs \"activation_function\": \"gelu\"");
  if (!cfg.flag("scale_attn_weights", true))
    cfg.refuse("scale_attn_weights is false: Algorithm 4 always divides the scores by √d_attn");
  if (cfg.flag("scale_attn_by_inverse_layer_idx", false))
    cfg.refuse("scale_attn_by_inverse_layer_idx is true: Stepformer's attention has no per-layer scale");

  // ---- the configuration: the paper's GPT with GPT-2's choices ----
  ModelConfig& c = im.config;
  c.arch = "gpt";
  c.L = static_cast<int>(n_layer);
  c.H = static_cast<int>(n_head);
  c.d_e = static_cast<int>(n_embd);
  c.d_attn = c.d_mid = static_cast<int>(n_embd / n_head);
  c.d_mlp = static_cast<int>(d_mlp);
  c.l_max = static_cast<int>(n_positions);
  c.eps = static_cast<float>(cfg.non_negative("layer_norm_epsilon", 1e-5));
  c.activation = *act;
  c.tokenizer = TokenizerKind::Gpt2;
  c.vocab.clear();
  c.vocab_size = static_cast<int>(N_V);

  const std::string layout = conv1d ? "Hugging Face GPT-2" : "nanoGPT/minGPT";
  const std::string weights = conv1d ? "Conv1D stores W as [in, out]" : "nn.Linear stores W as [out, in]";
  const std::string dims = "n_embd = " + n(n_embd) + ", n_inner = " + n(d_mlp) + ", n_positions = " + n(n_positions) +
                           " in config.json; " + weights;
  // Biases: Hugging Face's always; nanoGPT's bias=False has none (Linear and LayerNorm alike).
  const bool biases = conv1d || file.find(p + "h.0.attn.c_attn.bias");
  if (!biases) im.notes.push_back("no biases in the checkpoint (nanoGPT's bias=False): every b and β is 0");
  // The unembedding: tied to wte (Hugging Face: no lm_head; nanoGPT: lm_head dropped or equal to
  // wte), or minGPT's own lm_head.
  const SafeTensor* lm_head = file.find("lm_head.weight");
  if (lm_head) im.need(lm_head->name, {N_V, C}, "lm_head is W_u, [N_V, n_embd]");
  const bool tied = !lm_head || same_values(file, *lm_head, *wte_found);
  if (lm_head && tied) im.notes.push_back("lm_head.weight equals " + wte_name + ": W_u is tied, W_u = W_eᵀ");
  c.tied_unembedding = tied;
  const std::string why_invalid = validate(c);
  if (!why_invalid.empty()) cfg.refuse("the model it describes is not one Stepformer can build: " + why_invalid);

  // W as the paper's (out, in) matrix: the file's Wᵀ (Conv1D) or W (nn.Linear).
  auto weight_shape = [&](int64_t out, int64_t in) { return conv1d ? std::vector<int64_t>{in, out} : std::vector<int64_t>{out, in}; };
  auto bias_or_zero = [&](const std::string& paper, const std::string& name, int64_t size) {
    if (biases)
      im.whole(paper, im.need(name, {size}, dims), false);
    else
      im.zero(paper, "no bias in the checkpoint");
  };

  // ---- every paper tensor's source ----
  im.whole("W_e", im.need(wte_name, {N_V, C}, dims), true);  // wte [N_V, C]: row t is W_e[:, t]
  im.whole("W_p", im.need(p + "wpe.weight", {n_positions, C}, dims), true);
  for (int l = 1; l <= c.L; ++l) {
    const std::string h = p + "h." + n(l - 1) + ".", paper = "layer" + n(l) + ".";
    im.whole(paper + "gamma1", im.need(h + "ln_1.weight", {C}, dims), false);
    bias_or_zero(paper + "beta1", h + "ln_1.bias", C);
    // c_attn is [W_q; W_k; W_v] fused: q, k, v at outputs 0, C, 2C; head h inside each at (h−1)·C/H.
    const SafeTensor& qkv = im.need(h + "attn.c_attn.weight", weight_shape(3 * C, C), dims);
    const int axis = conv1d ? 1 : 0;  // the output axis
    for (const auto& [which, offset] : {std::pair{"W_q", 0 * C}, {"W_k", 1 * C}, {"W_v", 2 * C}})
      im.heads(paper + "attn." + which, qkv, axis, offset, conv1d);
    if (biases) {
      const SafeTensor& qkv_bias = im.need(h + "attn.c_attn.bias", {3 * C}, dims);
      for (const auto& [which, offset] : {std::pair{"b_q", 0 * C}, {"b_k", 1 * C}, {"b_v", 2 * C}})
        im.heads(paper + "attn." + which, qkv_bias, 0, offset, false);
    } else {
      for (const char* which : {"b_q", "b_k", "b_v"}) im.zero(paper + "attn." + which, "no bias in the checkpoint");
    }
    im.whole(paper + "attn.W_o", im.need(h + "attn.c_proj.weight", weight_shape(C, C), dims), conv1d);
    bias_or_zero(paper + "attn.b_o", h + "attn.c_proj.bias", C);
    for (const char* buffer : {"attn.bias", "attn.masked_bias"})  // GPT-2's causal-mask buffers
      if (file.find(h + buffer)) im.ignore(h + buffer);
    im.whole(paper + "gamma2", im.need(h + "ln_2.weight", {C}, dims), false);
    bias_or_zero(paper + "beta2", h + "ln_2.bias", C);
    im.whole(paper + "W_mlp1", im.need(h + "mlp.c_fc.weight", weight_shape(d_mlp, C), dims), conv1d);
    bias_or_zero(paper + "b_mlp1", h + "mlp.c_fc.bias", d_mlp);
    im.whole(paper + "W_mlp2", im.need(h + "mlp.c_proj.weight", weight_shape(C, d_mlp), dims), conv1d);
    bias_or_zero(paper + "b_mlp2", h + "mlp.c_proj.bias", C);
  }
  if (file.find(p + "h.0.attn.bias") || file.find(p + "h.0.attn.masked_bias"))
    im.notes.push_back("ignored: the attn.bias / attn.masked_bias buffers (GPT-2's causal mask; Algorithm 10 builds "
                       "its Mask itself)");
  im.whole("gamma", im.need(p + "ln_f.weight", {C}, dims), false);
  bias_or_zero("beta", p + "ln_f.bias", C);
  if (tied)
    im.describe("W_u", "W_u = W_eᵀ (tied to " + wte_name + ")");
  else
    im.whole("W_u", *lm_head, false);  // nn.Linear [N_V, C] is W_u itself
  im.refuse_unused(layout);
  return im;
}

}  // namespace sf
