// The statements Algorithms 8, 9 and 10 share, with every variant (variant_layers.hpp).
#include "core/algorithms/variant_layers.hpp"
#include "core/parallel/parallel.hpp"
#include "core/trace/value_keys.hpp"

#include <map>
#include <mutex>
#include <tuple>

namespace sf::variant_layers {

namespace {

// The sinusoid (§5 of the paper) for (d_e, ℓ_max, base), computed once per shape and base.
const Mat<double>& cached_sinusoid(int d_e, int l_max, double base) {
  static std::mutex m;
  static std::map<std::tuple<int, int, double>, Mat<double>> cache;
  const std::lock_guard<std::mutex> lock(m);
  auto [it, fresh] = cache.try_emplace({d_e, l_max, base});
  if (fresh) it->second = sinusoid_positions(d_e, l_max, base);
  return it->second;  // map nodes never move
}

std::string no_position_note(Position p) {
  switch (p) {
    case Position::Rope: return "RoPE (variant, encyclopedia article 004): no W_p; Q and K are rotated in Algorithm 4.";
    case Position::Alibi: return "ALiBi (variant, encyclopedia article 004): no W_p; line 6 of Algorithm 4 adds m_h·B.";
    default: return "No positions (variant, encyclopedia article 004): line 2 adds no W_p.";
  }
}

// The labels of the ecosystem extras where they show (not in the paper; docs/variants.md).
const char* const kTokenTypeNote =
    "Not in the paper: BERT checkpoints (token-type embedding, segment 1). W_s[:, 1], the embedding of segment 0 "
    "(Hugging Face's token_type_embeddings row 0), is added to every e_t: Stepformer feeds one segment.";
const char* const kEmbeddingNormNote =
    "Not in the paper: BERT checkpoints (embedding layer norm). e_t ← layer_norm(e_t | γ_emb, β_emb) after the "
    "sum, as Hugging Face's BertEmbeddings.LayerNorm, with the model's ε.";
const char* const kBiasNote =
    "Not in the paper: BERT checkpoints (bias b_u on W_u, the masked-LM head's cls.predictions.bias): "
    "P = softmax(W_u X + b_u 1ᵀ).";

}  // namespace

template <class T>
Mat<T> position_matrix(const ModelConfig& c, const MapM<const T>& W_p) {
  if (c.position == Position::Learned) return W_p;
  if (c.position == Position::Sinusoidal) return cached_sinusoid(c.d_e, c.l_max, c.sinusoid_base()).cast<T>();
  return Mat<T>();
}

template <class T>
Mat<T> embed_line(const Tokens& s, const ModelConfig& c, const MapM<const T>& W_e, const MapM<const T>& W_p,
                  const ExtrasW<const T>& extras, Tracer* tr, LineRef at, Axis tokens) {
  const bool sinusoidal = c.position == Position::Sinusoidal;
  const Mat<T> W_sin = sinusoidal ? position_matrix<T>(c, W_p) : Mat<T>();  // (d_e, ℓ_max), computed
  const MapM<const T> W_pos = sinusoidal ? MapM<const T>(W_sin.data(), W_sin.rows(), W_sin.cols()) : W_p;
  const bool add_position = c.position == Position::Learned || sinusoidal;
  Mat<T> E(W_e.rows(), static_cast<Eigen::Index>(s.size()));  // (d_e, ℓ): column t is e_t
  for (int t = 1; t <= static_cast<int>(s.size()); ++t) {
    TraceIndex it(tr, &Indices::t, t);
    const Vec<T> e = token_embedding<T>(s[t - 1], W_e, tr);  // W_e[:, s[t]], Algorithm 1
    if (add_position)
      E.col(t - 1) = e + positional_embedding<T>(t, W_pos, tr);  // + W_p[:, t], Algorithm 2
    else
      E.col(t - 1) = e;
  }
  embedding_extras<T>(E, c, extras, tr, at, tokens);  // not in the paper: + W_s[:, 1], layer_norm
  if (!tr) return E;
  std::vector<Value> values{tv("e_t", E, Axis::Feature, tokens)};
  std::string extras_note = c.token_types > 0 ? kTokenTypeNote : "";
  if (c.embedding_norm) extras_note += (extras_note.empty() ? "" : " ") + std::string(kEmbeddingNormNote);
  if (!extras_note.empty()) values.back() = with_note(values.back(), extras_note);
  if (sinusoidal)
    values.push_back(with_note(tv("W_p", W_sin), "Sinusoidal positions (variant, the paper's §5; encyclopedia article 004): "
                                                 "W_p is computed, not trained, with base " +
                                                     std::to_string(c.sinusoid_base()) + "."));
  else if (!add_position)
    values.back() = with_note(values.back(), no_position_note(c.position) + (extras_note.empty() ? "" : " " + extras_note));
  tr->line(at, std::move(values));
  return E;
}

template <class T>
void embedding_extras(Mat<T>& E, const ModelConfig& c, const ExtrasW<const T>& W, Tracer* tr, LineRef at,
                      Axis tokens) {
  if (c.token_types > 0) {
    // e_t ← e_t + W_s[:, 1]   (segment 0 for every token)
    E.colwise() += W.W_s.col(0);  // (d_e, ℓ)
    if (tr)
      tr->substep(at, "e_t + W_s[:, 1] — not in the paper: BERT checkpoints (token-type embedding, segment 1)",
                  {with_note(tv("e_t + W_s[:, 1]", E, Axis::Feature, tokens), kTokenTypeNote),
                   with_note(tv("W_s[:, 1]", W.W_s.col(0)), kTokenTypeNote)});
  }
  if (c.embedding_norm) {
    // e_t ← layer_norm(e_t | γ_emb, β_emb)   (Algorithm 6 on every column)
    E = layer_norm_columns<T>(E, W.emb_gamma, W.emb_beta, static_cast<T>(c.eps), tr);  // (d_e, ℓ)
    if (tr)
      tr->substep(at, "layer_norm(e_t | γ_emb, β_emb) — not in the paper: BERT checkpoints (embedding layer norm)",
                  {with_note(tv("layer_norm(e_t | γ_emb, β_emb)", E, Axis::Feature, tokens), kEmbeddingNormNote)});
  }
}

template <class T>
void mlp_line(Mat<T>& X, const Mat<T>& in, const std::string& in_name, const Mlp<T>& W, Activation act, Tracer* tr,
              LineRef at, const char* name, Axis tokens, const PatchSite& site) {
  auto affine = [&](const char* w) { return "W_" + std::string(w) + " " + in_name + " + b_" + w + " 1ᵀ"; };
  const std::string pre = affine(W.a);
  const Mat<T> H_pre = product_plus_bias<T>(W.W_a, in, W.b_a);  // (d_mlp, ℓ)
  Mat<T> H_act;                                          // (d_mlp, ℓ)
  if (act == Activation::SwiGLU) {  // variant (seed 004): SiLU(W_gate X̃ + b_gate 1ᵀ) ⊙ (W_a X̃ + b_a 1ᵀ)
    const std::string gate = affine(W.gate);
    const Mat<T> G_pre = product_plus_bias<T>(W.W_gate, in, W.b_gate);  // (d_mlp, ℓ)
    if (tr) tr->substep(at, gate + " (SwiGLU variant, seed 004)", {tv(gate, G_pre, Axis::Feature, tokens)});
    const Mat<T> G = silu<T>(G_pre);  // (d_mlp, ℓ)
    if (tr) tr->substep(at, "SiLU(" + gate + ")", {tv("SiLU(…)", G, Axis::Feature, tokens)});
    if (tr) tr->substep(at, pre, {tv(pre, H_pre, Axis::Feature, tokens)});
    H_act = G.cwiseProduct(H_pre);
    if (tr) tr->substep(at, "SiLU(…) ⊙ (" + pre + ")", {tv("SiLU(…) ⊙ (…)", H_act, Axis::Feature, tokens)});
  } else {
    if (tr) tr->substep(at, pre, {tv(pre, H_pre, Axis::Feature, tokens)});
    const char* label = act == Activation::GELU ? "GELU(…)" : act == Activation::ReLU ? "ReLU(…)" : "GELU_tanh(…)";
    H_act = act == Activation::GELU ? gelu<T>(H_pre) : act == Activation::ReLU ? relu<T>(H_pre) : gelu_tanh<T>(H_pre);
    Value v = tv(label, H_act, Axis::Feature, tokens);
    if (act == Activation::GELUTanh)
      v = with_note(std::move(v), "GPT-2's tanh approximation (variant): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).");
    if (tr) tr->substep(at, label, {std::move(v)});
  }
  add_product<T>(X, W.W_b, H_act);  // (d_e, ℓ)
  X.colwise() += W.b_b;
  patch(site, at, name, X);  // patch point: the residual stream after the MLP's line
  if (tr) tr->line(at, {tv(name, X, Axis::Feature, tokens)});
}

template <class T>
Mat<T> unembed_line(const Mat<T>& X, const MapM<const T>& W_u, const MapM<const T>& W_e, const MapV<const T>& b_u,
                    Tracer* tr, LineRef at, std::vector<Value> extra) {
  const bool tied = W_u.size() == 0, bias = b_u.size() != 0;
  Mat<T> logits = tied ? product_transposed<T>(W_e, X) : product<T>(W_u, X);  // (N_V, ℓ)
  if (bias) logits.colwise() += b_u;  // not in the paper: W_u X + b_u 1ᵀ
  const char* name = bias ? "W_u X + b_u 1ᵀ" : "W_u X";
  if (tr) {
    std::vector<Value> sub{tv(name, logits, Axis::Vocab, Axis::TokenX)};
    if (bias) {
      sub.back() = with_note(sub.back(), kBiasNote);
      sub.push_back(with_note(tv("b_u", b_u, Axis::Vocab), kBiasNote));
    }
    if (tied)
      sub.push_back(with_note(tparam<T>(tr, keys::tied_unembedding, W_e, true),
                              "Tied unembedding (variant, Dinan–Yaida–Zhang 001, GPT-2): W_u = W_eᵀ, no W_u tensor."));
    tr->substep(at, bias ? std::string(name) + " — not in the paper: BERT checkpoints (bias b_u on W_u)" : name,
                std::move(sub));
  }
  Mat<T> P = softmax_columns<T>(logits);  // (N_V, ℓ)
  if (tr) {
    extra.insert(extra.begin(), tv("P", P, Axis::Vocab, Axis::TokenX));
    tr->line(at, std::move(extra));
  }
  return P;
}

#define SF_INSTANTIATE_VARIANT_LAYERS(T)                                                                              \
  template Mat<T> position_matrix<T>(const ModelConfig&, const MapM<const T>&);                                       \
  template Mat<T> embed_line<T>(const Tokens&, const ModelConfig&, const MapM<const T>&, const MapM<const T>&,        \
                                const ExtrasW<const T>&, Tracer*, LineRef, Axis);                                    \
  template void embedding_extras<T>(Mat<T>&, const ModelConfig&, const ExtrasW<const T>&, Tracer*, LineRef, Axis);   \
  template void mlp_line<T>(Mat<T>&, const Mat<T>&, const std::string&, const Mlp<T>&, Activation, Tracer*, LineRef, \
                            const char*, Axis, const PatchSite&);                                                     \
  template Mat<T> unembed_line<T>(const Mat<T>&, const MapM<const T>&, const MapM<const T>&, const MapV<const T>&,    \
                                  Tracer*, LineRef, std::vector<Value>);
SF_INSTANTIATE_VARIANT_LAYERS(float)
SF_INSTANTIATE_VARIANT_LAYERS(double)
#undef SF_INSTANTIATE_VARIANT_LAYERS

}  // namespace sf::variant_layers
