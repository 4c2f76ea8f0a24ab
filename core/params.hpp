// One table of named parameters θ: the paper's names and shapes, one flat storage.
//
// The table drives seeded initialisation, checkpoint I/O, the optimizer loop, the tensor
// browser and the reference tests. Every entry is a stack of `count` matrices of rows×cols
// (count = H for per-head tensors, 1 otherwise), stored column-major, one after another, in a
// single flat buffer; the checkpoint writes each as row-major [count,] rows, cols.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/types.hpp"

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
  explicit ParamTable(const ModelConfig& c);
  const std::vector<ParamEntry>& entries() const { return entries_; }
  size_t total() const { return total_; }
  // nullptr when no entry has that name.
  const ParamEntry* find(const std::string& name) const;

 private:
  void add(std::string name, std::string symbol, int layer, int count, int rows, int cols, ParamRole role);
  std::vector<ParamEntry> entries_;
  size_t total_ = 0;
};

// Typed views of one flat buffer θ (or of a gradient buffer with the same table).
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
};

template <class T>
struct GptW {
  MapM<T> W_e{nullptr, 0, 0};  // (d_e, N_V)
  MapM<T> W_p{nullptr, 0, 0};  // (d_e, ℓ_max)
  std::vector<LayerW<T>> layers;
  MapV<T> gamma{nullptr, 0}, beta{nullptr, 0};  // (d_e), final layer norm
  MapM<T> W_u{nullptr, 0, 0};                   // (N_V, d_e)
};

// Binds views over `theta` (table.total() elements).
template <class T>
GptW<T> bind_gpt(const ParamTable& table, T* theta);

// Seeded, deterministic initialisation (GPT-2 style): weights ~ N(0, 0.02²), output
// projections ~ N(0, (0.02/√(2L))²), biases and β = 0, γ = 1; W_p by config.position_init.
void init_params(const ModelConfig& c, const ParamTable& table, uint64_t seed, float* theta);

// The paper's sinusoid (§5): W_p[2i−1,t] = sin(t / base^{2i/d_e}), W_p[2i,t] = cos(…),
// with base = ℓ_max (the paper) or 10000 (Vaswani et al.). Column t is position t (1-based).
MatF sinusoid_positions(int d_e, int l_max, double base);

// A model: configuration, parameter table, parameters θ.
struct Model {
  ModelConfig config;
  ParamTable table;
  std::vector<float> theta;

  explicit Model(const ModelConfig& c) : config(c), table(c), theta(table.total(), 0.0f) {}
  static Model initialised(const ModelConfig& c, uint64_t seed);
  GptW<float> mutable_weights() { return bind_gpt<float>(table, theta.data()); }
  GptW<const float> weights() const { return bind_gpt<const float>(table, theta.data()); }
};

}  // namespace sf
