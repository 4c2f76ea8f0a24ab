// Hugging Face BERT with its masked-LM head (BertForMaskedLM, BertForPreTraining; Google's
// miniatures such as bert-tiny) onto Algorithm 9's parameters (docs/ecosystem.md).
//
// BERT is the paper's post-LN encoder (Algorithm 9): lines 5–8 are BertAttention and
// BertIntermediate/BertOutput (each with its residual LayerNorm), lines 10–11 the head's
// transform (dense, activation, LayerNorm) and line 12 the decoder, tied to the word embeddings.
// Three extras, labelled as variants wherever they show: the embedding LayerNorm (γ_emb, β_emb),
// the token-type embedding (W_s, segment 0 added to every e_t) and the decoder's bias b_u.
// nn.Linear stores W as [out, in], the paper's (out, in) matrix itself.
#include <optional>

#include "core/io/ecosystem.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

std::string n(int64_t v) { return std::to_string(v); }

// hidden_act → the variant; nothing for one Stepformer does not have.
std::optional<Activation> bert_activation(const std::string& name) {
  if (name == "gelu") return Activation::GELU;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::GELUTanh;
  if (name == "relu") return Activation::ReLU;
  return std::nullopt;
}

}  // namespace

TensorImport plan_bert(const SafetensorsFile& file, const HfConfig& cfg) {
  TensorImport im(file);
  const std::string e = "bert.embeddings.", head = "cls.predictions.";
  const SafeTensor* words = file.find(e + "word_embeddings.weight");
  if (!words || words->shape.size() != 2)
    throw Error(file.name() + ": " + e + "word_embeddings.weight must be a matrix [vocab_size, hidden_size]");
  if (!file.find(head + "transform.dense.weight"))
    throw Error(file.name() + ": this BERT has no masked-LM head (cls.predictions.*), so Algorithm 9 cannot reach its "
                              "lines 10–12; download the weights of a model with the head (BertForMaskedLM or "
                              "BertForPreTraining, e.g. google/bert_uncased_L-2_H-128_A-2)");
  const int64_t N_V = words->shape[0], C = words->shape[1];
  im.vocab_tensor = words->name;

  // Google's TensorFlow-converted files name LayerNorm's γ, β "gamma", "beta"; newer ones "weight", "bias".
  auto norm_name = [&](const std::string& base, const char* now, const char* old) {
    return file.find(base + old) && !file.find(base + now) ? base + old : base + now;
  };

  // ---- config.json against the tensors ----
  const std::string model_type = cfg.text("model_type", "bert");
  if (model_type != "bert")
    cfg.refuse("model_type is \"" + model_type + "\" but the checkpoint is in BERT's layout (" + words->name +
               "); put the config.json of this checkpoint beside it");
  const int64_t hidden = cfg.require_positive({"hidden_size"});
  if (hidden != C) cfg.contradiction("hidden_size", hidden, words->name + " has " + n(C) + " columns");
  const int64_t L = cfg.require_positive({"num_hidden_layers"});
  const int layers = count_layers(file, "bert.encoder.layer.");
  if (L != layers)
    cfg.contradiction("num_hidden_layers", L,
                      "the checkpoint has " + n(layers) + " layers (bert.encoder.layer.0 … " + n(layers - 1) + ")");
  const int64_t H = cfg.require_positive({"num_attention_heads"});
  if (hidden % H != 0)
    cfg.refuse("num_attention_heads = " + n(H) + " does not divide hidden_size = " + n(hidden) +
               " (each head has hidden_size / num_attention_heads dimensions)");
  const int64_t d_mlp = cfg.require_positive({"intermediate_size"});
  const int64_t l_max = cfg.require_positive({"max_position_embeddings"});
  if (const SafeTensor* pos = file.find(e + "position_embeddings.weight"); pos && pos->shape.size() == 2 && pos->shape[0] != l_max)
    cfg.contradiction("max_position_embeddings", l_max, pos->name + " has " + n(pos->shape[0]) + " rows");
  if (const auto vocab_size = cfg.positive({"vocab_size"}); vocab_size && *vocab_size != N_V)
    cfg.contradiction("vocab_size", *vocab_size, words->name + " has " + n(N_V) + " rows");
  const int64_t types = cfg.positive({"type_vocab_size"}).value_or(2);
  if (const SafeTensor* tt = file.find(e + "token_type_embeddings.weight"); tt && tt->shape.size() == 2 && tt->shape[0] != types)
    cfg.contradiction("type_vocab_size", types, tt->name + " has " + n(tt->shape[0]) + " rows");
  const std::string position_type = cfg.text("position_embedding_type", "absolute");
  if (position_type != "absolute")
    cfg.refuse("position_embedding_type \"" + position_type + "\": Stepformer has only the learned absolute positions W_p");
  const std::string act_name = cfg.text("hidden_act", "gelu");
  const auto act = bert_activation(act_name);
  if (!act) cfg.refuse("hidden_act \"" + act_name + "\" is not one Stepformer computes (gelu; gelu_new: the tanh GELU; relu)");
  if (*act != Activation::GELU)
    im.notes.push_back("hidden_act is " + act_name + ": Hugging Face applies it in the head's transform too, where "
                       "Algorithm 9 line 10 has the exact GELU");

  // ---- the configuration: the paper's BERT with the checkpoint's extras ----
  ModelConfig& c = im.config;
  c.arch = "bert";
  c.L = static_cast<int>(L);
  c.H = static_cast<int>(H);
  c.d_e = c.d_f = static_cast<int>(hidden);
  c.d_attn = c.d_mid = static_cast<int>(hidden / H);
  c.d_mlp = static_cast<int>(d_mlp);
  c.l_max = static_cast<int>(l_max);
  c.eps = static_cast<float>(cfg.non_negative("layer_norm_eps", 1e-12));
  c.activation = *act;
  c.embedding_norm = true;
  c.token_types = static_cast<int>(types);
  c.unembedding_bias = true;
  c.tokenizer = TokenizerKind::WordPiece;
  c.vocab.clear();
  c.vocab_size = static_cast<int>(N_V);
  const std::string dims = "hidden_size = " + n(hidden) + ", intermediate_size = " + n(d_mlp) +
                           ", max_position_embeddings = " + n(l_max) + ", type_vocab_size = " + n(types) +
                           " in config.json; nn.Linear stores W as [out, in]";
  // The decoder: tied to the word embeddings (absent, or saved as a copy of them), else its own W_u.
  const SafeTensor* decoder = file.find(head + "decoder.weight");
  if (decoder) im.need(decoder->name, {N_V, C}, "the decoder is W_u, [vocab_size, hidden_size]");
  c.tied_unembedding = !decoder || same_values(file, *decoder, *words);
  const std::string why_invalid = validate(c);
  if (!why_invalid.empty()) cfg.refuse("the model it describes is not one Stepformer can build: " + why_invalid);

  auto norm = [&](const std::string& paper_gamma, const std::string& paper_beta, const std::string& base, int64_t d) {
    im.whole(paper_gamma, im.need(norm_name(base, "weight", "gamma"), {d}, dims), false);
    im.whole(paper_beta, im.need(norm_name(base, "bias", "beta"), {d}, dims), false);
  };
  auto linear = [&](const std::string& paper_w, const std::string& paper_b, const std::string& base, int64_t out, int64_t in) {
    im.whole(paper_w, im.need(base + ".weight", {out, in}, dims), false);
    im.whole(paper_b, im.need(base + ".bias", {out}, dims), false);
  };

  // ---- every paper tensor's source ----
  im.whole("W_e", im.need(words->name, {N_V, C}, dims), true);  // row t is W_e[:, t]
  im.whole("W_p", im.need(e + "position_embeddings.weight", {l_max, C}, dims), true);
  norm("emb.gamma", "emb.beta", e + "LayerNorm.", C);
  im.whole("W_s", im.need(e + "token_type_embeddings.weight", {types, C}, dims), true);
  for (int l = 1; l <= c.L; ++l) {
    const std::string b = "bert.encoder.layer." + n(l - 1) + ".", paper = "layer" + n(l) + ".";
    for (const auto& [which, name] : {std::pair{"q", "query"}, {"k", "key"}, {"v", "value"}}) {
      // query/key/value [C, C]: head h is rows (h−1)·C/H … h·C/H − 1
      im.heads(paper + "attn.W_" + which, im.need(b + "attention.self." + name + ".weight", {C, C}, dims), 0, 0, false);
      im.heads(paper + "attn.b_" + which, im.need(b + "attention.self." + name + ".bias", {C}, dims), 0, 0, false);
    }
    linear(paper + "attn.W_o", paper + "attn.b_o", b + "attention.output.dense", C, C);
    norm(paper + "gamma1", paper + "beta1", b + "attention.output.LayerNorm.", C);
    linear(paper + "W_mlp1", paper + "b_mlp1", b + "intermediate.dense", d_mlp, C);
    linear(paper + "W_mlp2", paper + "b_mlp2", b + "output.dense", C, d_mlp);
    norm(paper + "gamma2", paper + "beta2", b + "output.LayerNorm.", C);
  }
  linear("W_f", "b_f", head + "transform.dense", C, C);
  norm("gamma", "beta", head + "transform.LayerNorm.", C);
  if (c.tied_unembedding)
    im.describe("W_u", "W_u = W_eᵀ (tied to " + words->name + ")");
  else
    im.whole("W_u", *decoder, false);
  // b_u: cls.predictions.bias, which Hugging Face ties to decoder.bias (saved once or twice).
  const std::string bias = file.find(head + "bias") ? head + "bias" : head + "decoder.bias";
  im.whole("b_u", im.need(bias, {N_V}, dims), false);
  if (file.find(head + "decoder.bias")) im.ignore(head + "decoder.bias");

  // Not part of Algorithm 9: the pooler and the next-sentence head; position_ids is a buffer.
  std::vector<std::string> ignored;
  for (const auto& [name, t] : file.tensors())
    if (name.rfind("bert.pooler.", 0) == 0 || name.rfind("cls.seq_relationship.", 0) == 0 || name == e + "position_ids") {
      im.ignore(name);
      ignored.push_back(name);
    }
  if (!ignored.empty()) {
    std::string list;
    for (const std::string& name : ignored) list += (list.empty() ? "" : ", ") + name;
    im.notes.push_back("ignored: " + list + " (the pooler and the next-sentence head are not part of Algorithm 9; "
                       "position_ids is a buffer)");
  }
  im.refuse_unused("Hugging Face BERT");
  return im;
}

}  // namespace sf
