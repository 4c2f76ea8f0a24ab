#include "core/model/params.hpp"

#include <cmath>
#include <random>

#include "core/arch/architecture.hpp"
#include "core/model/error.hpp"
#include "core/model/rng.hpp"

namespace sf {

std::vector<int64_t> ParamEntry::shape() const {
  std::vector<int64_t> s;
  if (count > 1) s.push_back(count);
  s.push_back(rows);
  if (cols > 1 || role == ParamRole::Weight || role == ParamRole::OutputWeight || role == ParamRole::Embedding ||
      role == ParamRole::Position)
    s.push_back(cols);
  return s;
}

void ParamTable::add(std::string name, std::string symbol, int layer, int count, int rows, int cols, ParamRole role) {
  ParamEntry e;
  e.name = std::move(name);
  e.symbol = std::move(symbol);
  e.layer = layer;
  e.count = count;
  e.rows = rows;
  e.cols = cols;
  e.role = role;
  e.offset = total_;
  total_ += e.size();
  index_.emplace(e.name, entries_.size());
  entries_.push_back(std::move(e));
}

ParamTable::ParamTable(const ModelConfig& c) { architecture(c).build_table(c, *this); }

void ParamTable::add_mh_attention(const std::string& p, const std::string& sup, int l, const ModelConfig& c) {
  const int H = c.H, H_kv = c.kv_heads(), d_e = c.d_e, d_attn = c.d_attn, d_mid = c.d_mid;
  const std::string h = sup.empty() ? "^h" : "^{h," + sup + "}";  // W_q^h or W_q^{h,enc}
  const std::string g = H_kv == H ? h : sup.empty() ? "^g" : "^{g," + sup + "}";  // shared: key/value head g
  add(p + "W_q", "W_q" + h, l, H, d_attn, d_e, ParamRole::Weight);
  add(p + "b_q", "b_q" + h, l, H, d_attn, 1, ParamRole::Bias);
  add(p + "W_k", "W_k" + g, l, H_kv, d_attn, d_e, ParamRole::Weight);
  add(p + "b_k", "b_k" + g, l, H_kv, d_attn, 1, ParamRole::Bias);
  add(p + "W_v", "W_v" + g, l, H_kv, d_mid, d_e, ParamRole::Weight);
  add(p + "b_v", "b_v" + g, l, H_kv, d_mid, 1, ParamRole::Bias);
  add(p + "W_o", sup.empty() ? "W_o" : "W_o^" + sup, l, 1, d_e, H * d_mid, ParamRole::OutputWeight);
  add(p + "b_o", sup.empty() ? "b_o" : "b_o^" + sup, l, 1, d_e, 1, ParamRole::Bias);
  // Variant (relative position bias, T5; issue 25): self-attentions only, per layer ("ed" is the cross-attention).
  if (c.position == Position::Relative && sup != "ed")
    add(p + "W_rel", sup.empty() ? "W^l_rel" : "W^{l," + sup + "}_rel", l, 1, H, c.relative_buckets, ParamRole::Weight);
}

void ParamTable::add_layer_norm(const std::string& p, const std::string& k, int l, int d, const ModelConfig& c) {
  static const char* kSup[] = {"", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  const std::string sup = k.size() == 1 && k[0] >= '1' && k[0] <= '9' ? kSup[k[0] - '0'] : k;
  const std::string sub = l > 0 ? "_l" : "";
  add(p + "gamma" + k, "γ" + sup + sub, l, 1, d, 1, ParamRole::Gain);
  if (c.norm == Norm::LayerNorm) add(p + "beta" + k, "β" + sup + sub, l, 1, d, 1, ParamRole::Offset);
}

void ParamTable::add_mlp(const std::string& p, int a, int b, int l, const ModelConfig& c) {
  const std::string A = std::to_string(a), B = std::to_string(b);
  add(p + "W_mlp" + A, "W^l_mlp" + A, l, 1, c.d_mlp, c.d_e, ParamRole::Weight);
  add(p + "b_mlp" + A, "b^l_mlp" + A, l, 1, c.d_mlp, 1, ParamRole::Bias);
  add(p + "W_mlp" + B, "W^l_mlp" + B, l, 1, c.d_e, c.d_mlp, ParamRole::OutputWeight);
  add(p + "b_mlp" + B, "b^l_mlp" + B, l, 1, c.d_e, 1, ParamRole::Bias);
  if (c.act() == Activation::SwiGLU) {
    const std::string G = a == 1 ? "" : "2";  // the encoder-decoder's decoder MLP (W_mlp3) has W_gate2
    add(p + "W_gate" + G, "W^l_gate" + G, l, 1, c.d_mlp, c.d_e, ParamRole::Weight);
    add(p + "b_gate" + G, "b^l_gate" + G, l, 1, c.d_mlp, 1, ParamRole::Bias);
  }
}

void ParamTable::add_embedding_extras(const ModelConfig& c) {
  if (c.embedding_norm) {
    add("emb.gamma", "γ_emb", 0, 1, c.d_e, 1, ParamRole::Gain);
    add("emb.beta", "β_emb", 0, 1, c.d_e, 1, ParamRole::Offset);
  }
  if (c.token_types > 0) add("W_s", "W_s", 0, 1, c.d_e, c.token_types, ParamRole::Embedding);
}

void ParamTable::add_unembedding_bias(const ModelConfig& c) {
  if (c.unembedding_bias) add("b_u", "b_u", 0, 1, c.N_V(), 1, ParamRole::Bias);
}

const ParamEntry* ParamTable::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

const ParamEntry& ParamTable::at(const std::string& name) const {
  if (const ParamEntry* e = find(name)) return *e;
  throw Error("the parameter table has no tensor \"" + name + "\"");
}

namespace {

// Points an Eigen::Map (which cannot be assigned) at another map's storage.
template <class M>
void rebind(M& m, const M& to) {
  new (&m) M(to);
}

}  // namespace

template <class T>
MapM<T> bind_matrix(const ParamTable& table, T* theta, const std::string& name, int k) {
  const ParamEntry& e = table.at(name);
  return MapM<T>(theta + e.offset + k * e.matrix_size(), e.rows, e.cols);
}

template <class T>
MapV<T> bind_vector(const ParamTable& table, T* theta, const std::string& name, int k) {
  const ParamEntry& e = table.at(name);
  return MapV<T>(theta + e.offset + k * e.matrix_size(), e.rows);
}

template <class T>
MapM<T> bind_matrix_if(const ParamTable& table, T* theta, const std::string& name) {
  return table.find(name) ? bind_matrix<T>(table, theta, name) : MapM<T>(nullptr, 0, 0);
}

template <class T>
MapV<T> bind_vector_if(const ParamTable& table, T* theta, const std::string& name) {
  return table.find(name) ? bind_vector<T>(table, theta, name) : MapV<T>(nullptr, 0);
}

template <class T>
MHAttentionW<T> bind_mh_attention(const ParamTable& table, T* theta, const std::string& p) {
  MHAttentionW<T> w;
  const int H = table.at(p + "W_q").count, H_kv = table.at(p + "W_k").count;
  w.heads.resize(H);
  for (int h = 0; h < H; ++h) {
    AttentionHeadW<T>& hw = w.heads[h];
    const int g = h * H_kv / H;  // the key/value head of query head h (0-based): ⌊(h−1)·H_kv/H⌋ + 1
    rebind(hw.W_q, bind_matrix<T>(table, theta, p + "W_q", h));
    rebind(hw.b_q, bind_vector<T>(table, theta, p + "b_q", h));
    rebind(hw.W_k, bind_matrix<T>(table, theta, p + "W_k", g));
    rebind(hw.b_k, bind_vector<T>(table, theta, p + "b_k", g));
    rebind(hw.W_v, bind_matrix<T>(table, theta, p + "W_v", g));
    rebind(hw.b_v, bind_vector<T>(table, theta, p + "b_v", g));
  }
  rebind(w.W_o, bind_matrix<T>(table, theta, p + "W_o"));
  rebind(w.b_o, bind_vector<T>(table, theta, p + "b_o"));
  rebind(w.W_rel, bind_matrix_if<T>(table, theta, p + "W_rel"));
  return w;
}

template <class T>
LayerW<T> bind_layer(const ParamTable& table, T* theta, const std::string& p, const std::string& attn) {
  LayerW<T> w;
  MHAttentionW<T> a = bind_mh_attention<T>(table, theta, p + attn);
  w.attn.heads = std::move(a.heads);
  rebind(w.attn.W_o, a.W_o);
  rebind(w.attn.b_o, a.b_o);
  rebind(w.attn.W_rel, a.W_rel);
  rebind(w.gamma1, bind_vector<T>(table, theta, p + "gamma1"));
  rebind(w.beta1, bind_vector_if<T>(table, theta, p + "beta1"));
  rebind(w.gamma2, bind_vector<T>(table, theta, p + "gamma2"));
  rebind(w.beta2, bind_vector_if<T>(table, theta, p + "beta2"));
  rebind(w.W_mlp1, bind_matrix<T>(table, theta, p + "W_mlp1"));
  rebind(w.b_mlp1, bind_vector<T>(table, theta, p + "b_mlp1"));
  rebind(w.W_mlp2, bind_matrix<T>(table, theta, p + "W_mlp2"));
  rebind(w.b_mlp2, bind_vector<T>(table, theta, p + "b_mlp2"));
  rebind(w.W_gate, bind_matrix_if<T>(table, theta, p + "W_gate"));
  rebind(w.b_gate, bind_vector_if<T>(table, theta, p + "b_gate"));
  return w;
}

template <class T>
GptW<T> bind_gpt(const ParamTable& table, T* theta) {
  GptW<T> w;
  rebind(w.W_e, bind_matrix<T>(table, theta, "W_e"));
  rebind(w.W_p, bind_matrix_if<T>(table, theta, "W_p"));
  for (int l = 1; table.find("layer" + std::to_string(l) + ".gamma1"); ++l)
    w.layers.push_back(bind_layer<T>(table, theta, "layer" + std::to_string(l) + ".", "attn."));
  rebind(w.gamma, bind_vector_if<T>(table, theta, "gamma"));
  rebind(w.beta, bind_vector_if<T>(table, theta, "beta"));
  rebind(w.W_u, bind_matrix_if<T>(table, theta, "W_u"));
  rebind(w.extras, bind_extras<T>(table, theta));
  return w;
}

template <class T>
ExtrasW<T> bind_extras(const ParamTable& table, T* theta) {
  ExtrasW<T> x;
  rebind(x.emb_gamma, bind_vector_if<T>(table, theta, "emb.gamma"));
  rebind(x.emb_beta, bind_vector_if<T>(table, theta, "emb.beta"));
  rebind(x.W_s, bind_matrix_if<T>(table, theta, "W_s"));
  rebind(x.b_u, bind_vector_if<T>(table, theta, "b_u"));
  return x;
}

#define SF_INSTANTIATE_BINDINGS(T)                                                                      \
  template MapM<T> bind_matrix<T>(const ParamTable&, T*, const std::string&, int);                      \
  template MapV<T> bind_vector<T>(const ParamTable&, T*, const std::string&, int);                      \
  template MapM<T> bind_matrix_if<T>(const ParamTable&, T*, const std::string&);                        \
  template MapV<T> bind_vector_if<T>(const ParamTable&, T*, const std::string&);                        \
  template MHAttentionW<T> bind_mh_attention<T>(const ParamTable&, T*, const std::string&);             \
  template LayerW<T> bind_layer<T>(const ParamTable&, T*, const std::string&, const std::string&);
SF_INSTANTIATE_BINDINGS(float)
SF_INSTANTIATE_BINDINGS(const float)
SF_INSTANTIATE_BINDINGS(double)
SF_INSTANTIATE_BINDINGS(const double)
#undef SF_INSTANTIATE_BINDINGS

template ExtrasW<float> bind_extras<float>(const ParamTable&, float*);
template ExtrasW<const float> bind_extras<const float>(const ParamTable&, const float*);
template ExtrasW<double> bind_extras<double>(const ParamTable&, double*);
template ExtrasW<const double> bind_extras<const double>(const ParamTable&, const double*);
template GptW<float> bind_gpt<float>(const ParamTable&, float*);
template GptW<const float> bind_gpt<const float>(const ParamTable&, const float*);
template GptW<double> bind_gpt<double>(const ParamTable&, double*);
template GptW<const double> bind_gpt<const double>(const ParamTable&, const double*);

Mat<double> sinusoid_positions(int d_e, int l_max, double base) {
  Mat<double> W_p = Mat<double>::Zero(d_e, l_max);  // (d_e, ℓ_max)
  for (int t = 1; t <= l_max; ++t)
    for (int i = 1; 2 * i <= d_e; ++i) {
      const double angle = t / std::pow(base, 2.0 * i / d_e);
      W_p(2 * i - 2, t - 1) = std::sin(angle);  // W_p[2i−1, t]
      W_p(2 * i - 1, t - 1) = std::cos(angle);  // W_p[2i, t]
    }
  return W_p;
}

void init_params(const ModelConfig&, const ParamTable& table, uint64_t seed, float* theta) {
  Rng rng(seed);
  // GPT-2 scales the residual branches' output projections by 1/√(number of branches): 2L in
  // GPT-2 (W_o and W_mlp2 of each layer), counted from the table for every architecture.
  int branches = 0;
  for (const auto& e : table.entries()) branches += e.role == ParamRole::OutputWeight;
  const double out_std = 0.02 / std::sqrt(std::max(1.0, static_cast<double>(branches)));
  for (const auto& e : table.entries()) {
    float* p = theta + e.offset;
    const size_t n = e.size();
    switch (e.role) {
      case ParamRole::Gain: std::fill(p, p + n, 1.0f); break;
      case ParamRole::Bias:
      case ParamRole::Offset: std::fill(p, p + n, 0.0f); break;
      case ParamRole::OutputWeight:
        for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(out_std * rng.normal());
        break;
      case ParamRole::Position:
      case ParamRole::Weight:
      case ParamRole::Embedding:
        for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(0.02 * rng.normal());
        break;
    }
  }
}

Model Model::initialised(const ModelConfig& c, uint64_t seed) {
  Model m(c);
  init_params(c, m.table, seed, m.theta.data());
  return m;
}

}  // namespace sf
