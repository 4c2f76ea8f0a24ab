// The paper's BERT: Algorithm 9 (ETransformer, encoder-only, post-LN, bidirectional attention),
// trained by Algorithm 12 (ETraining, masked language modelling); its output is the fill-in of
// [MASK] positions (core/algorithms/fill_in.hpp), for which the paper prints no algorithm.
#include "core/arch/bert.hpp"

#include <algorithm>
#include <utility>

#include "core/arch/batched_gradient.hpp"

#include "core/gradients/grad_etransformer.hpp"
#include "core/model/error.hpp"
#include "core/training/accuracy.hpp"
#include "core/training/datasets.hpp"

namespace sf {

template <class T>
BertW<T> bind_bert(const ParamTable& table, T* theta) {
  std::vector<LayerW<T>> layers;
  for (int l = 1; table.find("layer" + std::to_string(l) + ".gamma1"); ++l)
    layers.push_back(bind_layer<T>(table, theta, "layer" + std::to_string(l) + ".", "attn."));
  return BertW<T>{.W_e = bind_matrix_if<T>(table, theta, "W_e"),  // the vision transformer has none
                  .W_p = bind_matrix_if<T>(table, theta, "W_p"),
                  .layers = std::move(layers),
                  .enc_gamma = bind_vector_if<T>(table, theta, "enc.gamma"),
                  .enc_beta = bind_vector_if<T>(table, theta, "enc.beta"),
                  .W_f = bind_matrix<T>(table, theta, "W_f"),
                  .b_f = bind_vector<T>(table, theta, "b_f"),
                  .gamma = bind_vector<T>(table, theta, "gamma"),
                  .beta = bind_vector_if<T>(table, theta, "beta"),
                  .W_u = bind_matrix_if<T>(table, theta, "W_u"),
                  .extras = bind_extras<T>(table, theta)};
}

template BertW<float> bind_bert<float>(const ParamTable&, float*);
template BertW<const float> bind_bert<const float>(const ParamTable&, const float*);
template BertW<double> bind_bert<double>(const ParamTable&, double*);
template BertW<const double> bind_bert<const double>(const ParamTable&, const double*);

namespace {

BertW<const float> weights(const Model& m) { return bind_bert<const float>(m.table, m.theta.data()); }

// loss(θ) and ∇loss(θ) over a batch (core/gradients/).
using BertModelGradient = BatchedModelGradient<BertGradient<float>, weights, &etransformer_forward<float>>;

}  // namespace

std::string BertArchitecture::validate(const ModelConfig& c) const {
  std::string e;
  if (c.mask != MaskKind::Causal)
    e += "mask \"prefix\" is a GPT variant: BERT's attention is bidirectional already (Mask ≡ 1)";
  if (c.tied_unembedding && c.d_f != c.d_e)
    e += std::string(e.empty() ? "" : "; ") + "tied_unembedding needs d_f = d_e (W_u = W_eᵀ is N_V×d_e, but W_u acts on W_f's d_f = " +
         std::to_string(c.d_f) + " outputs; d_e = " + std::to_string(c.d_e) + ")";
  return e;
}

std::vector<std::string> BertArchitecture::config_keys() const { return {"L", "d_f"}; }

void add_etransformer_body(const ModelConfig& c, ParamTable& t) {
  for (int l = 1; l <= c.L; ++l) {
    const std::string p = "layer" + std::to_string(l) + ".";
    t.add_mh_attention(p + "attn.", "", l, c);
    t.add_layer_norm(p, "1", l, c.d_e, c);
    t.add_layer_norm(p, "2", l, c.d_e, c);
    t.add_mlp(p, 1, 2, l, c);
  }
  if (c.norm_pos() == NormPosition::Pre) t.add_layer_norm("enc.", "", 0, c.d_e, c);
  t.add("W_f", "W_f", 0, 1, c.d_f, c.d_e, ParamRole::Weight);
  t.add("b_f", "b_f", 0, 1, c.d_f, 1, ParamRole::Bias);
  t.add_layer_norm("", "", 0, c.d_f, c);
}

void BertArchitecture::build_table(const ModelConfig& c, ParamTable& t) const {
  // Algorithm 9's parameters: W_e, W_p; for l ∈ [L]: W_l, γ¹_l, β¹_l, γ²_l, β²_l, the MLP;
  // W_f, b_f, γ, β ∈ ℝ^{d_f}; W_u.
  // Variants: W_p only for learned positions; pre-LN adds the stack's final enc.gamma, enc.beta;
  // no W_u when tied (W_u = W_eᵀ, d_f = d_e).
  t.add("W_e", "W_e", 0, 1, c.d_e, c.N_V(), ParamRole::Embedding);
  if (c.position == Position::Learned) t.add("W_p", "W_p", 0, 1, c.d_e, c.l_max, ParamRole::Position);
  t.add_embedding_extras(c);  // issue 11 extras (BERT checkpoints): γ_emb, β_emb, W_s
  add_etransformer_body(c, t);
  // The paper prints W_u ∈ ℝ^{N_V×d_e}, a slip: after line 10, X ∈ ℝ^{d_f×ℓ}, so W_u is N_V×d_f.
  if (!c.tied_unembedding) t.add("W_u", "W_u", 0, 1, c.N_V(), c.d_f, ParamRole::Weight);
  t.add_unembedding_bias(c);  // issue 11 extra: b_u
}

MatF BertArchitecture::forward(const Model& m, const Tokens&, const Tokens& x, Tracer* tr,
                               const MHAttentionFn<float>& attn, const Patches* patches) const {
  TraceParameters params(tr, m.table, m.theta.data());
  return etransformer<float>(x, m.config, weights(m), tr, attn, patches);
}

std::vector<Example> BertArchitecture::examples(const std::vector<std::string>& lines, const ModelConfig& c) const {
  std::vector<Example> out;
  for (Tokens& x : tokenize(lines, c)) out.push_back({{}, std::move(x)});
  return out;
}

std::vector<int> special_ids(const ModelConfig& c) {
  std::vector<int> ids;
  for (int id : {c.bos_token(), c.eos_token(), c.mask_token(), c.pad_id})
    if (id >= 1 && id <= c.N_V()) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

namespace {

void require_mask_token(const ModelConfig& c) {
  if (c.mask_token() == 0)
    throw Error("this model has no mask token (its configuration sets mask_id = -1): Algorithm 12 masks positions "
                "with mask_token, so it cannot train; give the vocabulary a [MASK] token (mask_id)");
}

// The 0-based positions [first, end) of x (length n) that Algorithm 12 draws for: all of them, or
// with opt.mask_answer (equals ≠ 0) only the answer's, after the first "=" and before eos_token.
std::pair<int, int> maskable(const Tokens& x, int n, int equals) {
  if (equals == 0) return {0, n};
  const auto q = std::find(x.begin(), x.begin() + n, equals);
  if (q == x.begin() + n) return {0, n};
  return {static_cast<int>(q - x.begin()) + 1, n - 1};
}

}  // namespace

MaskDraw draw_mask(int x_t, const ModelConfig& c, const TrainOptions& opt, Rng& rng) {
  require_mask_token(c);
  MaskDraw d;
  d.u = rng.uniform();
  d.chosen = d.u < opt.p_mask;
  d.token = x_t;
  if (!d.chosen) return d;
  if (!opt.bert_80_10_10) {
    d.token = c.mask_token();  // the paper's rule
    return d;
  }
  // BERT's rule (Devlin et al. 2019), not the paper's: 80% mask_token, 10% random, 10% unchanged.
  const double r = rng.uniform();
  if (r < 0.8) {
    d.token = c.mask_token();
  } else if (r < 0.9) {
    // An ordinary token: the k-th id of [1, N_V] that is not special, k uniform.
    const std::vector<int> special = special_ids(c);
    int id = 1 + static_cast<int>(rng.below(static_cast<uint64_t>(c.N_V() - static_cast<int>(special.size()))));
    for (int s : special) id += s <= id;  // skip each special id at or below it (ascending)
    d.token = id;
  }
  return d;
}

void BertArchitecture::make_batch(const ModelConfig& c, const std::vector<Example>& data,
                                  const std::vector<size_t>& pick, int l, int, const TrainOptions& opt, Rng& rng,
                                  Batch& b) const {
  require_mask_token(c);
  std::vector<const Tokens*> xs;
  for (size_t i : pick) xs.push_back(&data.at(i).x);
  b.B = static_cast<int>(pick.size());
  b.l = l;
  pad_sequences(xs, l, pad_token(c), "a training sequence", b.tokens, b.lengths);
  b.l_z = 0;
  b.z_tokens.clear();
  b.z_lengths.clear();
  b.targets.assign(b.tokens.size(), 0);
  const int equals = opt.mask_answer ? equals_token(c) : 0;
  for (int s = 0; s < b.B; ++s) {
    const Tokens& x = *xs[s];
    const auto [first, end] = maskable(x, b.lengths[s], equals);
    // Algorithm 12 L4–6: for t = 1, 2, …, ℓ do x̃[t] ← mask_token or x[t] randomly
    for (int t = first; t < end; ++t) {
      const size_t k = static_cast<size_t>(s) * l + t;
      const MaskDraw d = draw_mask(x[t], c, opt, rng);
      b.tokens[k] = d.token;
      // L7 and L9: position t ∈ T̃ is scored against x[t]
      if (d.chosen) b.targets[k] = x[t];
    }
  }
}

std::unique_ptr<ModelGradient> BertArchitecture::gradient(const ParamTable& table) const {
  return std::make_unique<BertModelGradient>(table);
}

std::unique_ptr<PaperTraining> BertArchitecture::paper_training(int N_data, int N_epochs) const {
  return std::make_unique<ETraining>(N_data, N_epochs);
}

}  // namespace sf
