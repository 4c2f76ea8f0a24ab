// Models, sequences and helpers shared by the traced backward's tests (test_backprop_*.cpp).
#pragma once
#include <string>
#include <vector>

#include "core/backprop/traced_backward.hpp"
#include "core/gradients/sequence_gradient.hpp"
#include "core/io/checkpoint.hpp"
#include "core/model/params.hpp"
#include "core/model/rng.hpp"
#include "core/trace/trace.hpp"
#include "grad_check.hpp"
#include "reference_json.hpp"

namespace sf::test {

// A small GPT: every variant's code path, small enough for finite differences in double.
inline ModelConfig small_gpt() {
  ModelConfig c;
  c.L = 2;
  c.H = 2;
  c.d_e = 8;
  c.d_attn = 4;
  c.d_mid = 3;  // ≠ d_attn: a transposed key/value size would not fit
  c.d_mlp = 10;
  c.l_max = 12;
  c.vocab = {"a", "b", "c", "d", "="};  // N_V = 8
  return c;
}

// A named configuration: the paper's GPT and the variant mixes the issue asks for.
struct Mix {
  std::string name;
  ModelConfig c;
};
inline std::vector<Mix> gpt_mixes() {
  std::vector<Mix> m;
  m.push_back({"paper", small_gpt()});
  ModelConfig a = small_gpt();  // RMSNorm + RoPE + SwiGLU + tied + H_kv = 1
  a.norm = Norm::RmsNorm;
  a.position = Position::Rope;
  a.activation = Activation::SwiGLU;
  a.tied_unembedding = true;
  a.H_kv = 1;
  m.push_back({"rms_rope_swiglu_tied_hkv1", a});
  ModelConfig b = small_gpt();  // post-LN + ALiBi + gelu_tanh
  b.norm_position = NormPosition::Post;
  b.position = Position::Alibi;
  b.activation = Activation::GELUTanh;
  m.push_back({"postln_alibi_gelutanh", b});
  ModelConfig p = small_gpt();  // prefix-LM mask (with ReLU: the third element-wise activation)
  p.mask = MaskKind::Prefix;
  p.activation = Activation::ReLU;
  m.push_back({"prefix_relu", p});
  ModelConfig s = small_gpt();  // sinusoidal positions
  s.position = Position::Sinusoidal;
  m.push_back({"sinusoidal", s});
  ModelConfig e = small_gpt();  // the ecosystem extras (not in the paper): W_s, embedding norm, b_u
  e.token_types = 2;
  e.embedding_norm = true;
  e.unembedding_bias = true;
  m.push_back({"extras", e});
  ModelConfig w = small_gpt();  // issue 25: a sliding window and T5's relative bias (∇W_rel)
  w.window = 2;
  w.position = Position::Relative;
  w.relative_buckets = 4;
  w.relative_max_distance = 5;
  m.push_back({"window_relative", w});
  return m;
}

// A sequence with a repeated token (∇W_e accumulates) and a prefix separator at position 3 (id 5:
// "=", so the prefix-LM mix has p = 3).
inline Tokens sample_x() { return {1, 2, 5, 3, 1, 4, 2}; }

// θ with spread (γ around 1, everything else N(0, 0.3²)) so that no path is negligible.
inline Model spread_model(const ModelConfig& c, uint64_t seed) { return spread_model(c, seed + 100, 0.3); }

// The first event at or after `from` with this (alg, line, pass, kind) and, where given (> 0), indices l, h, t.
inline size_t find_event(const Trace& tr, LineRef ref, EventKind kind = EventKind::Line, int l = 0, int h = 0,
                         int t = 0, size_t from = 0) {
  for (size_t k = from; k < tr.size(); ++k) {
    const Event& e = tr.events[k];
    if (e.ref() == ref && e.kind == kind && (l == 0 || e.idx.l == l) && (h == 0 || e.idx.h == h) &&
        (t == 0 || e.idx.t == t))
      return k;
  }
  return tr.size();
}

// The value named `name` that event k binds; nullptr if none.
inline const Value* bound(const Trace& tr, size_t k, const std::string& name) {
  if (k >= tr.size()) return nullptr;
  for (const Value& v : tr.events[k].values)
    if (v.name == name) return &v;
  return nullptr;
}

// The batch of a torch reference case (tests/data/backprop/index.json): x, and z (encoder-decoder) or
// the masked positions (BERT).
inline Batch reference_batch(const json& k, const ModelConfig& c) {
  const Tokens x = k.at("x").get<Tokens>();
  if (k.contains("masks")) return masked_batch(x, k.at("masks").get<std::vector<int>>(), c.mask_token());
  return next_token_batch(k.contains("z") ? k.at("z").get<Tokens>() : Tokens{}, x);
}

// A model and the one sequence its traced backward runs on.
struct NamedRun {
  std::string name;
  Model model;
  Batch batch;
};
// The torch reference's seven models (GPT, BERT, the encoder-decoder and their variant mixes), with
// their checkpoints' θ and sequences.
inline std::vector<NamedRun> torch_reference_runs() {
  std::vector<NamedRun> out;
  const json doc = load_test_json("backprop/index.json");  // kept: a range-for over a temporary's member dangles
  for (const json& k : doc.at("cases")) {
    Model m = load_checkpoint(std::string(STEPFORMER_TEST_DATA) + "/backprop/" + k.at("checkpoint").get<std::string>()).model;
    Batch b = reference_batch(k, m.config);
    out.push_back({k.at("name").get<std::string>(), std::move(m), std::move(b)});
  }
  return out;
}

}  // namespace sf::test
