// The statements Algorithms 8, 9 and 10 share, written once with every variant of
// docs/variants.md: the embedding line (positions learned, sinusoidal, or none under RoPE, ALiBi
// and "none"), a residual sub-layer with its norm in either order (pre-LN, post-LN), the MLP with
// its activation (GELU, GELU_tanh, ReLU, SwiGLU) and the unembedding (W_u, or W_eᵀ when tied);
// and the ecosystem extras (not in the paper: BERT checkpoints' token-type embedding and embedding
// layer norm, the bias b_u on W_u). A variant changes what a line computes, not its number.
#pragma once
#include <string>

#include "core/algorithms/algorithms.hpp"

namespace sf::variant_layers {

// The line printed after `at` (a residual sub-layer's second line: its norm, or its sub-layer under
// pre-LN): a pair of lines is named by its first.
constexpr LineRef next_line(LineRef at) { return {at.alg, at.line + 1, at.pass}; }

// The paper's W_p (learned), the sinusoid (computed: §5 of the paper, base ℓ_max or
// position_base) or none (RoPE, ALiBi, "none": positions enter elsewhere or not at all).
// Returns (d_e, ℓ_max), empty for none.
template <class T>
Mat<T> position_matrix(const ModelConfig& c, const MapM<const T>& W_p);

// "for t ∈ [ℓ]: e_t ← W_e[:, s[t]] + W_p[:, t]" on line `at`, Algorithms 1 and 2 per token
// (Algorithm 2 only where a W_p is added), then the ecosystem extras (embedding_extras). Binds e_t,
// and the computed W_p or why there is none. Returns (d_e, ℓ).
template <class T>
Mat<T> embed_line(const Tokens& s, const ModelConfig& c, const MapM<const T>& W_e, const MapM<const T>& W_p,
                  const ExtrasW<const T>& extras, Tracer* tr, LineRef at, Axis tokens);

// Not in the paper (BERT checkpoints, Hugging Face's BertEmbeddings), on every column e_t of E:
//   e_t ← e_t + W_s[:, 1]                  (token_types > 0: the token-type embedding of segment 0)
//   e_t ← layer_norm(e_t | γ_emb, β_emb)   (embedding_norm: Algorithm 6 with the model's ε, always
//                                           layer_norm, as BERT's LayerNorm; nested Algorithm 6 calls)
// traced as sub-steps of line `at`. Nothing for a configuration without them. E is (d_e, ℓ).
template <class T>
void embedding_extras(Mat<T>& E, const ModelConfig& c, const ExtrasW<const T>& W, Tracer* tr, LineRef at,
                      Axis tokens);

// The MLP sub-layer's weights: W_b act(W_a X̃ + b_a 1ᵀ) + b_b 1ᵀ, SwiGLU's gate W_gate, b_gate
// (empty otherwise). a, b, gate are the names as printed ("mlp1", "mlp2", "gate").
template <class T>
struct Mlp {
  const MapM<const T>& W_a;
  const MapV<const T>& b_a;
  const MapM<const T>& W_b;
  const MapV<const T>& b_b;
  const MapM<const T>& W_gate;
  const MapV<const T>& b_gate;
  const char* a;
  const char* gate;
};

// "X ← X + W_b act(W_a in + b_a 1ᵀ) + b_b 1ᵀ" on line `at`, with c's activation and its
// sub-steps; binds `name` (X or Z) after the sum (a patch point of `site`). `in` may be X itself.
template <class T>
void mlp_line(Mat<T>& X, const Mat<T>& in, const std::string& in_name, const Mlp<T>& W, Activation act, Tracer* tr,
              LineRef at, const char* name, Axis tokens, const PatchSite& site = {});

// P = softmax(W_u X) with its sub-step "W_u X" on line `at`; W_u = W_eᵀ when tied
// (Dinan–Yaida–Zhang, GPT-2; bound as "W_u = W_eᵀ"). With a bias b_u (N_V; not in the paper: BERT's
// masked-LM head) P = softmax(W_u X + b_u 1ᵀ); an empty b_u adds nothing. Returns (N_V, ℓ).
template <class T>
Mat<T> unembed_line(const Mat<T>& X, const MapM<const T>& W_u, const MapM<const T>& W_e, const MapV<const T>& b_u,
                    Tracer* tr, LineRef at, std::vector<Value> extra = {});

// One residual sub-layer and its norm on lines `at` and next_line(at):
//   post-LN (Algorithms 8, 9): X ← X + f(X) on at, X ← norm(X | γ, β) on next_line(at);
//   pre-LN (Algorithm 10):     X̃ ← norm(X | γ, β) on at, X ← X + f(X̃) on next_line(at).
// add(X, in, in_name, line) adds f(in) to X and emits its line's event (after its own patch point).
// The norm's output is a patch point of `site` (experiments: core/experiments/).
template <class T, class Add>
void residual_line_pair(Mat<T>& X, const ModelConfig& c, const MapV<const T>& gamma, const MapV<const T>& beta,
                        Tracer* tr, LineRef at, const char* name, const char* tilde, Axis tokens,
                        const PatchSite& site, Add&& add) {
  if (c.norm_pos() == NormPosition::Pre) {
    Mat<T> Xt = norm_columns<T>(X, gamma, beta, c, tr);  // (d_e, ℓ)
    patch(site, at, tilde, Xt);  // patch point: X̃ of `line`
    if (tr) tr->line(at, {tv(tilde, Xt, Axis::Feature, tokens)});
    add(X, Xt, std::string(tilde), next_line(at));
  } else {
    add(X, X, std::string(name), at);  // add computes f(X) before adding it
    X = norm_columns<T>(X, gamma, beta, c, tr);  // (d_e, ℓ)
    patch(site, next_line(at), name, X);  // patch point: the norm's output on `line + 1`
    if (tr) tr->line(next_line(at), {tv(name, X, Axis::Feature, tokens)});
  }
}
// The same without experiments (Algorithm 14's KV cache).
template <class T, class Add>
void residual_line_pair(Mat<T>& X, const ModelConfig& c, const MapV<const T>& gamma, const MapV<const T>& beta,
                        Tracer* tr, LineRef at, const char* name, const char* tilde, Axis tokens, Add&& add) {
  residual_line_pair<T>(X, c, gamma, beta, tr, at, name, tilde, tokens, PatchSite{}, std::forward<Add>(add));
}

}  // namespace sf::variant_layers
