// Stepformer's backward listings, traced (not in the paper): the lines the adjoints of Algorithm 10
// (GPT, adjoint_dtransformer.cpp), Algorithm 9 (BERT, adjoint_etransformer.cpp) and Algorithm 8 (the
// encoder-decoder, adjoint_edtransformer.cpp) share, built from the block adjoints of adjoints.hpp:
//  - one residual sub-layer and its norm, the mirror of variant_layers::residual_line_pair:
//      post-LN (the paper's 8, 9): line n: X ← X + f(X);  line n+1: X[:, t] ← norm(X[:, t] | γ, β)
//        adjoint of n+1 FIRST: Algorithm 6's adjoint per column → ∇X of line n's output, ∇γ, ∇β;
//        adjoint of n: ∇X ← ∇X (the residual) + ∇X through f
//      pre-LN (a variant):       line n: X̃[:, t] ← norm(X[:, t] | γ, β);  line n+1: X ← X + f(X̃)
//        adjoint of n+1: ∇X̃ through f; ∇X passes the residual unchanged (a PARTIAL gradient)
//        adjoint of n: ∇X ← ∇X + Algorithm 6's adjoint of ∇X̃ per column
//  - one self-attention layer (Alg 10 lines 5–8, Alg 9 lines 5–8, Alg 8 lines 5–8 on Z): the MLP's
//    pair, then the attention's;
//  - the unembedding line (Alg 10 line 11, Alg 9 line 12, Alg 8 line 21) and the embedding lines
//    (Alg 10 and 9 lines 3, 2; Alg 8 lines 12, 11 for x and 3, 2 for z).
// The three architectures so bind the same values on corresponding lines (tests/core/test_backprop_keys.cpp).
// Every event is made inside the caller's TraceBackward scope. Gradients ADD into ∇θ (zeroed once).
#pragma once
#include <string>
#include <vector>

#include "core/backprop/adjoints.hpp"
#include "core/gradients/grad.hpp"
#include "core/trace/trace.hpp"

namespace sf::arch_adjoint {

// One residual sub-layer's lines (alg, n) and (alg, n + 1), the stream's names ("X", "X̃" or "Z",
// "Z̃"), what its token axis indexes, and the names its norm's gradients are bound by ("∇γ¹_l", …).
struct ResidualLines {
  int alg = 0, line = 0;
  const char* name = "X";
  const char* tilde = "X̃";
  Axis tokens = Axis::TokenX;
  const char* dgamma = "∇γ";
  const char* dbeta = "∇β";
};

// The gradient of a stream (BERT's X, the decoder's X or the encoder's Z) as the backward goes.
template <class T>
struct Stream {
  Mat<T> dX;  // (d_e, ℓ) ∂loss/∂X at the current point of the backward
  Mat<T> dR;  // (d_e, ℓ) post-LN: ∂loss/∂(X + f(X)), the norm's input
  Mat<T> dF;  // (d_e, ℓ) pre-LN: ∂loss/∂X̃, f's input
};

inline const char* const kResidualOnlyNote =
    "Partial: the residual path of X ← X + f(X̃) only; the layer norm's path is added by the adjoint of the line "
    "before.";

// What a norm line's adjoint binds: ∇ of the norm's input, then the totals ∇γ, ∇β (RMSNorm: no β).
template <class T, class G>
std::vector<Value> norm_values(const std::string& dname, const Mat<T>& dX, Axis tokens, const char* dgamma_name,
                               const G& dgamma, const char* dbeta_name, const G& dbeta) {
  std::vector<Value> v{tv(dname, dX, Axis::Feature, tokens), tv(dgamma_name, dgamma)};
  if (dbeta.size() != 0) v.push_back(tv(dbeta_name, dbeta));
  return v;
}

// f's input as this sub-layer's lines name it (post-LN: the stream; pre-LN: its norm).
inline const char* f_input(const ResidualLines& at, NormPosition p) { return p == NormPosition::Pre ? at.tilde : at.name; }

// The adjoint of lines n + 1 and n. f_adjoint(dY, din, line) ADDS ∂loss/∂(f's input) through f into
// din given dY = ∂loss/∂(X + f(·)), emits f's nested frames, and makes line `line`'s event itself
// (post-LN: din already holds the residual's ∇X, so that line binds the whole ∇X).
template <class T, class FAdjoint>
void residual_line_pair_adjoint(const ModelConfig& c, Stream<T>& g, const ResidualLines& at,
                                const MapV<const T>& gamma, const SubLayerCache<T>& sub, Ref<T> dgamma, Ref<T> dbeta,
                                Tracer* tr, FAdjoint&& f_adjoint) {
  const std::string dname = std::string("∇") + at.name;
  auto norm_line = [&](int line, const Mat<T>& dX) {
    if (tr) tr->line(LineRef{at.alg, line}, norm_values(dname, dX, at.tokens, at.dgamma, dgamma, at.dbeta, dbeta));
  };
  const T eps = static_cast<T>(c.eps);
  if (sub.position == NormPosition::Pre) {
    // adjoint of n + 1: X ← X + f(X̃)
    g.dF.setZero(g.dX.rows(), g.dX.cols());  // (d_e, ℓ)
    f_adjoint(g.dX, g.dF, at.line + 1);
    // adjoint of n: X̃[:, t] ← norm(X[:, t] | γ, β), adding the norm's path into ∇X
    adjoint_norm_columns<T>(c.norm, eps, sub.X, sub.ln, gamma, g.dF, g.dX, dgamma, dbeta, tr);
    norm_line(at.line, g.dX);
    return;
  }
  // adjoint of n + 1: X[:, t] ← norm(R[:, t] | γ, β), R = X + f(X) the output of line n
  g.dR.setZero(g.dX.rows(), g.dX.cols());  // (d_e, ℓ)
  adjoint_norm_columns<T>(c.norm, eps, sub.R, sub.ln, gamma, g.dX, g.dR, dgamma, dbeta, tr);
  norm_line(at.line + 1, g.dR);
  // adjoint of n: X ← X + f(X): ∇X = ∇X (the residual) + ∇X through f
  g.dX = g.dR;
  f_adjoint(g.dR, g.dX, at.line);
}

// The event of an attention line's adjoint (self or cross), after its Algorithm 5 frame: post-LN
// binds ∇X (the residual's and the attention's paths); pre-LN ∇X̃ and the residual's partial ∇X.
template <class T>
void attention_line_event(Tracer* tr, const ResidualLines& at, NormPosition p, int line, const Mat<T>& dY,
                          const Mat<T>& din, std::vector<Value> more = {}) {
  if (!tr) return;
  std::vector<Value> values{tv(std::string("∇") + f_input(at, p), din, Axis::Feature, at.tokens)};
  if (p == NormPosition::Pre)
    values.push_back(with_note(tv(std::string("∇") + at.name, dY, Axis::Feature, at.tokens), kResidualOnlyNote));
  for (Value& v : more) values.push_back(std::move(v));
  tr->line(LineRef{at.alg, line}, std::move(values));
}

// Adjoint of one self-attention layer (GPT's, BERT's, the encoder's): lines n+3, n+2 (the MLP, γ², β²),
// then n+1, n (the self-attention with `mask`: causal for GPT, ≡ 1 for the others; γ¹, β¹). `at`
// names line n (5) and the stream.
template <class T>
void self_attention_layer_adjoint(const ModelConfig& c, const LayerW<const T>& W, const LayerCache<T>& lc, LayerW<T>& dW,
                           const Mask& mask, Stream<T>& g, Tracer* tr, ResidualLines at) {
  const NormPosition p = lc.mlp_ln.position;
  ResidualLines mlp = at;
  mlp.line = at.line + 2;
  mlp.dgamma = "∇γ²_l";
  mlp.dbeta = "∇β²_l";
  residual_line_pair_adjoint<T>(c, g, mlp, W.gamma2, lc.mlp_ln, dW.gamma2, dW.beta2, tr,
                                [&](const Mat<T>& dY, Mat<T>& din, int line) {
                                  MlpLineGrad<T> dmlp{dW.W_mlp1, dW.W_mlp2, dW.W_gate, dW.b_mlp1, dW.b_mlp2, dW.b_gate};
                                  adjoint_mlp<T>({lc.mlp_ln.input(), lc.mlp},
                                                 MlpLineW<T>{W.W_mlp1, W.W_mlp2, W.W_gate, W.b_mlp1, W.b_mlp2, W.b_gate}, c.act(), dY,
                                                 dmlp, din, f_input(mlp, p), MlpNames{}, tr, at.alg, line);
                                });
  at.dgamma = "∇γ¹_l";
  at.dbeta = "∇β¹_l";
  residual_line_pair_adjoint<T>(c, g, at, W.gamma1, lc.attn_ln, dW.gamma1, dW.beta1, tr,
                                [&](const Mat<T>& dY, Mat<T>& din, int line) {
                                  const MHAttentionForward<T> f = self_attention_forward<T>(lc.attn, W.attn, lc.attn_ln.input(), mask);
                                  adjoint_mh_attention<T>(f, W.attn, dY, dW.attn, din, din, tr);  // X̃ is both X and Z
                                  attention_line_event<T>(tr, at, p, line, dY, din);
                                });
}

// Adjoint of "return P = softmax(W_u X)" (+ b_u 1ᵀ, not in the paper) on (alg, line): Algorithm 7's
// adjoint per column and the line's event (adjoint_unembed_line). dX (assigned) = ∂loss/∂X.
// `tied_W_u`: the cache's W_eᵀ when tied (its ∇ goes into ∇W_e).
template <class T>
void unembed_line_adjoint(const Mat<T>& X, const Mat<T>& P, const Mat<T>& dP, const MapM<const T>& W_u,
                          const Mat<T>& tied_W_u, MapM<T>& dW_u, MapM<T>& dW_e, MapV<T>& db_u, Mat<T>& dX, Tracer* tr,
                          int alg, int line) {
  dX.setZero(X.rows(), X.cols());  // (d, ℓ)
  adjoint_unembed_line<T>(X, P, dP, unembedding_used<T>(W_u, tied_W_u), W_u.size() == 0, db_u.size() != 0, dW_u, dW_e,
                          db_u, dX, tr, alg, line);
}

// Adjoint of "X ← [e_1, e_2, … e_ℓ]" (line `line + 1`) and "for t ∈ [ℓ]: e_t ← W_e[:, s[t]] + W_p[:, t]"
// (line `line`, with the extras' sub-steps and Algorithms 1 and 2 per token). dE: ∇X of line + 1.
// `name`: the stream ("X" or "Z"); `partial`: a note on ∇W_e, ∇W_p when another line adds to them.
template <class T>
void embed_lines_adjoint(const ModelConfig& c, const Tokens& s, const ExtrasW<const T>& W,
                         const EmbeddingExtrasCache<T>& cache, const Mat<T>& dE, MapM<T>& dW_e, MapM<T>& dW_p,
                         ExtrasW<T>& dExtras, Tracer* tr, int alg, int line, Axis tokens, const std::string& partial) {
  if (tr) tr->line(LineRef{alg, line + 1}, {tv("∇e_t", dE, Axis::Feature, tokens)});
  adjoint_embed_line<T>(c, s, W, cache, dE, dW_e, dW_p, dExtras, tr, alg, line);
  if (!tr) return;
  // Notes: a tied W_e's gradient holds both uses; a W_p that is not trained has none (say why)
  const std::string no_wp = no_position_gradient_note(c);
  std::string note = partial;
  if (c.tied_unembedding) note += (note.empty() ? "" : " ") + std::string("Tied (variant): ∇W_e also holds ∇W_uᵀ.");
  if (!no_wp.empty()) note += (note.empty() ? "" : " ") + no_wp;
  auto noted = [&](Value v) { return partial.empty() ? v : with_note(std::move(v), partial); };
  std::vector<Value> values{with_note(tv("∇W_e", dW_e, Axis::Feature, Axis::Vocab), note)};
  if (no_wp.empty()) values.push_back(noted(tv("∇W_p", dW_p)));
  if (c.embedding_norm) values.insert(values.end(), {noted(tv("∇γ_emb", dExtras.emb_gamma)), noted(tv("∇β_emb", dExtras.emb_beta))});
  if (c.token_types > 0) values.push_back(noted(tv("∇W_s", dExtras.W_s)));
  tr->line(LineRef{alg, line}, std::move(values));
}

}  // namespace sf::arch_adjoint
