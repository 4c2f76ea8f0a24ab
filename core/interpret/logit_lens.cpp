// The logit lens and direct logit attribution (not in the paper; logit_lens.hpp, docs/interpretation.md).
#include "core/interpret/logit_lens.hpp"

#include <algorithm>
#include <numeric>

#include "core/algorithms/variant_layers.hpp"
#include "core/arch/architecture.hpp"
#include "core/experiments/interventions.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

using variant_layers::next_line;
using VecD = Vec<double>;
using MapVc = MapV<const float>;
using MapMc = MapM<const float>;

// One residual sub-layer of the stack, as residual_line_pair writes it on lines `at` and next_line(at).
struct SubLayer {
  LineRef at;
  const MHAttentionW<const float>* attn;  // null: the MLP
  const char* tag;                        // "", "self", "cross"
  MapVc gamma, beta;                      // the pair's norm
};

// The stack the lens reads: the forward algorithm's lines and the weights after the layer loop.
struct Stack {
  int alg = 0, L = 0;
  LineRef X0;       // the line binding the embedding X^0
  LineRef logits;   // the unembedding line (its sub-step binds W_u X)
  std::vector<std::vector<SubLayer>> layers;
  bool final_norm = false;  // pre-LN: the stack's final norm (γ_f, β_f)
};

// The line where a sub-layer's X ← X + f(·) is bound (and which calls MHAttention): pre-LN its second line.
LineRef sum_line(const ModelConfig& c, LineRef at) { return c.norm_pos() == NormPosition::Pre ? next_line(at) : at; }

MatF bound_X(const Trace& t, LineRef line, int l) {
  const Value* v = value_at(t, PatchPoint{{}, line.alg, line.line, l, 0, "X"});
  if (!v) throw Error("the trace has no X on Algorithm " + std::to_string(line.alg) + " line " + std::to_string(line.line) +
                      (l ? " in layer " + std::to_string(l) : std::string()) +
                      ": the logit lens reads a traced forward run of this model (run the forward pass first)");
  return MatF(v->m);
}

// The bound weights of m by architecture (kept alive while a Stack's views point into them). Built in
// place: assigning an Eigen::Map copies the data it views rather than rebinding it.
struct Bound {
  Bound(const Model& m, int alg)
      : gpt(alg == 10 ? bind_gpt<const float>(m.table, m.theta.data()) : GptW<const float>{}),
        bert(alg == 9 ? bind_bert<const float>(m.table, m.theta.data()) : BertW<const float>{}),
        ed(alg == 8 ? bind_ed<const float>(m.table, m.theta.data()) : EdW<const float>{}) {}
  GptW<const float> gpt;
  BertW<const float> bert;
  EdW<const float> ed;
};

Stack stack_of(const ModelConfig& c, const Bound& b, int alg) {
  Stack s;
  s.alg = alg;
  s.final_norm = c.norm_pos() == NormPosition::Pre;
  if (alg == 10) {
    namespace ln = lines::d_transformer;
    s.X0 = ln::X, s.logits = ln::P, s.L = c.L;
    for (const LayerW<const float>& W : b.gpt.layers)
      s.layers.push_back({{ln::norm1, &W.attn, "", W.gamma1, W.beta1}, {ln::norm2, nullptr, "", W.gamma2, W.beta2}});
  } else if (alg == 9) {
    namespace ln = lines::e_transformer;
    s.X0 = ln::X, s.logits = ln::P, s.L = c.L;
    for (const LayerW<const float>& W : b.bert.layers)
      s.layers.push_back({{ln::attention, &W.attn, "", W.gamma1, W.beta1}, {ln::mlp, nullptr, "", W.gamma2, W.beta2}});
  } else if (alg == 8) {
    namespace ln = lines::ed_transformer;
    s.X0 = ln::X, s.logits = ln::P, s.L = c.L_dec;
    for (const DecoderLayerW<const float>& W : b.ed.dec)
      s.layers.push_back({{ln::self_attention, &W.self_attn, "self", W.gamma3, W.beta3},
                          {ln::cross_attention, &W.cross_attn, "cross", W.gamma4, W.beta4},
                          {ln::dec_mlp, nullptr, "", W.gamma5, W.beta5}});
  } else {
    throw Error("the logit lens reads Algorithms 10, 9 and 8; this model's forward algorithm is " + std::to_string(alg));
  }
  return s;
}

// P = softmax(W_u head(X) + b_u 1ᵀ): what the forward algorithm does after its layer loop, with the same
// helpers (norm_columns, gelu, unembed_line) on the same float input, so that head(X^L) is its P exactly.
MatF lens_P(const ModelConfig& c, const Bound& b, int alg, const MatF& X) {
  using variant_layers::unembed_line;
  const bool pre = c.norm_pos() == NormPosition::Pre;
  if (alg == 10) {
    const GptW<const float>& W = b.gpt;
    return unembed_line<float>(pre ? norm_columns<float>(X, W.gamma, W.beta, c) : X, W.W_u, W.W_e, W.extras.b_u,
                               nullptr, lines::d_transformer::P);
  }
  if (alg == 9) {  // Algorithm 9 lines 10–12 (and the pre-LN stack norm before them)
    const BertW<const float>& W = b.bert;
    const MatF Xs = pre ? norm_columns<float>(X, W.enc_gamma, W.enc_beta, c) : X;
    const MatF Fpre = (W.W_f * Xs).colwise() + W.b_f;  // (d_f, ℓ)
    return unembed_line<float>(norm_columns<float>(gelu<float>(Fpre), W.gamma, W.beta, c), W.W_u, W.W_e,
                               W.extras.b_u, nullptr, lines::e_transformer::P);
  }
  const EdW<const float>& W = b.ed;  // Algorithm 8 lines 20–21
  return unembed_line<float>(pre ? norm_columns<float>(X, W.dec_gamma, W.dec_beta, c) : X, W.W_u, W.W_e, W.extras.b_u,
                             nullptr, lines::ed_transformer::P);
}

std::vector<MatF> stream_of(const ModelConfig& c, const Stack& s, const Trace& t) {
  std::vector<MatF> X{bound_X(t, s.X0, 0)};
  for (int l = 1; l <= s.L; ++l) X.push_back(bound_X(t, next_line(s.layers[l - 1].back().at), l));
  return X;
}

int forward_alg(const Model& m) { return architecture(m.config).forward_algorithm(); }

// --- direct logit attribution ---

VecD column(const MatF& X, int t) { return X.col(t).cast<double>(); }

// u ← the readout carried back through the frozen norm ê = γ ⊙ C(e)/σ + β at input e: Aᵀu with
// A = diag(γ/σ)·C (C symmetric: centring for layer_norm, the identity for RMSNorm). Returns u·β first.
double through_norm(const ModelConfig& c, const MapVc& gamma, const MapVc& beta, const VecD& e, VecD& u) {
  const double beta_term = beta.size() ? u.dot(beta.cast<double>()) : 0.0;
  const double d = static_cast<double>(e.size());
  const bool centre = c.norm == Norm::LayerNorm;
  const VecD ec = centre ? VecD(e.array() - e.mean()) : e;
  const double sigma = std::sqrt(ec.squaredNorm() / d + c.eps);
  VecD w = (gamma.cast<double>().array() * u.array() / sigma).matrix();
  if (centre) w.array() -= w.mean();
  u = w;
  return beta_term;
}

DlaPart part(DlaPart::Kind k, int l, int h, LineRef line, std::string label, double value) {
  return DlaPart{k, l, h, line, std::move(label), value};
}

std::string sub_name(const SubLayer& s) { return s.tag[0] ? std::string(" (") + s.tag + ")" : std::string(); }

// The parts of one attention sub-layer at position t, read back with u: each head's W_o[:, cols of h] Y^h
// and b_o (pushed in reverse: b_o, then heads H … 1).
void attention_parts(const Trace& tr, const ModelConfig& c, const SubLayer& s, int l, int t, const VecD& u,
                     std::vector<DlaPart>& out) {
  const LineRef call = sum_line(c, s.at);
  const Value* Y = value_at(tr, PatchPoint{call, lines::mh_attention::Y.alg, lines::mh_attention::Y.line, l, 0, "Y"});
  if (!Y) throw Error("the trace has no Y of Algorithm 5 for layer " + std::to_string(l) + ": trace the forward run on core's attention");
  const int H = static_cast<int>(s.attn->heads.size());
  const int d_mid = static_cast<int>(Y->m.rows()) / H;
  const VecD y = Y->m.col(t).cast<double>();
  if (s.attn->b_o.size())
    out.push_back(part(DlaPart::Kind::AttentionBias, l, 0, call, "b_o L" + std::to_string(l) + sub_name(s),
                       u.dot(s.attn->b_o.cast<double>())));
  for (int h = H; h >= 1; --h) {
    const VecD c_h = s.attn->W_o.middleCols((h - 1) * d_mid, d_mid).cast<double>() * y.segment((h - 1) * d_mid, d_mid);
    out.push_back(part(DlaPart::Kind::Head, l, h, call, "L" + std::to_string(l) + " H" + std::to_string(h) + sub_name(s),
                       u.dot(c_h)));
  }
}

VecD readout(const Bound& b, int alg, int y) {
  const MapMc& W_u = alg == 10 ? b.gpt.W_u : b.ed.W_u;
  const MapMc& W_e = alg == 10 ? b.gpt.W_e : b.ed.W_e;
  return W_u.size() == 0 ? VecD(W_e.col(y - 1).cast<double>()) : VecD(W_u.row(y - 1).transpose().cast<double>());
}

double traced_logit(const Trace& t, LineRef line, int y, int pos) {
  for (const Event& e : t.events)
    if (e.kind == EventKind::SubStep && e.ref() == line)
      for (const Value& v : e.values)
        if (v.name.rfind("W_u X", 0) == 0) return v.m(y - 1, pos);
  throw Error("the trace has no W_u X on the unembedding line: trace the forward run");
}

}  // namespace

std::vector<MatF> residual_stream(const Model& m, const Trace& t) {
  const int alg = forward_alg(m);
  const Bound b(m, alg);
  return stream_of(m.config, stack_of(m.config, b, alg), t);
}

LogitLens logit_lens(const Model& m, const Trace& t) {
  LogitLens lens;
  lens.alg = forward_alg(m);
  const Bound b(m, lens.alg);
  const Stack s = stack_of(m.config, b, lens.alg);
  for (const MatF& X : stream_of(m.config, s, t)) lens.P.push_back(lens_P(m.config, b, lens.alg, X));
  const Value* P = value_at(t, PatchPoint{{}, s.logits.alg, s.logits.line, 0, 0, "P"});
  if (!P) throw Error("the trace has no P: the logit lens reads a whole traced forward run");
  lens.P_model = MatF(P->m);
  lens.x = t.tokens_x;
  return lens;
}

LensRun logit_lens(const Model& m, const Tokens& z, const Tokens& x) {
  LensRun run;
  Tracer tr(run.trace, ParamBinding::View);
  architecture(m.config).forward(m, z, x, &tr);
  run.lens = logit_lens(m, run.trace);
  return run;
}

double LogitAttribution::sum() const {
  return std::accumulate(parts.begin(), parts.end(), 0.0, [](double a, const DlaPart& p) { return a + p.value; });
}

LogitAttribution direct_logit_attribution(const Model& m, const Trace& tr, int pos, int y) {
  const ModelConfig& c = m.config;
  const int alg = forward_alg(m);
  if (alg == 9)
    throw Error("direct logit attribution needs a linear path from the stream to the logits; Algorithm 9's head "
                "GELU(W_f X + b_f 1ᵀ) is not linear: use the logit lens for BERT");
  const Bound b(m, alg);
  const Stack s = stack_of(c, b, alg);
  const std::vector<MatF> X = stream_of(c, s, tr);
  if (pos < 1 || pos > X[0].cols())
    throw Error("position " + std::to_string(pos) + " is outside [1, ℓ] = [1, " + std::to_string(X[0].cols()) + "]");
  if (y < 1 || y > c.N_V()) throw Error("token id " + std::to_string(y) + " is outside [1, N_V]");
  const int t = pos - 1;
  LogitAttribution a{pos, y, traced_logit(tr, s.logits, y, t), {}};
  std::vector<DlaPart>& out = a.parts;  // built from the logit back to the embedding, reversed at the end
  const MapVc& b_u = alg == 10 ? b.gpt.extras.b_u : b.ed.extras.b_u;
  if (b_u.size()) out.push_back(part(DlaPart::Kind::UnembeddingBias, 0, 0, s.logits, "b_u", b_u[y - 1]));
  VecD u = readout(b, alg, y);
  if (s.final_norm) {
    const MapVc& g = alg == 10 ? b.gpt.gamma : b.ed.dec_gamma;
    const MapVc& be = alg == 10 ? b.gpt.beta : b.ed.dec_beta;
    const double bt = through_norm(c, g, be, column(X[s.L], t), u);
    if (be.size()) out.push_back(part(DlaPart::Kind::NormOffset, 0, 0, s.logits, "β (final norm)", bt));
  }
  for (int l = s.L; l >= 1; --l) {
    const std::vector<SubLayer>& subs = s.layers[l - 1];
    for (int k = static_cast<int>(subs.size()) - 1; k >= 0; --k) {
      const SubLayer& sub = subs[k];
      const VecD sum = column(bound_X(tr, sum_line(c, sub.at), l), t);  // X + f(·)
      if (c.norm_pos() == NormPosition::Post) {  // the pair's norm is on the stream after f
        const double bt = through_norm(c, sub.gamma, sub.beta, sum, u);
        if (sub.beta.size())
          out.push_back(part(DlaPart::Kind::NormOffset, l, 0, next_line(sub.at), "β L" + std::to_string(l) + "." + std::to_string(k + 1), bt));
      }
      if (sub.attn) {
        attention_parts(tr, c, sub, l, t, u, out);
      } else {
        const VecD before = k > 0 ? column(bound_X(tr, next_line(subs[k - 1].at), l), t) : column(X[l - 1], t);
        out.push_back(part(DlaPart::Kind::Mlp, l, 0, sum_line(c, sub.at), "MLP L" + std::to_string(l), u.dot(sum - before)));
      }
    }
  }
  out.push_back(part(DlaPart::Kind::Embedding, 0, 0, s.X0, "embedding (direct path)", u.dot(column(X[0], t))));
  std::reverse(out.begin(), out.end());
  return a;
}

LogitAttribution direct_logit_attribution(const Model& m, const Tokens& z, const Tokens& x, int pos, int y) {
  const LensRun run = logit_lens(m, z, x);
  if (pos < 1 || pos > static_cast<int>(x.size()))
    throw Error("position " + std::to_string(pos) + " is outside [1, ℓ] = [1, " + std::to_string(x.size()) + "]");
  return direct_logit_attribution(m, run.trace, pos, y > 0 ? y : top_token(run.lens.P_model, pos - 1));
}

int top_token(const MatF& P, int t) {
  Eigen::Index r = 0;
  P.col(t).maxCoeff(&r);
  return static_cast<int>(r) + 1;
}

std::vector<int> top_tokens(const MatF& P, int t, int k) {
  std::vector<int> ids(static_cast<size_t>(P.rows()));
  std::iota(ids.begin(), ids.end(), 0);
  k = std::min<int>(k, static_cast<int>(ids.size()));
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int a, int b) { return P(a, t) > P(b, t) || (P(a, t) == P(b, t) && a < b); });
  ids.resize(static_cast<size_t>(k));
  for (int& i : ids) ++i;
  return ids;
}

}  // namespace sf
