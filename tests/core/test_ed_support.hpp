// Shared by tests/core/test_ed*.cpp (the encoder-decoder): its configuration, the message of a
// refusal, three pairs and their summed loss, pairs as one padded Batch, values bound by trace
// events, a relative gap between matrices that may hold −∞; θ with spread comes from test_bert_support.hpp (spread_theta).
#pragma once
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/ed.hpp"
#include "core/gradients/grad_edtransformer.hpp"
#include "core/model/error.hpp"
#include "grad_check.hpp"
#include "test_bert_support.hpp"

namespace sf::test {

// "arch": "ed" with these sizes; N_V = vocab.size() + 3.
inline ModelConfig ed_test_config(int L_enc, int L_dec, int H, int d_e, int d_attn, int d_mid, int d_mlp, int l_max,
                                  std::vector<std::string> vocab) {
  return {.arch = "ed", .L_enc = L_enc, .L_dec = L_dec, .H = H, .d_e = d_e, .d_attn = d_attn, .d_mid = d_mid,
          .d_mlp = d_mlp, .l_max = l_max, .vocab = std::move(vocab)};
}

// A model of configuration c (any architecture) with θ in double, every entry N(0, scale²) (γ's
// around 1); W() binds it as an encoder-decoder's, model() rounds it to float, as a checkpoint holds it.
struct SpreadModel {
  ModelConfig c;
  ParamTable table{c};
  std::vector<double> theta;
  SpreadModel(ModelConfig config, uint64_t seed, double scale)
      : c(std::move(config)), table(c), theta(spread_theta(table, seed, scale)) {}
  EdW<const double> W() const { return bind_ed<const double>(table, theta.data()); }
  Model model() const {
    Model m(c);
    m.theta.assign(theta.begin(), theta.end());
    return m;
  }
};

// What f throws as sf::Error ("" when it throws nothing).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The pairs as one Batch (EdArchitecture::make_batch), x padded to the longest x and z to the
// longest z (or to l, l_z when given).
inline Batch pair_batch(const std::vector<Example>& pairs, int l = 0, int l_z = 0) {
  std::vector<size_t> all;
  for (const Example& ex : pairs) {
    all.push_back(all.size());
    l = std::max(l, static_cast<int>(ex.x.size()));
    l_z = std::max(l_z, static_cast<int>(ex.z.size()));
  }
  Batch b;
  Rng rng(1);
  EdArchitecture().make_batch(ModelConfig{}, pairs, all, l, l_z, TrainOptions{}, rng, b);  // pads with id 1
  return b;
}

// Every value `name` bound by events (kind, alg, line) with layer l and head h (0: not in
// force), in trace order.
inline std::vector<MatD> traced_all(const Trace& tr, EventKind kind, int alg, int line, int l, int h,
                                    const std::string& name) {
  std::vector<MatD> out;
  for (const Event& e : tr.events)
    if (e.kind == kind && e.alg == alg && e.line == line && e.idx.l == l && e.idx.h == h)
      if (const Value* v = find_value(e, name)) out.push_back(v->m.cast<double>());
  return out;
}
// The nth of them (0-based); throws when there are fewer.
inline MatD traced(const Trace& tr, EventKind kind, int alg, int line, int l, int h, const std::string& name,
                   size_t nth = 0) {
  const std::vector<MatD> all = traced_all(tr, kind, alg, line, l, h, name);
  if (nth >= all.size()) throw std::runtime_error("no traced value " + name + " at Algorithm " + std::to_string(alg) +
                                                  " line " + std::to_string(line));
  return all[nth];
}

// Three pairs (z, x) with different ℓ_z and ℓ_x for a vocab of 4 letters (bos_token 6, eos_token 7).
inline const std::vector<Example> kEdPairs{
    {{6, 1, 7}, {6, 2, 3, 7}}, {{6, 4, 4, 2, 1, 3, 7}, {6, 1, 7}}, {{6, 2, 2, 7}, {6, 3, 1, 4, 2, 7}}};

// Σ over the pairs of −Σ_{t=1}^{ℓ−1} log P[x[t+1], t], P from core's Algorithm 8 (an independent
// forward for the gradients' central differences).
inline double ed_summed_loss(const std::vector<Example>& pairs, const ModelConfig& c, const EdW<const double>& W) {
  double loss = 0;
  for (const Example& ex : pairs) {
    const MatD P = edtransformer<double>(ex.z, ex.x, c, W);
    for (size_t t = 0; t + 1 < ex.x.size(); ++t) loss -= std::log(P(ex.x[t + 1] - 1, t));
  }
  return loss;
}

// max over the entries of |a − b| / max(1, |b|); −∞ must stand at the same places in both (else ∞).
inline double gap(const MatD& a, const MatD& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  const auto inf_a = a.array().isInf(), inf_b = b.array().isInf();
  if ((inf_a != inf_b).any()) return INFINITY;
  if (a.size() == 0) return 0;
  return inf_b.select(0.0, (a - b).array().abs() / b.array().abs().max(1.0)).maxCoeff();
}

}  // namespace sf::test
