// One table of named parameters θ: the paper's names and shapes, one flat storage.
//
// The table drives seeded initialisation, checkpoint I/O, the optimizer loop, the tensor
// browser and the reference tests. Every entry is a stack of `count` matrices of rows×cols
// (count = H for per-head tensors, 1 otherwise), stored column-major, one after another, in a
// single flat buffer; the checkpoint writes each as row-major [count,] rows, cols.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/config.hpp"
#include "core/model/types.hpp"

namespace sf {

enum class ParamRole { Weight, OutputWeight, Bias, Gain, Offset, Embedding, Position };

struct ParamEntry {
  std::string name;    // checkpoint key, e.g. "layer1.attn.W_q" (layers are 1-based)
  std::string symbol;  // the paper's symbol for the UI, e.g. "W_q^h" or "γ¹_l"
  int layer = 0;       // 1-based layer, 0 when not per-layer
  int count = 1;       // H for per-head tensors, else 1
  int rows = 0, cols = 1;
  ParamRole role = ParamRole::Weight;
  size_t offset = 0;   // into the flat buffer (elements)

  size_t matrix_size() const { return static_cast<size_t>(rows) * cols; }
  size_t size() const { return matrix_size() * count; }
  // The checkpoint shape: [rows] for vectors, [rows, cols], or [count, rows(, cols)].
  std::vector<int64_t> shape() const;
};

class ParamTable {
 public:
  // The table of c's architecture (Architecture::build_table).
  explicit ParamTable(const ModelConfig& c);
  const std::vector<ParamEntry>& entries() const { return entries_; }
  size_t total() const { return total_; }
  // nullptr when no entry has that name.
  const ParamEntry* find(const std::string& name) const;
  // The entry with that name; throws sf::Error when there is none.
  const ParamEntry& at(const std::string& name) const;

  // For architectures building their table: appends an entry after the others.
  void add(std::string name, std::string symbol, int layer, int count, int rows, int cols, ParamRole role);
  // The eight tensors of one multi-head attention layer, eq. (4), under `prefix` ("layer1.attn."):
  // W_q [H, d_attn, d_e], b_q, W_k, b_k, W_v [H, d_mid, d_e], b_v, W_o [d_e, H·d_mid], b_o.
  // With H_kv < H (multi-query / grouped-query, a variant) W_k, b_k, W_v, b_v have H_kv heads.
  // `sup` is the superscript of the paper's symbols, e.g. "" or "enc", "dec", "ed".
  void add_mh_attention(const std::string& prefix, const std::string& sup, int layer, const ModelConfig& c);
  // layer_norm's γ and β [d] under `prefix`+"gamma"+k and "beta"+k (k = "1", "2", … or "");
  // RMSNorm (a variant) has γ only.
  void add_layer_norm(const std::string& prefix, const std::string& k, int layer, int d, const ModelConfig& c);
  // An MLP's W_mlp<a> [d_mlp, d_e], b_mlp<a>, W_mlp<b> [d_e, d_mlp], b_mlp<b> under `prefix`; with
  // SwiGLU (a variant) also W_gate [d_mlp, d_e], b_gate (W_gate2, b_gate2 for the decoder's a = 3).
  void add_mlp(const std::string& prefix, int a, int b, int layer, const ModelConfig& c);
  // The ecosystem extras of the embedding (issue 11, not in the paper): emb.gamma, emb.beta [d_e]
  // when embedding_norm; W_s [d_e, token_types] when token_types > 0. Added after W_p.
  void add_embedding_extras(const ModelConfig& c);
  // b_u [N_V] when unembedding_bias (BERT's MLM head). Added after W_u (or where it would be).
  void add_unembedding_bias(const ModelConfig& c);

 private:
  std::vector<ParamEntry> entries_;
  std::unordered_map<std::string, size_t> index_;  // name → position in entries_ (binding looks up by name)
  size_t total_ = 0;
};

// Typed views of one flat buffer θ (or of a gradient buffer with the same table). A tensor that a
// variant does not have (β under RMSNorm, W_p without learned positions, W_u when tied, the final
// γ, β of a post-LN GPT, W_gate without SwiGLU) is an empty view (size() == 0). With H_kv < H,
// the heads that share a key/value head view the same W_k, b_k, W_v, b_v storage.
template <class T>
struct AttentionHeadW {  // W_qkv of one head, eq. (4)
  MapM<T> W_q{nullptr, 0, 0};  // (d_attn, d_x)
  MapV<T> b_q{nullptr, 0};     // (d_attn)
  MapM<T> W_k{nullptr, 0, 0};  // (d_attn, d_z)
  MapV<T> b_k{nullptr, 0};     // (d_attn)
  MapM<T> W_v{nullptr, 0, 0};  // (d_mid, d_z)
  MapV<T> b_v{nullptr, 0};     // (d_mid)
};

template <class T>
struct MHAttentionW {  // W of eq. (4): H heads and the output projection
  std::vector<AttentionHeadW<T>> heads;
  MapM<T> W_o{nullptr, 0, 0};  // (d_out, H·d_mid)
  MapV<T> b_o{nullptr, 0};     // (d_out)
  // Not in the paper (position "relative", T5; issue 25): W_rel[h, k], head h's bias for distance
  // bucket k, in each self-attention (per layer; T5 shares one across layers). Empty otherwise.
  MapM<T> W_rel{nullptr, 0, 0};  // (H, relative_buckets)
};

template <class T>
struct LayerW {
  MHAttentionW<T> attn;
  MapV<T> gamma1{nullptr, 0}, beta1{nullptr, 0};  // (d_e)
  MapV<T> gamma2{nullptr, 0}, beta2{nullptr, 0};  // (d_e)
  MapM<T> W_mlp1{nullptr, 0, 0};                  // (d_mlp, d_e)
  MapV<T> b_mlp1{nullptr, 0};                     // (d_mlp)
  MapM<T> W_mlp2{nullptr, 0, 0};                  // (d_e, d_mlp)
  MapV<T> b_mlp2{nullptr, 0};                     // (d_e)
  MapM<T> W_gate{nullptr, 0, 0};                  // (d_mlp, d_e) SwiGLU only, else empty
  MapV<T> b_gate{nullptr, 0};                     // (d_mlp)      SwiGLU only, else empty
};

template <class T>
struct ExtrasW {  // the ecosystem extras (issue 11, not in the paper): empty views unless configured
  MapV<T> emb_gamma{nullptr, 0}, emb_beta{nullptr, 0};  // (d_e) embedding_norm: after e_t = W_e[:, x[t]] + W_p[:, t]
  MapM<T> W_s{nullptr, 0, 0};                          // (d_e, token_types): W_s[:, 1] added to every e_t
  MapV<T> b_u{nullptr, 0};                             // (N_V) unembedding_bias: softmax(W_u X + b_u 1ᵀ)
};

template <class T>
struct GptW {
  MapM<T> W_e{nullptr, 0, 0};  // (d_e, N_V)
  MapM<T> W_p{nullptr, 0, 0};  // (d_e, ℓ_max)
  std::vector<LayerW<T>> layers;
  MapV<T> gamma{nullptr, 0}, beta{nullptr, 0};  // (d_e), final layer norm (empty: post-LN)
  MapM<T> W_u{nullptr, 0, 0};                   // (N_V, d_e) (empty: tied, W_u = W_eᵀ)
  ExtrasW<T> extras;
};

template <class T>
struct BertW {  // Algorithm 9's parameters
  MapM<T> W_e{nullptr, 0, 0};  // (d_e, N_V)
  MapM<T> W_p{nullptr, 0, 0};  // (d_e, ℓ_max)
  std::vector<LayerW<T>> layers;
  MapV<T> enc_gamma{nullptr, 0}, enc_beta{nullptr, 0};  // (d_e) pre-LN only: the stack's final layer norm
  MapM<T> W_f{nullptr, 0, 0};                   // (d_f, d_e), line 10
  MapV<T> b_f{nullptr, 0};                      // (d_f)
  MapV<T> gamma{nullptr, 0}, beta{nullptr, 0};  // (d_f), line 11
  MapM<T> W_u{nullptr, 0, 0};                   // (N_V, d_f): the paper prints N_V×d_e, a slip
  ExtrasW<T> extras;
};

template <class T>
struct DecoderLayerW {  // one decoder layer of Algorithm 8 (lines 14–19)
  MHAttentionW<T> self_attn;                      // W^dec_l, causal self-attention
  MHAttentionW<T> cross_attn;                     // W^ed_l: W_q acts on X, W_k and W_v on Z
  MapV<T> gamma3{nullptr, 0}, beta3{nullptr, 0};  // (d_e)
  MapV<T> gamma4{nullptr, 0}, beta4{nullptr, 0};  // (d_e)
  MapV<T> gamma5{nullptr, 0}, beta5{nullptr, 0};  // (d_e)
  MapM<T> W_mlp3{nullptr, 0, 0};                  // (d_mlp, d_e)
  MapV<T> b_mlp3{nullptr, 0};                     // (d_mlp)
  MapM<T> W_mlp4{nullptr, 0, 0};                  // (d_e, d_mlp)
  MapV<T> b_mlp4{nullptr, 0};                     // (d_e)
  MapM<T> W_gate{nullptr, 0, 0};                  // (d_mlp, d_e) SwiGLU only: "W_gate2" in the checkpoint
  MapV<T> b_gate{nullptr, 0};                     // (d_mlp)      "b_gate2"
};

template <class T>
struct EdW {  // Algorithm 8's parameters
  MapM<T> W_e{nullptr, 0, 0};  // (d_e, N_V), shared by z and x
  MapM<T> W_p{nullptr, 0, 0};  // (d_e, ℓ_max)
  std::vector<LayerW<T>> enc;  // (L_enc) W^enc_l, γ¹ β¹ γ² β², W_mlp1, W_mlp2 (ReLU)
  std::vector<DecoderLayerW<T>> dec;  // (L_dec)
  MapM<T> W_u{nullptr, 0, 0};  // (N_V, d_e)
  MapV<T> enc_gamma{nullptr, 0}, enc_beta{nullptr, 0};  // (d_e) pre-LN only: after the encoder stack
  MapV<T> dec_gamma{nullptr, 0}, dec_beta{nullptr, 0};  // (d_e) pre-LN only: after the decoder stack
  ExtrasW<T> extras;
};

// Views of one tensor of `theta` (table.total() elements) by its checkpoint name; k is the head
// for per-head tensors. Throw sf::Error when the table has no such tensor.
template <class T>
MapM<T> bind_matrix(const ParamTable& table, T* theta, const std::string& name, int k = 0);
template <class T>
MapV<T> bind_vector(const ParamTable& table, T* theta, const std::string& name, int k = 0);
// The same, or an empty view when the table has no such tensor (a variant without it).
template <class T>
MapM<T> bind_matrix_if(const ParamTable& table, T* theta, const std::string& name);
template <class T>
MapV<T> bind_vector_if(const ParamTable& table, T* theta, const std::string& name);
// The eight tensors of add_mh_attention(prefix, …).
template <class T>
MHAttentionW<T> bind_mh_attention(const ParamTable& table, T* theta, const std::string& prefix);
// One layer's attention (prefix "layer1.attn."), γ¹ β¹ γ² β² and the MLP (prefix "layer1."), as
// Algorithms 9 and 10 and the encoder of Algorithm 8 name them.
template <class T>
LayerW<T> bind_layer(const ParamTable& table, T* theta, const std::string& prefix, const std::string& attn);

// The extras of any architecture's table (empty views for those it does not have).
template <class T>
ExtrasW<T> bind_extras(const ParamTable& table, T* theta);

// Binds views over `theta` (table.total() elements) of a GPT (Algorithm 10) table.
template <class T>
GptW<T> bind_gpt(const ParamTable& table, T* theta);
// … of a BERT (Algorithm 9) table (core/arch/bert.cpp).
template <class T>
BertW<T> bind_bert(const ParamTable& table, T* theta);
// … of an encoder-decoder (Algorithm 8) table (core/arch/ed.cpp).
template <class T>
EdW<T> bind_ed(const ParamTable& table, T* theta);

// Seeded, deterministic initialisation (GPT-2 style): weights ~ N(0, 0.02²), output
// projections ~ N(0, (0.02/√(2L))²), biases and β = 0, γ = 1.
void init_params(const ModelConfig& c, const ParamTable& table, uint64_t seed, float* theta);

// The paper's sinusoid (§5): W_p[2i−1,t] = sin(t / base^{2i/d_e}), W_p[2i,t] = cos(…),
// with base = ℓ_max (the paper) or 10000 (Vaswani et al.). Column t is position t (1-based).
// Position "sinusoidal" computes it (never stored, never trained).
Mat<double> sinusoid_positions(int d_e, int l_max, double base);  // in double; callers cast

// A model: configuration, parameter table, parameters θ.
struct Model {
  ModelConfig config;
  ParamTable table;
  std::vector<float> theta;

  explicit Model(const ModelConfig& c) : config(c), table(c), theta(table.total(), 0.0f) {}
  static Model initialised(const ModelConfig& c, uint64_t seed);
  // Views for a GPT model (Algorithm 10); other architectures bind their own (core/arch/).
  GptW<float> mutable_weights() { return bind_gpt<float>(table, theta.data()); }
  GptW<const float> weights() const { return bind_gpt<const float>(table, theta.data()); }
};

}  // namespace sf
