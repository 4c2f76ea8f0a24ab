// The paper's encoder-decoder: Algorithm 8 (EDTransformer, post-LN, ReLU), trained by
// Algorithm 11 (EDTraining, seq2seq next-token prediction), used by Algorithm 15 (EDInference).
#include "core/arch/ed.hpp"

#include "core/arch/batched_gradient.hpp"

#include "core/gradients/grad_edtransformer.hpp"
#include "core/model/error.hpp"
#include "core/training/datasets.hpp"
#include "core/training/pair_tasks.hpp"

namespace sf {

namespace {

// loss(θ) and ∇loss(θ) over a batch (core/gradients/).
using EdModelGradient = BatchedModelGradient<EdGradient<float>, ed_weights, &edtransformer_forward<float>>;

}  // namespace

std::string EdArchitecture::validate(const ModelConfig& c) const {
  if (c.mask != MaskKind::Causal)
    return "mask \"prefix\" is a GPT variant: the encoder-decoder's encoder is bidirectional already and its decoder causal";
  return "";
}

std::vector<std::string> EdArchitecture::config_keys() const { return {"L_enc", "L_dec"}; }

void EdArchitecture::build_table(const ModelConfig& c, ParamTable& t) const {
  // Algorithm 8's parameters: W_e, W_p (shared by z and x); for l ∈ [L_enc]: W^enc_l, γ¹_l, β¹_l,
  // γ²_l, β²_l, W^l_mlp1, b^l_mlp1, W^l_mlp2, b^l_mlp2; for l ∈ [L_dec]: W^dec_l, W^ed_l, γ³_l … β⁵_l,
  // W^l_mlp3, b^l_mlp3, W^l_mlp4, b^l_mlp4; W_u.
  // Variants: W_p only for learned positions; pre-LN adds each stack's final layer norm
  // (enc.gamma, enc.beta after the encoder, dec.gamma, dec.beta after the decoder); no W_u when tied.
  t.add("W_e", "W_e", 0, 1, c.d_e, c.N_V(), ParamRole::Embedding);
  if (c.position == Position::Learned) t.add("W_p", "W_p", 0, 1, c.d_e, c.l_max, ParamRole::Position);
  t.add_embedding_extras(c);  // issue 11 extras (BERT checkpoints): γ_emb, β_emb, W_s
  const bool pre = c.norm_pos() == NormPosition::Pre;
  for (int l = 1; l <= c.L_enc; ++l) {
    const std::string p = "enc.layer" + std::to_string(l) + ".";
    t.add_mh_attention(p + "attn.", "enc", l, c);
    t.add_layer_norm(p, "1", l, c.d_e, c);
    t.add_layer_norm(p, "2", l, c.d_e, c);
    t.add_mlp(p, 1, 2, l, c);
  }
  if (pre) t.add_layer_norm("enc.", "", 0, c.d_e, c);
  for (int l = 1; l <= c.L_dec; ++l) {
    const std::string p = "dec.layer" + std::to_string(l) + ".";
    t.add_mh_attention(p + "self_attn.", "dec", l, c);
    t.add_mh_attention(p + "cross_attn.", "ed", l, c);  // W_q acts on X, W_k and W_v on Z
    for (const char* k : {"3", "4", "5"}) t.add_layer_norm(p, k, l, c.d_e, c);
    t.add_mlp(p, 3, 4, l, c);
  }
  if (pre) t.add_layer_norm("dec.", "", 0, c.d_e, c);
  if (!c.tied_unembedding) t.add("W_u", "W_u", 0, 1, c.N_V(), c.d_e, ParamRole::Weight);
  t.add_unembedding_bias(c);  // issue 11 extra: b_u
}

MatF EdArchitecture::forward(const Model& m, const Tokens& z, const Tokens& x, Tracer* tr,
                             const MHAttentionFn<float>& attn, const Patches* patches) const {
  TraceParameters params(tr, m.table, m.theta.data());
  return edtransformer_parts<float>(z, x, m.config, ed_weights(m), tr, nullptr, nullptr, attn, patches);
}

std::vector<Example> EdArchitecture::examples(const std::vector<std::string>& lines, const ModelConfig& c) const {
  std::vector<std::string> zs(lines.size()), xs(lines.size());
  for (size_t n = 0; n < lines.size(); ++n)
    if (!split_pair(lines[n], zs[n], xs[n]))
      throw Error("line " + std::to_string(n + 1) + " has no tab: each line must be z<TAB>x");
  // Sequence n of each side is line n: tokenize's messages name it.
  auto side = [&](const std::vector<std::string>& texts, const char* name) {
    try {
      return tokenize(texts, c);  // [bos_token, characters…, eos_token]
    } catch (const Error& e) {
      throw Error(std::string(name) + " (each line is z<TAB>x): " + e.what());
    }
  };
  const std::vector<Tokens> z = side(zs, "in the contexts z"), x = side(xs, "in the sequences x");
  std::vector<Example> out(lines.size());
  for (size_t n = 0; n < lines.size(); ++n) out[n] = {z[n], x[n]};
  return out;
}

void EdArchitecture::make_batch(const ModelConfig& c, const std::vector<Example>& data, const std::vector<size_t>& pick,
                                int l, int l_z, const TrainOptions&, Rng&, Batch& b) const {
  std::vector<const Tokens*> zs, xs;
  for (size_t i : pick) {
    zs.push_back(&data.at(i).z);
    xs.push_back(&data.at(i).x);
  }
  b.B = static_cast<int>(pick.size());
  b.l = l;
  b.l_z = l_z;
  pad_sequences(xs, l, pad_token(c), "a sequence x", b.tokens, b.lengths);
  pad_sequences(zs, l_z, pad_token(c), "a context z", b.z_tokens, b.z_lengths);
  next_token_targets(b);
}

std::unique_ptr<ModelGradient> EdArchitecture::gradient(const ParamTable& table) const {
  return std::make_unique<EdModelGradient>(table);
}

std::unique_ptr<PaperTraining> EdArchitecture::paper_training(int N_data, int N_epochs) const {
  return std::make_unique<EdTraining>(N_data, N_epochs);
}

template <class T>
EdW<T> bind_ed(const ParamTable& table, T* theta) {
  std::vector<LayerW<T>> enc;
  for (int l = 1; table.find("enc.layer" + std::to_string(l) + ".gamma1"); ++l)
    enc.push_back(bind_layer<T>(table, theta, "enc.layer" + std::to_string(l) + ".", "attn."));
  std::vector<DecoderLayerW<T>> dec;
  for (int l = 1; table.find("dec.layer" + std::to_string(l) + ".gamma3"); ++l) {
    const std::string p = "dec.layer" + std::to_string(l) + ".";
    auto v = [&](const char* name) { return bind_vector<T>(table, theta, p + name); };
    auto m = [&](const char* name) { return bind_matrix<T>(table, theta, p + name); };
    auto opt = [&](const char* name) { return bind_vector_if<T>(table, theta, p + name); };
    dec.push_back(DecoderLayerW<T>{bind_mh_attention<T>(table, theta, p + "self_attn."),
                                   bind_mh_attention<T>(table, theta, p + "cross_attn."), v("gamma3"), opt("beta3"),
                                   v("gamma4"), opt("beta4"), v("gamma5"), opt("beta5"), m("W_mlp3"), v("b_mlp3"),
                                   m("W_mlp4"), v("b_mlp4"), bind_matrix_if<T>(table, theta, p + "W_gate2"),
                                   opt("b_gate2")});
  }
  return EdW<T>{bind_matrix<T>(table, theta, "W_e"),          bind_matrix_if<T>(table, theta, "W_p"),
                std::move(enc),                               std::move(dec),
                bind_matrix_if<T>(table, theta, "W_u"),       bind_vector_if<T>(table, theta, "enc.gamma"),
                bind_vector_if<T>(table, theta, "enc.beta"),  bind_vector_if<T>(table, theta, "dec.gamma"),
                bind_vector_if<T>(table, theta, "dec.beta"),  bind_extras<T>(table, theta)};
}

template EdW<float> bind_ed<float>(const ParamTable&, float*);
template EdW<const float> bind_ed<const float>(const ParamTable&, const float*);
template EdW<double> bind_ed<double>(const ParamTable&, double*);
template EdW<const double> bind_ed<const double>(const ParamTable&, const double*);

}  // namespace sf
