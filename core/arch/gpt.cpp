// The paper's GPT: Algorithm 10 (DTransformer, decoder-only, pre-LN), trained by Algorithm 13
// (DTraining, next-token prediction), prompted by Algorithm 14 (DInference).
#include "core/arch/gpt.hpp"

#include "core/arch/batched_gradient.hpp"
#include "core/gradients/grad.hpp"
#include "core/training/datasets.hpp"
#include "core/training/training.hpp"

namespace sf {

namespace {

GptW<const float> gpt_weights(const Model& m) { return m.weights(); }

// loss(θ) and ∇loss(θ) over a batch (core/gradients/).
using GptModelGradient = BatchedModelGradient<GptGradient<float>, gpt_weights, &dtransformer_forward<float>>;

}  // namespace

std::vector<std::string> GptArchitecture::config_keys() const { return {"L"}; }

void GptArchitecture::build_table(const ModelConfig& c, ParamTable& t) const {
  // Algorithm 10's parameters: W_e, W_p; for l ∈ [L]: γ¹_l, β¹_l, W_l, γ²_l, β²_l, the MLP;
  // γ, β; W_u. Variants: W_p only for learned positions; no final γ, β when post-LN (GPT-1);
  // no W_u when tied (W_u = W_eᵀ).
  t.add("W_e", "W_e", 0, 1, c.d_e, c.N_V(), ParamRole::Embedding);
  if (c.position == Position::Learned) t.add("W_p", "W_p", 0, 1, c.d_e, c.l_max, ParamRole::Position);
  t.add_embedding_extras(c);  // issue 11 extras (BERT checkpoints): γ_emb, β_emb, W_s
  for (int l = 1; l <= c.L; ++l) {
    const std::string p = "layer" + std::to_string(l) + ".";
    t.add_layer_norm(p, "1", l, c.d_e, c);
    t.add_mh_attention(p + "attn.", "", l, c);
    t.add_layer_norm(p, "2", l, c.d_e, c);
    t.add_mlp(p, 1, 2, l, c);
  }
  if (c.norm_pos() == NormPosition::Pre) t.add_layer_norm("", "", 0, c.d_e, c);
  if (!c.tied_unembedding) t.add("W_u", "W_u", 0, 1, c.N_V(), c.d_e, ParamRole::Weight);
  t.add_unembedding_bias(c);  // issue 11 extra: b_u
}

MatF GptArchitecture::forward(const Model& m, const Tokens&, const Tokens& x, Tracer* tr,
                              const MHAttentionFn<float>& attn, const Patches* patches) const {
  TraceParameters params(tr, m.table, m.theta.data());
  return dtransformer<float>(x, m.config, m.weights(), tr, attn, patches);
}

std::vector<Example> GptArchitecture::examples(const std::vector<std::string>& lines, const ModelConfig& c) const {
  std::vector<Example> out;
  for (Tokens& x : tokenize(lines, c)) {
    const int p = c.mask == MaskKind::Prefix ? prefix_position(x, c) : 0;
    out.push_back({{}, std::move(x), p});
  }
  return out;
}

void GptArchitecture::make_batch(const ModelConfig& c, const std::vector<Example>& data,
                                 const std::vector<size_t>& pick, int l, int, const TrainOptions&, Rng&, Batch& b) const {
  std::vector<const Tokens*> xs;
  for (size_t i : pick) xs.push_back(&data.at(i).x);
  b.B = static_cast<int>(pick.size());
  b.l = l;
  pad_sequences(xs, l, pad_token(c), "a training sequence", b.tokens, b.lengths);
  next_token_targets(b);
  // Prefix-LM (variant): loss terms only on positions t ≥ p (inside the prefix, position t sees x[t+1])
  for (int s = 0; s < b.B; ++s)
    for (int t = 1; t < data.at(pick[s]).p; ++t) b.targets[static_cast<size_t>(s) * l + t - 1] = 0;
  b.l_z = 0;
  b.z_tokens.clear();
  b.z_lengths.clear();
}

std::unique_ptr<ModelGradient> GptArchitecture::gradient(const ParamTable& table) const {
  return std::make_unique<GptModelGradient>(table);
}

std::unique_ptr<PaperTraining> GptArchitecture::paper_training(int N_data, int N_epochs) const {
  return std::make_unique<DTraining>(N_data, N_epochs);
}

}  // namespace sf
