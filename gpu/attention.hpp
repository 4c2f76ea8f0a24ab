// Algorithm 4, Ṽ ← Attention(X, Z | W_qkv, Mask), and Algorithm 5, MHAttention, on the GPU as
// OpenGL 4.3 compute shaders (shaders/). Core's Eigen attention stays the ground truth; this
// computes the same numbers (within float rounding) in one of two forms:
//
//   Form::Teaching  one dispatch per pseudocode line, all heads at once:
//                   L1–L3 Q, K, V (linear.comp), L4 S ← KᵀQ (scores.comp),
//                   L5 masked S (mask.comp), L6 A ← softmax(S/√d_attn) (softmax_columns.comp),
//                   L6 Ṽ = V·A (apply_values.comp). S, masked S and A are kept and can be read back.
//   Form::Fused     L1–L3 as above, then L4–L6 in one dispatch (flash_attention.comp): tiles
//                   of K and V in shared memory and an online softmax; the ℓ_z×ℓ_x matrix is never
//                   stored, and key tiles the unidirectional mask hides are skipped.
//
// Algorithm 5's line 4, Ṽ ← W_o Y + b_o 1ᵀ, is a further dispatch (linear.comp) on the GPU.
// The variants (AttentionOptions, seed 004) run on the GPU in both forms: RoPE rotates Q and K
// after lines 1–2 (rope.comp, cos/sin of t·θ_i computed in double on the CPU as core does);
// ALiBi adds m_h·B in line 6 (softmax_columns.comp, flash_attention.comp), and so does the relative
// bias (T5, position "relative") its B = W_rel[h, bucket(t_z − t_x)], from one value per diagonal
// computed on the CPU (B is Toeplitz: the GPU never holds it as ℓ_z×ℓ_x); with H_kv < H,
// lines 2–3 compute K, V once per key/value head and lines 4–6 of query head h read its group's.
// Random-feature attention (Algorithm 4-R, not in the paper; attention "random_features") replaces
// lines 4–6 in either form by its lines 4–13 (rf_features.comp: φ(Q), φ(K); rf_key_weights.comp: κ;
// rf_prefix_sums.comp: the running sums and a / max(b, ε·g)), with each head's directions drawn on the
// CPU as core draws them: linear in ℓ_x + ℓ_z, never an ℓ_z×ℓ_x matrix.
// Matrices keep the paper's column convention (tokens are columns, column-major like core's
// MatF), so upload and read-back are plain copies. The mask is looked at once per call:
// all ones runs as bidirectional, [[t_z ≤ t_x]] as unidirectional (causal), anything else is
// uploaded as an explicit 0/1 matrix.
//
// A GpuAttention lives on one GL context: its own headless one (create) or the caller's
// (create_on_current_context, e.g. the app's window). Use it, and destroy it, on the thread
// where that context is current. Everything that fails throws sf::Error or, at creation,
// returns nullptr with the reason; nothing aborts.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "gpu/device.hpp"
#include "gpu/headless_gl.hpp"

namespace sf::gpu {

enum class Form { Teaching, Fused };
const char* to_string(Form f);  // "teaching", "fused"

// The time of one compute dispatch. gpu_ms comes from a GL_TIMESTAMP query pair around the
// dispatch (NaN where the GL has no GPU clock, or where the pair reads the same time, as on
// Mesa's llvmpipe); cpu_ms is the CPU clock from a glFinish before to a glFinish after it, a
// cross-check that includes the driver's overhead.
struct DispatchTime {
  std::string what;    // "Alg. 4 L4: S ← Kᵀ Q (8 heads)"; names the variant where it acts ("… RoPE …", "… m_h·B … (ALiBi)")
  int algorithm = 4;   // the paper's algorithm: 4 (a head's lines, all heads at once) or 5 (line 4, W_o);
                       // algs::random_feature_attention for Algorithm 4-R's (not in the paper)
  int line_first = 0;  // the pseudocode lines it computes: 4 … 4 for one line, 4 … 6 for the fused form
  int line_last = 0;
  std::string heads;   // "1–8" (query heads), "1–2 (key/value)" under H_kv < H, "" for Algorithm 5 line 4
  double gpu_ms = 0;
  double cpu_ms = 0;
};

// What one MHAttention call is, in words for the GPU tab and the CLI: self- or cross-attention
// (Z is X or not), the mask's kind (bidirectional, causal, or explicit: prefix-LM, padding, a
// toggled cell) and the variant (RoPE, ALiBi, relative bias, random features, H_kv < H), e.g.
// "self-attention · causal mask · RoPE · H_kv = 1 of H = 4".
std::string describe_call(bool self, const Mask& mask, const AttentionOptions& av, int H);

// Everything the teaching form computed for one head, read back, and the dispatch times.
struct GpuAttentionResult {
  AttentionRecord<float> record;  // Q, K, V, S, S_masked (−∞ where ¬Mask), A, Vt, as core's
  std::vector<DispatchTime> times;
};

// What the fused form returns besides Ṽ: L[t_x] = log Σ_t_z exp(S[t_z, t_x]/√d_attn) over the
// unmasked t_z (−∞ for a column masked everywhere), so that
// softmax(S/√d_attn)[t_z, t_x] = exp(S[t_z, t_x]/√d_attn − L[t_x]) without ever storing it.
struct FusedResult {
  MatF Vt;  // (d_out, ℓ_x)
  MatF L;   // (1, ℓ_x)
  std::vector<DispatchTime> times;
};

class GpuAttention {
 public:
  // On a headless context of its own (HeadlessGl: EGL device or surfaceless), which it makes
  // current whenever it is used. nullptr, with why_not set, when there is no such context,
  // no OpenGL 4.3, or a shader does not compile.
  static std::unique_ptr<GpuAttention> create(std::string& why_not);
  // On the context current on this thread (the caller keeps it current while using this
  // object). `load` is the caller's GL loader, e.g. glfwGetProcAddress. nullptr, with why_not,
  // when no context is current, it is older than OpenGL 4.3, or a shader does not compile.
  static std::unique_ptr<GpuAttention> create_on_current_context(GlLoader load, std::string& why_not);
  ~GpuAttention();
  GpuAttention(const GpuAttention&) = delete;
  GpuAttention& operator=(const GpuAttention&) = delete;

  const DeviceInfo& device() const;
  // Algorithm 4-R: how many (query head, query column) pairs of the last mh_attention or
  // mh_attention_cached call had their denominator guarded (b < ε·g: divided by ε·g instead), core's
  // RfaStats::guarded summed over the heads; 0 after any other call.
  int guarded_columns() const;

  // Algorithm 4 for one head in the teaching form: every intermediate comes back.
  // X (d_x, ℓ_x), Z (d_z, ℓ_z), mask (ℓ_z, ℓ_x). Throws sf::Error on mismatched shapes or
  // when the device cannot hold S (it names the limit and what to do). `av` as core's
  // attention takes it: RoPE at x_pos0 + 1 …, z_pos0 + 1 …; ALiBi with the slope av.m.
  GpuAttentionResult teaching(const MatF& X, const MatF& Z, const AttentionHeadW<const float>& W, const Mask& mask,
                              const AttentionOptions& av = {});
  // Algorithm 4 for one head in the fused form; times are kept when `timed`.
  FusedResult fused(const MatF& X, const MatF& Z, const AttentionHeadW<const float>& W, const Mask& mask,
                    bool timed = false, const AttentionOptions& av = {});
  // Algorithm 5, all heads in each dispatch, then W_o Y + b_o 1ᵀ on the GPU. Returns
  // Ṽ (d_out, ℓ_x). `times`, when given, receives the dispatch times (else no timing, no
  // serialisation). `recs`, when given (teaching form only), receives each head's record, as
  // core's mh_attention fills it (Q_pre, K_pre under RoPE; B, m under ALiBi).
  // `av`: the call's variant as core's mh_attention takes it (av.patch is not read:
  // experiments run on core). RoPE rotates Q and K after lines 1–2 (positions x_pos0 + t,
  // z_pos0 + t); ALiBi adds m_h·B to S/√d_attn in line 6 (m_h = 2^{−8h/H}); with
  // 0 < H_kv < H the query heads of key/value head g = ⌊(h−1)·H_kv/H⌋ + 1 read its K and V,
  // computed once (W's heads of one group view the same W_k, W_v).
  MatF mh_attention(const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask, Form form,
                    std::vector<DispatchTime>* times = nullptr, std::vector<AttentionRecord<float>>* recs = nullptr,
                    const AttentionOptions& av = {});
  // The KV-cached step (not in the paper, seed 004): Algorithm 5 for n new query columns
  // X (d_x, n) against keys and values kept from earlier steps, K[h] (d_attn, ℓ_c) and V[h]
  // (d_mid, ℓ_c) for each query head h (core's GptKvCache / EdKvCache layout, after RoPE).
  // append = true (a cached self-attention, Z = X): lines 2–3 run on the GPU for the new
  // columns, RoPE at positions ℓ_c + 1 … ℓ_c + n, and their K, V are appended to K[h], V[h];
  // L4–6 then run over all ℓ_c + n keys with `mask` (ℓ_c + n, n), the new columns' part.
  // append = false (cross-attention over a cached Z): K, V are used as they are, mask (ℓ_c, n).
  // With H_kv < H the cache holds each query head's K, V as core's does (equal within a group):
  // the group's first query head's are uploaded, and the new columns appended to every head's.
  // ALiBi's and the relative bias's B are taken over keys 1 … ℓ_c + n and queries ℓ_c + 1 …; the cross-attention takes
  // no RoPE or ALiBi (it throws, as a cross-attention has neither in core).
  // Returns W_o Y + b_o 1ᵀ (d_out, n); equals core's cached attention (kv_cache.cpp) within
  // float rounding.
  MatF mh_attention_cached(const MatF& X, const MHAttentionW<const float>& W, std::vector<MatF>& K,
                           std::vector<MatF>& V, bool append, const Mask& mask, Form form,
                           const AttentionOptions& av = {}, std::vector<DispatchTime>* times = nullptr);

 private:
  struct Impl;
  explicit GpuAttention(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sf::gpu
