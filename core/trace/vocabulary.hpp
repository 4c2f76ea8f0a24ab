// The trace's vocabulary: typed names for what ties the producers of a trace (the algorithms, the
// patch points) to its consumers (experiments, dependencies, sessions, panels, the GPU records).
//
// A pseudocode line is a LineRef{alg, line} (the paper's numbers), never a code such as
// alg*1000 + line; the lines of the paper's 15 algorithms are named below, one constant each, so
// that the compiler finds every consumer of a line. A backward listing's line (issue 24: "adjoint
// of line n") is the same pair in Pass::Backward: LineRef::adjoint() names it.
//
// Pure data: no Eigen, no I/O.
#pragma once
#include <compare>

namespace sf {

// Which listing a line belongs to: the paper's forward pseudocode, or Stepformer's backward listing
// of the same algorithm (not in the paper; each of its lines is the adjoint of one forward line).
enum class Pass : unsigned char { Forward, Backward };

struct LineRef {
  int alg = 0;   // the paper's algorithm number (1–15); 0: no line (e.g. no calling line: top level)
  int line = 0;  // the paper's line number; 0: the algorithm's entry (its inputs bound)
  Pass pass = Pass::Forward;

  // A constructor, not an aggregate: a bare integer can never become a LineRef by brace elision
  // (a struct holding one, such as PatchPoint, cannot be initialised from an old alg*1000 + line).
  constexpr LineRef() = default;
  constexpr LineRef(int alg_, int line_, Pass pass_ = Pass::Forward) : alg(alg_), line(line_), pass(pass_) {}

  constexpr bool none() const { return alg == 0; }
  // The backward listing's line that is the adjoint of this forward line.
  constexpr LineRef adjoint() const { return {alg, line, Pass::Backward}; }
  friend constexpr bool operator==(const LineRef&, const LineRef&) = default;
  friend constexpr auto operator<=>(const LineRef&, const LineRef&) = default;
};

// The text form a session file keeps for a line (its "caller" field): alg*1000 + line, and
// 100000 more for a backward line; 0 for none. Only io/session_file.cpp reads or writes it.
constexpr int session_code(LineRef r) {
  return r.none() ? 0 : (r.pass == Pass::Backward ? 100000 : 0) + r.alg * 1000 + r.line;
}
constexpr LineRef from_session_code(int code) {
  const Pass p = code >= 100000 ? Pass::Backward : Pass::Forward;
  code %= 100000;
  return {code / 1000, code % 1000, p};
}

// Every numbered line of the paper's algorithms, named after what it computes (the comment quotes
// the paper). Algorithms 8, 9, 10 call MHAttention and layer_norm from the lines named
// *attention*, *norm*; Algorithms 11–13 run the forward pass on their `forward` line.
namespace lines {
namespace token_embedding {  // Algorithm 1
inline constexpr LineRef e{1, 1};  // return e = W_e[:, v]
}
namespace positional_embedding {  // Algorithm 2
inline constexpr LineRef e_p{2, 1};  // return e_p = W_p[:, ℓ]
}
namespace basic_attention {  // Algorithm 3
inline constexpr LineRef q{3, 1}, k{3, 2}, v{3, 3};
inline constexpr LineRef alpha{3, 4};    // ∀t: α_t = exp(qᵀk_t / √d_attn) / Σ_u …
inline constexpr LineRef v_tilde{3, 5};  // return ṽ = Σ_t α_t v_t
}
namespace attention {  // Algorithm 4
inline constexpr LineRef Q{4, 1}, K{4, 2}, V{4, 3};
inline constexpr LineRef S{4, 4};        // S ← Kᵀ Q
inline constexpr LineRef mask{4, 5};     // ∀t_z, t_x, if ¬Mask[t_z, t_x] then S[t_z, t_x] ← −∞
inline constexpr LineRef V_tilde{4, 6};  // return Ṽ = V · softmax(S / √d_attn)
}
namespace mh_attention {  // Algorithm 5
inline constexpr LineRef for_h{5, 1};    // For h ∈ [H]:
inline constexpr LineRef Y_h{5, 2};      // Y^h ← Attention(X, Z | W^h_qkv, Mask)
inline constexpr LineRef Y{5, 3};        // Y ← [Y^1; Y^2; … ; Y^H]
inline constexpr LineRef V_tilde{5, 4};  // return Ṽ = W_o Y + b_o 1ᵀ
}
namespace layer_norm {  // Algorithm 6
inline constexpr LineRef m{6, 1}, v{6, 2};
inline constexpr LineRef e_hat{6, 3};  // return ê = (e − m)/√v ⊙ γ + β
}
namespace unembedding {  // Algorithm 7
inline constexpr LineRef p{7, 1};  // return p = softmax(W_u e)
}
namespace ed_transformer {  // Algorithm 8
inline constexpr LineRef l_z{8, 1}, enc_embed{8, 2}, Z{8, 3}, enc_loop{8, 4};
inline constexpr LineRef enc_attention{8, 5};  // Z ← Z + MHAttention(Z | W^enc_l, Mask ≡ 1)
inline constexpr LineRef enc_norm1{8, 6}, enc_mlp{8, 7}, enc_norm2{8, 8}, enc_end{8, 9};
inline constexpr LineRef l_x{8, 10}, dec_embed{8, 11}, X{8, 12}, dec_loop{8, 13};
inline constexpr LineRef self_attention{8, 14};  // X ← X + MHAttention(X | W^dec_l, Mask[t, t′] ≡ [[t ≤ t′]])
inline constexpr LineRef dec_norm3{8, 15};
inline constexpr LineRef cross_attention{8, 16};  // X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1)
inline constexpr LineRef dec_norm4{8, 17}, dec_mlp{8, 18}, dec_norm5{8, 19}, dec_end{8, 20};
inline constexpr LineRef P{8, 21};  // return P = softmax(W_u X)
}
namespace e_transformer {  // Algorithm 9
inline constexpr LineRef l{9, 1}, embed{9, 2}, X{9, 3}, loop{9, 4};
inline constexpr LineRef attention{9, 5};  // X ← X + MHAttention(X | W_l, Mask ≡ 1)
inline constexpr LineRef norm1{9, 6}, mlp{9, 7}, norm2{9, 8}, end{9, 9};
inline constexpr LineRef final_gelu{9, 10};  // X ← GELU(W_f X + b_f 1ᵀ)
inline constexpr LineRef final_norm{9, 11};  // for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)
inline constexpr LineRef P{9, 12};
}
namespace d_transformer {  // Algorithm 10
inline constexpr LineRef l{10, 1}, embed{10, 2}, X{10, 3}, loop{10, 4};
inline constexpr LineRef norm1{10, 5};      // for t ∈ [ℓ]: X̃[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)
inline constexpr LineRef attention{10, 6};  // X ← X + MHAttention(X̃ | W_l, Mask[t, t′] = [[t ≤ t′]])
inline constexpr LineRef norm2{10, 7}, mlp{10, 8}, end{10, 9};
inline constexpr LineRef final_norm{10, 10};  // for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)
inline constexpr LineRef P{10, 11};
}
namespace ed_training {  // Algorithm 11
inline constexpr LineRef epoch{11, 1}, sequence{11, 2}, length{11, 3};
inline constexpr LineRef forward{11, 4}, loss{11, 5};
inline constexpr LineRef update{11, 6};  // θ ← θ − η · ∇loss(θ)
inline constexpr LineRef end_sequence{11, 7}, end_epoch{11, 8}, result{11, 9};
}
namespace e_training {  // Algorithm 12
inline constexpr LineRef epoch{12, 1}, sequence{12, 2}, length{12, 3}, for_t{12, 4};
inline constexpr LineRef mask_token{12, 5};  // x̃_n[t] ← mask_token or x_n[t] randomly …
inline constexpr LineRef end_t{12, 6}, masked{12, 7}, forward{12, 8}, loss{12, 9};
inline constexpr LineRef update{12, 10};  // θ ← θ − η · ∇loss(θ)
inline constexpr LineRef end_sequence{12, 11}, end_epoch{12, 12}, result{12, 13};
}
namespace d_training {  // Algorithm 13
inline constexpr LineRef epoch{13, 1}, sequence{13, 2}, length{13, 3};
inline constexpr LineRef forward{13, 4}, loss{13, 5};
inline constexpr LineRef update{13, 6};  // θ ← θ − η · ∇loss(θ)
inline constexpr LineRef end_sequence{13, 7}, end_epoch{13, 8}, result{13, 9};
}
namespace d_inference {  // Algorithm 14
inline constexpr LineRef l{14, 1}, step{14, 2}, forward{14, 3}, p{14, 4};
inline constexpr LineRef sample{14, 5};  // sample a token y from q ∝ p^{1/τ}
inline constexpr LineRef append{14, 6}, end{14, 7}, result{14, 8};
}
namespace ed_inference {  // Algorithm 15
inline constexpr LineRef bos{15, 1}, y{15, 2};
inline constexpr LineRef loop{15, 3};  // while y ≠ eos_token do
inline constexpr LineRef forward{15, 4}, p{15, 5};
inline constexpr LineRef sample{15, 6};  // sample a token y from q ∝ p^{1/τ}
inline constexpr LineRef append{15, 7}, end{15, 8}, result{15, 9};
}

// Every numbered line above, for the tests that check the vocabulary against the pseudocode table
// and the events a pass emits.
inline constexpr LineRef kAll[] = {
    token_embedding::e, positional_embedding::e_p,
    basic_attention::q, basic_attention::k, basic_attention::v, basic_attention::alpha, basic_attention::v_tilde,
    attention::Q, attention::K, attention::V, attention::S, attention::mask, attention::V_tilde,
    mh_attention::for_h, mh_attention::Y_h, mh_attention::Y, mh_attention::V_tilde,
    layer_norm::m, layer_norm::v, layer_norm::e_hat, unembedding::p,
    ed_transformer::l_z, ed_transformer::enc_embed, ed_transformer::Z, ed_transformer::enc_loop,
    ed_transformer::enc_attention, ed_transformer::enc_norm1, ed_transformer::enc_mlp, ed_transformer::enc_norm2,
    ed_transformer::enc_end, ed_transformer::l_x, ed_transformer::dec_embed, ed_transformer::X,
    ed_transformer::dec_loop, ed_transformer::self_attention, ed_transformer::dec_norm3,
    ed_transformer::cross_attention, ed_transformer::dec_norm4, ed_transformer::dec_mlp, ed_transformer::dec_norm5,
    ed_transformer::dec_end, ed_transformer::P,
    e_transformer::l, e_transformer::embed, e_transformer::X, e_transformer::loop, e_transformer::attention,
    e_transformer::norm1, e_transformer::mlp, e_transformer::norm2, e_transformer::end, e_transformer::final_gelu,
    e_transformer::final_norm, e_transformer::P,
    d_transformer::l, d_transformer::embed, d_transformer::X, d_transformer::loop, d_transformer::norm1,
    d_transformer::attention, d_transformer::norm2, d_transformer::mlp, d_transformer::end,
    d_transformer::final_norm, d_transformer::P,
    ed_training::epoch, ed_training::sequence, ed_training::length, ed_training::forward, ed_training::loss,
    ed_training::update, ed_training::end_sequence, ed_training::end_epoch, ed_training::result,
    e_training::epoch, e_training::sequence, e_training::length, e_training::for_t, e_training::mask_token,
    e_training::end_t, e_training::masked, e_training::forward, e_training::loss, e_training::update,
    e_training::end_sequence, e_training::end_epoch, e_training::result,
    d_training::epoch, d_training::sequence, d_training::length, d_training::forward, d_training::loss,
    d_training::update, d_training::end_sequence, d_training::end_epoch, d_training::result,
    d_inference::l, d_inference::step, d_inference::forward, d_inference::p, d_inference::sample,
    d_inference::append, d_inference::end, d_inference::result,
    ed_inference::bos, ed_inference::y, ed_inference::loop, ed_inference::forward, ed_inference::p,
    ed_inference::sample, ed_inference::append, ed_inference::end, ed_inference::result,
};
}  // namespace lines

}  // namespace sf

// ---- Not in the paper (issue 25): Stepformer's listings of the encyclopedia article's (seed 004)
// algorithms. Each has an id outside the paper's 1–15 for LineRef / Event::alg; pseudocode.hpp's
// algorithm_label() shows it ("4-F") wherever "Algorithm N" is printed.
namespace sf {
namespace algs {
// Algorithm 4-F: Ṽ ← FlashAttention(X, Z | W_qkv, Mask; B_r, B_c) (Dao et al. 2022), displayed "4-F".
inline constexpr int flash_attention = 104;
}  // namespace algs
namespace lines::flash_attention {  // Algorithm 4-F (core/algorithms/alg04f_flash_attention.cpp)
inline constexpr LineRef Q{104, 1}, K{104, 2}, V{104, 3};
inline constexpr LineRef for_i{104, 4};    // for i = 1, 2, …: query block I of B_r columns
inline constexpr LineRef init{104, 5};     // m ← −∞, ℓ ← 0, O ← 0
inline constexpr LineRef for_j{104, 6};    // for j = 1, 2, …: key block J of B_c tokens
inline constexpr LineRef skip{104, 7};     // if ¬Mask on all of J_j × I_i then skip the block
inline constexpr LineRef S_blk{104, 8};    // S_blk ← K[:, J]ᵀ Q[:, I] / √d_attn, −∞ where ¬Mask
inline constexpr LineRef m_new{104, 9};    // m_new ← max(m, max_{t_z} S_blk[t_z, :])
inline constexpr LineRef O{104, 10};       // O ← O · diag(exp(m − m_new)) + V[:, J] exp(S_blk − 1 m_newᵀ)
inline constexpr LineRef ell{104, 11};     // ℓ ← ℓ ⊙ exp(m − m_new) + 1ᵀ exp(S_blk − 1 m_newᵀ)
inline constexpr LineRef m{104, 12};       // m ← m_new
inline constexpr LineRef V_block{104, 14};  // Ṽ[:, I] ← O · diag(ℓ)⁻¹
inline constexpr LineRef V_tilde{104, 16};  // return Ṽ
inline constexpr LineRef kAll[] = {Q, K, V, for_i, init, for_j, skip, S_blk, m_new, O, ell, m, V_block, V_tilde};
}  // namespace lines::flash_attention
}  // namespace sf

// ---- Issue 25, item 2 (not in the paper): speculative decoding (Leviathan et al. 2023, Chen et al.
// 2023; the encyclopedia article, seed 004). core/algorithms/alg14s_speculative_decoding.cpp.
namespace sf {
namespace algs {
// Algorithm 14-S: y ← SpeculativeDecoding(x, θ_target, θ_draft; K, τ, ℓ_gen), displayed "14-S".
inline constexpr int speculative_decoding = 105;
}  // namespace algs
namespace lines::speculative_decoding {  // Algorithm 14-S (core/pseudocode/speculative_listing.cpp)
inline constexpr LineRef l{105, 1};          // ℓ ← length(x)
inline constexpr LineRef round{105, 2};      // while length(x) < ℓ + ℓ_gen do (one round)
inline constexpr LineRef K_round{105, 3};    // K′ ← min(K, …): fewer proposals near ℓ_gen and ℓ_max
inline constexpr LineRef draft{105, 5};      // q_i ∝ P_draft[:, last]^{1/τ}
inline constexpr LineRef propose{105, 6};    // sample x̃_i from q_i
inline constexpr LineRef target{105, 8};     // P ← DTransformer([x, x̃] | θ_target): p_1 … p_{K′+1}
inline constexpr LineRef ratio{105, 10};     // r ← p_i(x̃_i)/q_i(x̃_i), draw u
inline constexpr LineRef accept{105, 11};    // if u < min(1, r) then x ← [x, x̃_i]
inline constexpr LineRef residual{105, 13};  // p′ ← norm(max(0, p_i − q_i))
inline constexpr LineRef replace{105, 14};   // sample y from p′, x ← [x, y], end the round
inline constexpr LineRef bonus{105, 16};     // all K′ accepted: sample y from p_{K′+1}, x ← [x, y]
inline constexpr LineRef result{105, 18};    // return y = x[ℓ+1 : ℓ+ℓ_gen]
inline constexpr LineRef kAll[] = {l, round, K_round, draft, propose, target, ratio, accept, residual, replace, bonus, result};
}  // namespace lines::speculative_decoding
}  // namespace sf

// ---- Not in the paper (issue 25, item 3): random-feature attention (Peng et al. 2021, Performer).
namespace sf {
namespace algs {
// Algorithm 4-R: Ṽ ← RFAttention(X, Z | W_qkv, Mask; D, ω) (Peng et al. 2021; the encyclopedia
// article, seed 004), displayed "4-R".
inline constexpr int random_feature_attention = 106;
}  // namespace algs
namespace lines::random_feature_attention {  // Algorithm 4-R (core/algorithms/alg04r_random_feature_attention.cpp)
inline constexpr LineRef Q{106, 1}, K{106, 2}, V{106, 3};
inline constexpr LineRef W{106, 4};        // σ ← d_attn^{1/4}; w_i ← ω_i/σ
inline constexpr LineRef phi_Q{106, 5};    // Φ_Q ← φ(Q)
inline constexpr LineRef phi_K{106, 6};    // Φ_K ← φ(K)
inline constexpr LineRef kappa{106, 7};    // κ[t_z] ← exp(‖k_{t_z}‖²/2σ² − c)
inline constexpr LineRef init{106, 8};     // S_φ ← 0, s_φ ← 0, g ← 0, n ← 0
inline constexpr LineRef for_t{106, 9};    // for t_x ∈ [ℓ_x], by the number of keys Mask allows it
inline constexpr LineRef add{106, 10};     // while n < n(t_x): add key n's κ φ(k) vᵀ, κ φ(k), κ
inline constexpr LineRef num{106, 11};     // a ← S_φᵀ φ(q), b ← s_φᵀ φ(q)
inline constexpr LineRef V_col{106, 12};   // Ṽ[:, t_x] ← a / max(b, ε g)
inline constexpr LineRef V_tilde{106, 14};  // return Ṽ (with the comparison against Algorithm 4)
inline constexpr LineRef kAll[] = {Q, K, V, W, phi_Q, phi_K, kappa, init, for_t, add, num, V_col, V_tilde};
}  // namespace lines::random_feature_attention
}  // namespace sf
