#include "core/params.hpp"

#include <cmath>
#include <random>

#include "core/rng.hpp"

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
  entries_.push_back(std::move(e));
}

ParamTable::ParamTable(const ModelConfig& c) {
  const int H = c.H, d_e = c.d_e, d_attn = c.d_attn, d_mid = c.d_mid, d_mlp = c.d_mlp, N_V = c.N_V();
  add("W_e", "W_e", 0, 1, d_e, N_V, ParamRole::Embedding);
  add("W_p", "W_p", 0, 1, d_e, c.l_max, ParamRole::Position);
  for (int l = 1; l <= c.L; ++l) {
    const std::string p = "layer" + std::to_string(l) + ".";
    add(p + "gamma1", "γ¹_l", l, 1, d_e, 1, ParamRole::Gain);
    add(p + "beta1", "β¹_l", l, 1, d_e, 1, ParamRole::Offset);
    add(p + "attn.W_q", "W_q^h", l, H, d_attn, d_e, ParamRole::Weight);
    add(p + "attn.b_q", "b_q^h", l, H, d_attn, 1, ParamRole::Bias);
    add(p + "attn.W_k", "W_k^h", l, H, d_attn, d_e, ParamRole::Weight);
    add(p + "attn.b_k", "b_k^h", l, H, d_attn, 1, ParamRole::Bias);
    add(p + "attn.W_v", "W_v^h", l, H, d_mid, d_e, ParamRole::Weight);
    add(p + "attn.b_v", "b_v^h", l, H, d_mid, 1, ParamRole::Bias);
    add(p + "attn.W_o", "W_o", l, 1, d_e, H * d_mid, ParamRole::OutputWeight);
    add(p + "attn.b_o", "b_o", l, 1, d_e, 1, ParamRole::Bias);
    add(p + "gamma2", "γ²_l", l, 1, d_e, 1, ParamRole::Gain);
    add(p + "beta2", "β²_l", l, 1, d_e, 1, ParamRole::Offset);
    add(p + "W_mlp1", "W^l_mlp1", l, 1, d_mlp, d_e, ParamRole::Weight);
    add(p + "b_mlp1", "b^l_mlp1", l, 1, d_mlp, 1, ParamRole::Bias);
    add(p + "W_mlp2", "W^l_mlp2", l, 1, d_e, d_mlp, ParamRole::OutputWeight);
    add(p + "b_mlp2", "b^l_mlp2", l, 1, d_e, 1, ParamRole::Bias);
  }
  add("gamma", "γ", 0, 1, d_e, 1, ParamRole::Gain);
  add("beta", "β", 0, 1, d_e, 1, ParamRole::Offset);
  add("W_u", "W_u", 0, 1, N_V, d_e, ParamRole::Weight);
}

const ParamEntry* ParamTable::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

template <class T>
GptW<T> bind_gpt(const ParamTable& table, T* theta) {
  GptW<T> w;
  auto mat = [&](MapM<T>& m, const ParamEntry& e, int k) { new (&m) MapM<T>(theta + e.offset + k * e.matrix_size(), e.rows, e.cols); };
  auto vec = [&](MapV<T>& v, const ParamEntry& e, int k) { new (&v) MapV<T>(theta + e.offset + k * e.matrix_size(), e.rows); };
  for (const auto& e : table.entries()) {
    if (e.layer > 0 && static_cast<int>(w.layers.size()) < e.layer) w.layers.resize(e.layer);
    const std::string leaf = e.layer > 0 ? e.name.substr(e.name.find('.') + 1) : e.name;
    if (e.layer == 0) {
      if (leaf == "W_e") mat(w.W_e, e, 0);
      else if (leaf == "W_p") mat(w.W_p, e, 0);
      else if (leaf == "gamma") vec(w.gamma, e, 0);
      else if (leaf == "beta") vec(w.beta, e, 0);
      else if (leaf == "W_u") mat(w.W_u, e, 0);
      continue;
    }
    LayerW<T>& lw = w.layers[e.layer - 1];
    auto& heads = lw.attn.heads;
    if (static_cast<int>(heads.size()) < e.count) heads.resize(e.count);
    if (leaf == "gamma1") vec(lw.gamma1, e, 0);
    else if (leaf == "beta1") vec(lw.beta1, e, 0);
    else if (leaf == "gamma2") vec(lw.gamma2, e, 0);
    else if (leaf == "beta2") vec(lw.beta2, e, 0);
    else if (leaf == "W_mlp1") mat(lw.W_mlp1, e, 0);
    else if (leaf == "b_mlp1") vec(lw.b_mlp1, e, 0);
    else if (leaf == "W_mlp2") mat(lw.W_mlp2, e, 0);
    else if (leaf == "b_mlp2") vec(lw.b_mlp2, e, 0);
    else if (leaf == "attn.W_o") mat(lw.attn.W_o, e, 0);
    else if (leaf == "attn.b_o") vec(lw.attn.b_o, e, 0);
    else
      for (int h = 0; h < e.count; ++h) {
        AttentionHeadW<T>& hw = heads[h];
        if (leaf == "attn.W_q") mat(hw.W_q, e, h);
        else if (leaf == "attn.b_q") vec(hw.b_q, e, h);
        else if (leaf == "attn.W_k") mat(hw.W_k, e, h);
        else if (leaf == "attn.b_k") vec(hw.b_k, e, h);
        else if (leaf == "attn.W_v") mat(hw.W_v, e, h);
        else if (leaf == "attn.b_v") vec(hw.b_v, e, h);
      }
  }
  return w;
}

template GptW<float> bind_gpt<float>(const ParamTable&, float*);
template GptW<const float> bind_gpt<const float>(const ParamTable&, const float*);
template GptW<double> bind_gpt<double>(const ParamTable&, double*);
template GptW<const double> bind_gpt<const double>(const ParamTable&, const double*);

MatF sinusoid_positions(int d_e, int l_max, double base) {
  MatF W_p = MatF::Zero(d_e, l_max);  // (d_e, ℓ_max)
  for (int t = 1; t <= l_max; ++t)
    for (int i = 1; 2 * i <= d_e; ++i) {
      const double angle = t / std::pow(base, 2.0 * i / d_e);
      W_p(2 * i - 2, t - 1) = static_cast<float>(std::sin(angle));  // W_p[2i−1, t]
      W_p(2 * i - 1, t - 1) = static_cast<float>(std::cos(angle));  // W_p[2i, t]
    }
  return W_p;
}

void init_params(const ModelConfig& c, const ParamTable& table, uint64_t seed, float* theta) {
  Rng rng(seed);
  const double out_std = 0.02 / std::sqrt(2.0 * c.L);
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
        if (c.position_init != PositionInit::Learned) {
          const double base = c.position_init == PositionInit::SinusoidLmax ? c.l_max : 10000.0;
          MatF W_p = sinusoid_positions(c.d_e, c.l_max, base);
          std::copy(W_p.data(), W_p.data() + n, p);
          break;
        }
        [[fallthrough]];
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
