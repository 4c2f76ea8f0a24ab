// Stepformer's backward listings, traced: NOT IN THE PAPER. The paper prints no backward pass;
// each function here is the backward listing of one forward algorithm (one .cpp per algorithm),
// written per head and per line as the listing says, so that the traced ∇θ can be compared with
// the fused batched backward of core/gradients/ (the one training uses): two implementations.
//
// The contract (/work/briefs/i24-shared.md, DESIGN.md):
//  - A backward line is the adjoint of one forward line and carries its numbers:
//    LineRef{alg, n, Pass::Backward} == lines::…::X.adjoint(), "adjoint of line n". The lines run,
//    and are emitted, in REVERSE order of the forward lines. Every event of these functions is
//    made inside a TraceBackward scope (Event::pass == Pass::Backward); a frame is an Enter event
//    of the same algorithm number as the forward's (line 0: the incoming gradient and the forward
//    values the listing reads), and nested frames come BEFORE their calling line's event.
//  - A value a backward event binds is named ∇ + the forward name ("∇S", "∇W_q", "∇X̃", …). A
//    PARTIAL gradient (one path of several, or one column's or one head's term of a sum) carries a
//    Value::note saying which part it is. Loop indices idx.l, idx.h, idx.t are 1-based as in the
//    forward. A bound value is identified by BoundValueKey (bound_value_key.hpp): (alg, line,
//    Pass::Backward, l, h, t, name) and the architecture's line it runs inside; the torch reference
//    (tests/reference/gen_backprop_reference.py) keys its data exactly so. Within a line's adjoint (its
//    event and sub-steps) a name means one value: a partial of another value gets its own name ("∇X (…)").
//  - Forward values come from the batched forward caches with B = 1 (GptCache, BertCache, EdCache),
//    viewed, never recomputed: the traced ∇θ must equal the batched one (≤ 1e-12 relative in
//    double, ≤ 1e-6 in float).
//  - Every adjoint ADDS into its ∇ outputs (parameter gradients and input gradients): a tensor used
//    several times (W_e with a repeated token or a tied W_u, W_k^g shared by a group of query heads,
//    X̃ used as both X and Z by self-attention, the residual stream X) accumulates. The caller
//    zeroes ∇θ once (traced_backward). Without a tracer, the same arithmetic runs untraced.
//  - Parameters' gradients are bound ONCE per tensor per frame (never per column), and no big
//    matrix is copied per column: Algorithm 7's per-column frames bind N_V-long vectors only; the
//    whole ∇W_u is bound once by the caller's line.
#pragma once
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/gradients/grad.hpp"
#include "core/model/params.hpp"
#include "core/trace/trace.hpp"

namespace sf {

template <class T>
using CView = Eigen::Ref<const Mat<T>>;  // a read-only view of a forward value (a cache's block)

// ===== Algorithm 4: adjoint of Attention (adjoint_attention.cpp) ===================================

// One head's forward values, viewed in a batched cache (B = 1). Self-attention: X and Z view the
// same X̃. Build it in place (its members are views; never from temporaries).
template <class T>
struct AttentionForward {
  CView<T> X;               // (d_x, ℓ_x) primary sequence
  CView<T> Z;               // (d_z, ℓ_z) context
  CView<T> Q;               // (d_attn, ℓ_x) line 1, after RoPE's rotation when RoPE is on
  CView<T> K;               // (d_attn, ℓ_z) line 2, after RoPE's rotation
  CView<T> V;               // (d_mid, ℓ_z) line 3
  CView<T> A;               // (ℓ_z, ℓ_x) line 6: A = softmax(S/√d_attn) (ALiBi: of S/√d_attn + m_h·B)
  const Mask& mask;         // (ℓ_z, ℓ_x) line 5's Mask (key padding folded in)
  AttentionOptions variant; // rope_base > 0: RoPE; alibi with m: ALiBi's m_h; x_pos0, z_pos0; rf_D > 0: 4-R
  Mat<double> omega;        // (D, d_attn) Algorithm 4-R only (variant.random_features()): the head's ω; else empty
};

// Adjoint of Algorithm 4, Ṽ = Attention(X, Z | W_qkv, Mask), given ∇Ṽ (d_mid, ℓ_x). ADDS this
// head's terms into dW (W_q, b_q, W_k, b_k, W_v, b_v: with H_kv < H the group's shared W_k, b_k,
// W_v, b_v, so the heads of a group accumulate), dX (d_x, ℓ_x) and dZ (d_z, ℓ_z); for a
// self-attention the caller passes dX and dZ as views of the same ∇X̃ (both paths add up).
// Frame alg 4 (idx.h as the caller set it), events in this order:
//   Enter: "∇Ṽ"; the forward values "Q", "K", "V", "softmax(S/√d_attn)" (keys::attention_weights),
//          "Mask"; "W_q", "W_k", "W_v" (tparam: views when the tracer binds views).
//   adjoint of line 6 (Ṽ = V · A, A = softmax(S/√d_attn)), three sub-steps then the line:
//     sub "∇V ← ∇Ṽ Aᵀ":                                         binds "∇V"
//     sub "∇A ← Vᵀ ∇Ṽ":                                         binds "∇A" (note: A is softmax(S/√d_attn))
//     sub "∇S ← (A ⊙ (∇A − 1 (1ᵀ (A ⊙ ∇A)))) / √d_attn":        binds "∇S" (ALiBi: note that m_h·B is a
//                                                                 constant, the softmax adjoint is unchanged)
//     line:                                                      binds "∇V", "∇A", "∇S"
//   adjoint of line 5 (masked S ← −∞): binds "∇S", the gradient of line 4's S: masked entries are
//     set to exactly 0 (they already are: A is 0 there), note says so.
//   adjoint of line 4 (S = Kᵀ Q): binds "∇Q" = K ∇S, "∇K" = Q ∇Sᵀ.
//   adjoint of line 3 (V = W_v Z + b_v 1ᵀ): binds "∇W_v" = ∇V Zᵀ, "∇b_v" = ∇V 1 (with H_kv < H: this
//     head's term, note), "∇Z" = W_vᵀ ∇V (PARTIAL: line 3's path only, note).
//   adjoint of line 2 (K = W_k Z + b_k 1ᵀ):
//     RoPE only, sub "variant: RoPE — rotate ∇K back": binds "∇(W_k Z + b_k 1ᵀ)" = R_tᵀ ∇K per column;
//     line: "∇W_k", "∇b_k" (H_kv < H: this head's term, note), "∇Z" (lines 2 and 3: complete for this head).
//   adjoint of line 1 (Q = W_q X + b_q 1ᵀ):
//     RoPE only, sub "variant: RoPE — rotate ∇Q back": binds "∇(W_q X + b_q 1ᵀ)";
//     line: "∇W_q", "∇b_q", "∇X" = W_qᵀ ∇Q (self-attention: note that the caller adds ∇X + ∇Z).
//   relative bias only (issue 25), two subs of line 5's adjoint: "variant: relative bias — ∇B ← …"
//     binds "∇B" = ∇S·√d_attn; "… ∇W_rel[h, k] ← …" binds "∇W_rel[h, :]" (1, buckets), which is
//     ASSIGNED to *dW_rel: the caller adds it into row h of its ∇W_rel.
template <class T>
void adjoint_attention(const AttentionForward<T>& f, const AttentionHeadW<const T>& W, CView<T> dVt,
                       AttentionHeadW<T>& dW, Ref<T> dX, Ref<T> dZ, Tracer* tr, Mat<T>* dW_rel = nullptr);

// The adjoints of lines 3, 2, 1 (V, K, Q ← W Z/X + b 1ᵀ), given ∇Q, ∇K (after RoPE's rotation when
// it is on), ∇V: the events and sums described above, made at the lines L names (Algorithm 4's, or
// Algorithm 4-R's, whose lines 1–3 are the same). ADDS into dW, dX, dZ.
struct QkvLines {
  LineRef Q, K, V;  // the adjoint lines of Q ←, K ←, V ←
};
template <class T>
void adjoint_qkv_projections(const AttentionForward<T>& f, const AttentionHeadW<const T>& W, const Mat<T>& dQ,
                             const Mat<T>& dK, const Mat<T>& dV, AttentionHeadW<T>& dW, Ref<T> dX, Ref<T> dZ,
                             Tracer* tr, const QkvLines& L);

// ===== Algorithm 4-R: adjoint of RFAttention (adjoint_rf_attention.cpp; variant, not in the paper) ====

// Adjoint of Algorithm 4-R (core/pseudocode/rfa_listing.cpp), run by adjoint_attention when
// f.variant.random_features(): the same contract as Algorithm 4's adjoint (what it ADDS, H_kv, self-
// attention), f.A unused (4-R forms no weights), f.omega the head's ω. Lines 4–7's values are
// recomputed from Q and K (rf_forward_values: the forward caches none). The maths is
// core/gradients/rf_backward.hpp's. Frame alg 106 (algs::random_feature_attention), events:
//   Enter: "∇Ṽ", "Q", "K", "V", "Mask", "W_q", "W_k", "W_v".
//   adjoint of line 12 (Ṽ[:, t_x] ← a / max(b, ε g)): binds "∇a" (d_out, ℓ_x), "∇b" (1, ℓ_x), "∇g" (1, ℓ_x;
//     nonzero only in guarded columns, note).
//   adjoint of line 11 (a ← S_φᵀ φ(q), b ← s_φᵀ φ(q)): binds "∇φ(Q)" (2D, ℓ_x).
//   adjoint of line 10 (the prefix sums), sub "∇S_φ, ∇s_φ, ∇g ← suffix sums over the queries that see key n":
//     binds "∇S_φ" (2D, d_out; at key 1, note), "∇s_φ" (2D, ℓ_z), "∇g" (1, ℓ_z); line: "∇V", "∇φ(K)", "∇κ".
//   adjoint of line 7 (κ): binds "∇K" (PARTIAL: line 7's path, note).
//   adjoint of line 6 (φ(K)): binds "∇K" (lines 7 and 6: complete).
//   adjoint of line 5 (φ(Q)): binds "∇Q".
//   lines 3, 2, 1: adjoint_qkv_projections at lines::random_feature_attention's Q, K, V.
// Line 4 (w_i ← ω_i/σ) has no adjoint: ω is fixed. Lines 8, 9, 13 compute nothing to differentiate.
template <class T>
void adjoint_rf_attention(const AttentionForward<T>& f, const AttentionHeadW<const T>& W, CView<T> dVt,
                          AttentionHeadW<T>& dW, Ref<T> dX, Ref<T> dZ, Tracer* tr);

// ===== Algorithm 5: adjoint of MHAttention (adjoint_mh_attention.cpp) ==============================

// Algorithm 5's forward values for one sequence (B = 1), viewed in a batched cache.
template <class T>
struct MHAttentionForward {
  CView<T> X;                              // (d_x, ℓ_x) primary sequence (self-attention: X̃)
  CView<T> Z;                              // (d_z, ℓ_z) context (self-attention: X̃; cross: the encoder's Z)
  CView<T> Y;                              // (H·d_mid, ℓ_x) line 3, [Y^1; …; Y^H]
  const Mask& mask;                        // (ℓ_z, ℓ_x)
  std::vector<AttentionForward<T>> heads;  // (H) head h's values (query head h, its key/value head g(h))
};
// Self-attention (Alg. 10 L6, Alg. 9 L5, Alg. 8 L5, L14) from the batched cache (B = 1): Xt is X̃,
// the layer's f input; heads view cache.QKV and cache.A; RoPE, ALiBi, H_kv from cache.variant.
template <class T>
MHAttentionForward<T> self_attention_forward(const MHAttentionCache<T>& cache, const MHAttentionW<const T>& W,
                                             CView<T> Xt, const Mask& mask);
// Cross-attention (Alg. 8 L16, X ≠ Z) from its batched cache (B = 1): queries from Xt, keys and
// values from Z; Mask ≡ 1 (mask: ℓ_z × ℓ_x ones).
template <class T>
MHAttentionForward<T> cross_attention_forward(const MHCrossAttentionCache<T>& cache, const MHAttentionW<const T>& W,
                                              CView<T> Xt, CView<T> Z, const Mask& mask);

// Adjoint of Algorithm 5, Ṽ = MHAttention(X, Z | W, Mask), given ∇Ṽ (d_out, ℓ_x). ADDS into dW
// (every head's W_qkv, W_o, b_o), dX (d_x, ℓ_x) and dZ (d_z, ℓ_z); self-attention: dX and dZ view
// the same ∇X̃. X ≠ Z (cross-attention) sends gradient into both. Frame alg 5, events:
//   Enter: "∇Ṽ"; "Y"; "Mask"; "W_o".
//   adjoint of line 4 (Ṽ = W_o Y + b_o 1ᵀ): binds "∇W_o" = ∇Ṽ Yᵀ, "∇b_o" = ∇Ṽ 1, "∇Y" = W_oᵀ ∇Ṽ.
//   adjoint of line 3 (Y = [Y^1; …; Y^H]): binds "∇Y^1" … "∇Y^H" (rows of ∇Y).
//   for h = H, …, 1:
//     adjoint of line 1 (for h ∈ [H]; idx.h = h): binds "h".
//     [Algorithm 4 adjoint frame, idx.h = h, with ∇Ṽ = ∇Y^h]
//     adjoint of line 2 (Y^h = Attention(…)): binds "∇X" and "∇Z" summed over heads H … h (PARTIAL,
//       note: the heads not yet run add theirs; self-attention, Z = X: "∇X" only, holding both paths);
//       H_kv < H: also "∇W_k^g", "∇W_v^g" of h's group g, summed over the group's heads so far (note).
template <class T>
void adjoint_mh_attention(const MHAttentionForward<T>& f, const MHAttentionW<const T>& W, CView<T> dVt,
                          MHAttentionW<T>& dW, Ref<T> dX, Ref<T> dZ, Tracer* tr);

// ===== Algorithm 6: adjoint of layer_norm, and of RMSNorm (adjoint_layer_norm.cpp) =================

// Adjoint of ê = layer_norm(e | γ, β) for ONE column (the caller's "for t ∈ [ℓ]" sets idx.t), given
// ∇ê (d_e); e is the forward's input column, x_hat = (e − m)/√(v + ε) and rstd = 1/√(v + ε) the
// forward's (LayerNormCache: not recomputed), eps its ε (the paper has none: the forward divides by
// √(v + ε) and so does the adjoint, a note says so). ADDS into dgamma, dbeta (d_e) and de (d_e).
// Frame alg 6, events:
//   Enter: "∇ê", "e", "γ", "ε".
//   adjoint of line 3 (ê = (e − m)/√(v + ε) ⊙ γ + β), sub-steps then the line:
//     sub "∇γ ← ∇ê ⊙ (e − m)/√(v + ε)", sub "∇β ← ∇ê" (column t's terms, note: the caller sums over t),
//     sub "∇e ← ∇ê ⊙ γ / √(v + ε)" (PARTIAL: line 3's direct path, note),
//     sub "∇v ← −½ Σ_i ∇ê[i] γ[i] (e[i] − m) (v + ε)^{−3/2}", sub "∇m ← −Σ_i ∇ê[i] γ[i] / √(v + ε)";
//     line: binds "∇γ", "∇β", "∇e" (partial), "∇v", "∇m".
//   adjoint of line 2 (v = Σ_i (e[i] − m)²/d_e): binds "∇e" += ∇v · 2(e − m)/d_e (PARTIAL: lines 3 and 2),
//     "∇m" += −∇v · 2 Σ_i (e[i] − m)/d_e (≈ 0: Σ_i (e[i] − m) = 0 up to rounding, note).
//   adjoint of line 1 (m = Σ_i e[i]/d_e): binds "∇e" += ∇m/d_e · 1 (complete).
template <class T>
void adjoint_layer_norm(CView<T> e, CView<T> x_hat, T rstd, const MapV<const T>& gamma, T eps, CView<T> de_hat,
                        Ref<T> dgamma, Ref<T> dbeta, Ref<T> de, Tracer* tr);
// Variant RMSNorm (ê = e/√(v + ε) ⊙ γ, v = Σ_i e[i]²/d_e; no m, no β): frame alg 6 with no line 1:
//   Enter: "∇ê", "e", "γ", "ε" (note: RMSNorm variant).
//   adjoint of line 3: subs "∇γ ← ∇ê ⊙ e/√(v + ε)", "∇e ← ∇ê ⊙ γ/√(v + ε)" (partial),
//     "∇v ← −½ Σ_i ∇ê[i] γ[i] e[i] (v + ε)^{−3/2}"; line binds "∇γ", "∇e" (partial), "∇v".
//   adjoint of line 2 (v = Σ_i e[i]²/d_e): binds "∇e" += ∇v · 2e/d_e (complete).
template <class T>
void adjoint_rms_norm(CView<T> e, CView<T> x_hat, T rstd, const MapV<const T>& gamma, T eps, CView<T> de_hat,
                      Ref<T> dgamma, Ref<T> de, Tracer* tr);
// "for t ∈ [ℓ]: Y[:, t] ← norm(X[:, t] | γ, β)" backward: one Algorithm 6 adjoint frame per column
// t = 1 … ℓ (idx.t = t) with `norm` (layer_norm or RMSNorm) and ε. X (d_e, ℓ) the norm's input, ln its
// forward cache, dY (d_e, ℓ) ∇ of its output; ADDS into dX (the residual stream: X ← X + f(norm(X)) also passes ∇X on unchanged),
// dgamma, dbeta (dbeta empty under RMSNorm). Binds nothing itself: the caller's line binds the
// totals ("∇γ¹_l", "∇β¹_l", …, "∇X" or "∇X̃").
template <class T>
void adjoint_norm_columns(Norm norm, T eps, CView<T> X, const LayerNormCache<T>& ln, const MapV<const T>& gamma,
                          CView<T> dY, Ref<T> dX, Ref<T> dgamma, Ref<T> dbeta, Tracer* tr);

// ===== The MLP lines of Algorithms 8, 9, 10 (adjoint_mlp.cpp) =====================================

// The forward values of one MLP line (B = 1): f's input and the batched MlpCache.
template <class T>
struct MlpForward {
  CView<T> in;            // (d_e, ℓ) f's input: X̃ (pre-LN) or X (post-LN)
  const MlpCache<T>& c;   // H_pre = W_a in + b_a 1ᵀ, G_pre (SwiGLU), H_act = act(H_pre) or SiLU(G_pre) ⊙ H_pre
};
// Adjoint of X ← X + W_b act(W_a in + b_a 1ᵀ) + b_b 1ᵀ (a = mlp1, b = mlp2; Alg. 8's decoder mlp3,
// mlp4), given dX, ∇ of the line's output X (d_e, ℓ). The residual passes dX on unchanged; this
// ADDS ∇ of f's input into din (d_e, ℓ) and the parameter gradients into dW_a, db_a, dW_b, db_b
// (dW_gate, db_gate: SwiGLU only, else empty). No frame of its own: sub-steps of the caller's
// adjoint line (alg, line), then that line's event, with names built from in_name ("X̃" or "X") and
// the weights' names a ("mlp1"), b ("mlp2"), gate ("gate"):
//   sub "∇W_mlp2 ← ∇X (act(…))ᵀ, ∇b_mlp2 ← ∇X 1":      binds "∇W_mlp2", "∇b_mlp2"
//   sub "∇GELU(…) ← W_mlp2ᵀ ∇X":                       binds "∇GELU(…)" (the forward's label with ∇:
//                                                       "∇ReLU(…)", "∇GELU_tanh(…)", "∇SiLU(…) ⊙ (…)")
//   GELU / GELU_tanh / ReLU:
//     sub "∇(W_mlp1 X̃ + b_mlp1 1ᵀ) ← ∇GELU(…) ⊙ GELU′(…)": binds "∇(W_mlp1 X̃ + b_mlp1 1ᵀ)"
//       (GELU′(x) = Φ(x) + x φ(x); variant GELU_tanh: the tanh form's derivative; ReLU′ = [[x > 0]])
//   SwiGLU (variant):
//     sub "variant: SwiGLU — ∇SiLU(…) ← ∇(SiLU(…) ⊙ (…)) ⊙ (W_mlp1 X̃ + b_mlp1 1ᵀ)": binds "∇SiLU(…)"
//     sub "variant: SwiGLU — ∇(W_gate X̃ + b_gate 1ᵀ) ← ∇SiLU(…) ⊙ SiLU′(…)": binds "∇(W_gate X̃ + b_gate 1ᵀ)"
//     sub "variant: SwiGLU — ∇(W_mlp1 X̃ + b_mlp1 1ᵀ) ← ∇(SiLU(…) ⊙ (…)) ⊙ SiLU(…)"
//   sub "∇W_mlp1 ← ∇(…) X̃ᵀ, ∇b_mlp1 ← ∇(…) 1 (SwiGLU: ∇W_gate, ∇b_gate too)"
//   line: binds "∇X̃" (∇ of f's input from this line: W_mlp1ᵀ ∇(…) (+ W_gateᵀ ∇(gate)); post-LN: "∇X",
//         the residual's ∇X added), "∇W_mlp1", "∇b_mlp1", "∇W_mlp2", "∇b_mlp2" (SwiGLU: "∇W_gate", "∇b_gate").
struct MlpNames {
  const char* a = "mlp1";     // Alg. 8's decoder: "mlp3"
  const char* b = "mlp2";     // Alg. 8's decoder: "mlp4"
  const char* gate = "gate";
};
template <class T>
struct MlpLineW {  // the line's weights, views into θ (W_gate, b_gate empty unless SwiGLU)
  MapM<const T> W_a, W_b, W_gate;
  MapV<const T> b_a, b_b, b_gate;
};
template <class T>
struct MlpLineGrad {  // views into ∇θ, the same shapes (gate: empty unless SwiGLU)
  MapM<T> dW_a, dW_b, dW_gate;
  MapV<T> db_a, db_b, db_gate;
};
template <class T>
void adjoint_mlp(const MlpForward<T>& f, const MlpLineW<T>& W, Activation act, CView<T> dX, MlpLineGrad<T>& dW, Ref<T> din,
                 const std::string& in_name, const MlpNames& names, Tracer* tr, int alg, int line);

// ===== Algorithm 1 and Algorithm 2: adjoints of the embeddings =====================================

// Adjoint of Algorithm 1, e = W_e[:, v] (adjoint_token_embedding.cpp), for the token at position
// idx.t: ADDS ∇e (d_e) into column v of dW_e (a token used twice accumulates). Frame alg 1:
//   Enter: "v", "∇e".
//   adjoint of line 1: binds "∇W_e[:, v]" (this position's term, note: ∇W_e gathers columns, a
//     repeated token accumulates), and "∇W_e[:, v] (so far)" the column's total so far (note).
template <class T>
void adjoint_token_embedding(int v, CView<T> de, MapM<T>& dW_e, Tracer* tr);
// Adjoint of Algorithm 2, e_p = W_p[:, ℓ] (adjoint_positional_embedding.cpp): ADDS ∇e_p into
// column ℓ of dW_p (learned positions only). Frame alg 2:
//   Enter: "ℓ", "∇e_p".   adjoint of line 1: binds "∇W_p[:, ℓ]".
template <class T>
void adjoint_positional_embedding(int l, CView<T> de_p, MapM<T>& dW_p, Tracer* tr);
// The note bound where a model has no W_p to train (sinusoidal: computed, not trained; RoPE,
// ALiBi, none: no W_p at all). Empty for learned positions.
std::string no_position_gradient_note(const ModelConfig& c);

// "for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t]" backward (with the ecosystem extras: the embedding
// norm's Algorithm 6 adjoint frames per column, then ∇W_s[:, 1] = Σ_t ∇e_t), given dE (d_e, ℓ),
// ∇ of line 2's output. ADDS into dW_e, dW_p (learned only), and the extras' gradients. Per t: an
// Algorithm 1 adjoint frame, then (learned or sinusoidal W_p) nothing more for sinusoidal, an
// Algorithm 2 adjoint frame for learned W_p. Extras: sub-steps of the caller's line (alg, line):
// "∇layer_norm(e_t | γ_emb, β_emb)" (frames nested), "∇W_s[:, 1] ← Σ_t ∇e_t". Binds no line itself.
template <class T>
void adjoint_embed_line(const ModelConfig& c, const Tokens& s, const ExtrasW<const T>& extras,
                        const EmbeddingExtrasCache<T>& cache, CView<T> dE, MapM<T>& dW_e, MapM<T>& dW_p,
                        ExtrasW<T>& dextras, Tracer* tr, int alg, int line);

// ===== Algorithm 7: adjoint of Unembedding (adjoint_unembedding.cpp) ==============================

// Adjoint of p = softmax(W_u e) (not in the paper: + b_u) for ONE column: ∇(W_u e) = p ⊙ (∇p − 1 (pᵀ ∇p)),
// ASSIGNED to dlogits (N_V). Given the loss line's ∇p (−1/p[y] at the target y, 0 elsewhere).
template <class T>
void adjoint_unembedding_softmax(CView<T> p, CView<T> dp, Ref<T> dlogits);
// Algorithm 7's adjoint frame of column t (idx.t), given the column's values (the math is
// adjoint_unembedding_softmax's, and ∇e = W_uᵀ ∇(W_u e) computed for every column at once by the
// caller: W_u is N_V × d_e, a product per column would read it ℓ times). Events:
//   Enter: "∇p", "e", "p".
//   adjoint of line 1 (p = softmax(W_u e)):
//     sub "∇(W_u e) ← p ⊙ (∇p − 1 (pᵀ ∇p))": binds "∇(W_u e)" (N_V; with b_u: "∇(W_u e + b_u)")
//     sub "∇e ← W_uᵀ ∇(W_u e)" (tied: W_u = W_eᵀ, a note): binds "∇e"
//     line: binds "∇(W_u e)", "∇e". ∇W_u's column-t term ∇(W_u e) eᵀ is NOT bound here (N_V × d_e per
//     column): the calling line binds ∇W_u once.
template <class T>
void trace_adjoint_unembedding(Tracer* tr, CView<T> e, CView<T> p, CView<T> dp, CView<T> dlogits, CView<T> de,
                               bool tied, bool bias);
// Line 11 of Algorithm 10 (12 of 9, 21 of 8) backward: P = softmax(W_u X (+ b_u 1ᵀ)), given ∇P
// (N_V, ℓ): ∇(W_u X) column by column, ∇X = W_uᵀ ∇(W_u X), one Algorithm 7 adjoint frame per column
// t = 1 … ℓ, then ∇W_u = ∇(W_u X) Xᵀ (tied: added into dW_e as X ∇(W_u X)ᵀ = ∇W_uᵀ: "∇W_e collects ∇W_uᵀ"),
// ∇b_u = ∇(W_u X) 1. ADDS into dX (d_e, ℓ), dW_u (or dW_e), db_u. Then the line's event (alg, line):
// binds "∇X", "∇W_u" (N_V × d_e; tied: W_u = W_eᵀ's gradient, formed for the trace, whose transpose went
// into ∇W_e, with a note that ∇W_e gains ∇W_uᵀ, bound at the adjoint of the embedding line) and "∇b_u".
// W_u: the forward's (unembedding_used: tied, W_eᵀ); dW_u empty when tied; db_u empty without b_u.
template <class T>
void adjoint_unembed_line(CView<T> X, CView<T> P, CView<T> dP, CView<T> W_u, bool tied, bool bias, MapM<T>& dW_u,
                          MapM<T>& dW_e, MapV<T>& db_u, Ref<T> dX, Tracer* tr, int alg, int line);

// ===== The loss lines of Algorithms 11, 12, 13 (adjoint_loss.cpp) =================================

// Adjoint of loss(θ) = −Σ_{t : target_t ≠ 0} log P[target_t, t] (Alg. 13 line 5: target_t = x[t+1],
// t < ℓ, prefix-LM: only after the prefix, the SAME targets as DTraining; Alg. 11 line 5 the same on
// x; Alg. 12 line 9: target_t = x[t] at the masked positions). Returns ∇P (N_V, ℓ):
// ∇P[target_t, t] = −1/P[target_t, t], 0 elsewhere. Event (alg, line) = the loss line's adjoint
// (13, 5), (12, 9) or (11, 5), made as the FIRST event inside the architecture's backward frame:
// binds "∇P" (note: which positions carry loss), "loss".
template <class T>
Mat<T> adjoint_loss(CView<T> P, const std::vector<int>& targets, T loss, Tracer* tr, LineRef loss_line);
// The same for Algorithm 12 line 9 (event (12, 9): ∇P's note names T̃, the masked positions, as the only
// columns carrying loss) and Algorithm 11 line 5 (event (11, 5): t = 1 … ℓ−1, reaching the encoder
// only through the cross-attention).
template <class T>
Mat<T> adjoint_masked_lm_loss(CView<T> P, const std::vector<int>& targets, T loss, Tracer* tr);
template <class T>
Mat<T> adjoint_seq2seq_loss(CView<T> P, const std::vector<int>& targets, T loss, Tracer* tr);

// ===== Algorithm 10: adjoint of DTransformer (adjoint_dtransformer.cpp) ===========================

// The whole backward of Algorithm 10 for one sequence, from its batched forward cache (B = 1, the
// forward already run with loss_weight 1): ∇θ ADDED into dW (zeroed by the caller); the stream's
// gradients kept in `kept` when given (as ResidualGradients: X[l − 1] entering layer l, X[L] after
// the last layer). Frame alg 10 (Pass::Backward), events:
//   Enter: "x", "P", "loss".
//   the loss line's adjoint (13, 5): "∇P".
//   adjoint of line 11: [Alg. 7 adjoint frames, t = 1 … ℓ]; binds "∇X", "∇W_u" (tied: with a note), "∇b_u".
//   adjoint of line 10 (pre-LN only): [Alg. 6 adjoint frames]; binds "∇X", "∇γ", "∇β".
//   for l = L, …, 1:
//     adjoint of line 4 (for l; idx.l = l): binds "l".
//     pre-LN:  adjoint of line 8 (MLP sub-steps): "∇X̃" (∇ of the MLP's input), "∇W_mlp1", …;
//              adjoint of line 7 [Alg. 6 frames]: "∇X" (= ∇X + the norm's), "∇γ²_l", "∇β²_l";
//              adjoint of line 6 [Alg. 5 frame]: "∇X̃" (= ∇X + ∇Z of the self-attention) and "∇X",
//                the residual's path only (PARTIAL, note), as Algorithms 9 and 8 bind on their attention lines;
//              adjoint of line 5 [Alg. 6 frames]: "∇X" (entering layer l), "∇γ¹_l", "∇β¹_l".
//     post-LN (variant): adjoint of line 8 [Alg. 6 frames]: "∇X", "∇γ²_l", "∇β²_l"; line 7 (MLP): "∇X";
//              line 6 [Alg. 6 frames]: "∇X", "∇γ¹_l", "∇β¹_l"; line 5 [Alg. 5 frame]: "∇X".
//   adjoint of line 3 (X = [e_1, …, e_ℓ]): binds "∇e_t" (d_e, ℓ).
//   adjoint of line 2: [per t: Alg. 1 frame, Alg. 2 frame (learned W_p)]; binds "∇W_e" (tied: with
//     ∇W_uᵀ, note), "∇W_p" (learned) or a note why there is none, extras' "∇γ_emb", "∇β_emb", "∇W_s".
template <class T>
void adjoint_dtransformer(const ModelConfig& c, const GptW<const T>& W, const GptCache<T>& cache, GptW<T>& dW,
                          ResidualGradients<T>* kept, Tracer* tr);

// ===== Algorithm 9 (adjoint_etransformer.cpp) and Algorithm 8 (adjoint_edtransformer.cpp) =========
// Declared here, implemented by their files: the same pattern (frame alg 9 / 8, the loss line's
// adjoint (12, 9) / (11, 5) first, then the lines in reverse). Algorithm 8: the decoder's layers
// L_dec … 1 (adjoint of line 16 sends ∇ into both X and Z through cross_attention_forward), then the
// encoder's layers L_enc … 1 with ∇Z, then line 2's embeddings of z and line 11's of x.
template <class T>
struct BertCache;
template <class T>
struct EdCache;
template <class T>
void adjoint_etransformer(const ModelConfig& c, const BertW<const T>& W, const BertCache<T>& cache, BertW<T>& dW,
                          ResidualGradients<T>* kept, Tracer* tr);
template <class T>
void adjoint_edtransformer(const ModelConfig& c, const EdW<const T>& W, const EdCache<T>& cache, EdW<T>& dW,
                           ResidualGradients<T>* kept, Tracer* tr);

}  // namespace sf
