#version 430
// Algorithm 4-R, lines 8–13 (random-feature attention; not in the paper), all heads at once, in time
// linear in ℓ_x + ℓ_z (no ℓ_z×ℓ_x matrix is formed):
//   L8   S_φ ← 0, s_φ ← 0, g ← 0, n ← 0
//   L9   for t_x ∈ [ℓ_x], in the order of n(t_x) (the last key Mask allows t_x):
//   L10    while n < n(t_x): n ← n + 1; unless key n is padding:
//            S_φ += κ_n φ(k_n) v_nᵀ,  s_φ += κ_n φ(k_n),  g += κ_n
//   L11    a ← S_φᵀ φ(q_t_x),  b ← s_φᵀ φ(q_t_x)
//   L12    Ṽ[:, t_x] ← a / max(b, ε·g)   (g = 0, no allowed key: a 0 column, as Algorithm 4)
// The causal mask makes S_φ, s_φ running (prefix) sums; bidirectional and cross attention add every key
// before the first query, so one sum serves all. ε = kRfGuard (core/algorithms/random_features.hpp):
// sin/cos features can make b ≤ 0 though the exact denominator is > 0; such columns are counted.
// One work group per (row j of V, query head h): its 64 invocations hold column j of S_φ (and s_φ)
// split over the 2D feature rows (PER rows each), in the same order of additions as core's loop;
// per query they reduce a[j] and b over the features in shared memory. (b is the same for every j:
// each work group computes it again rather than waiting for another.)
// Compiled with FEATURES = 2D defined by the runtime (gpu/).
layout(local_size_x = 64) in;

#define PER ((FEATURES + 63) / 64)

layout(std140, binding = 0) uniform Params {
  uint l_z;
  uint l_x;
  uint d_mid;
  uint H;       // query heads
  uint H_kv;    // key/value heads
  uint y_rows;  // rows of Y: H·d_mid
  float eps;    // the denominator guard ε
} p;

layout(std430, binding = 1) readonly buffer QueryFeatures { float phi_q[]; };  // (H, 2D, ℓ_x)
layout(std430, binding = 2) readonly buffer KeyFeatures { float phi_k[]; };    // (H, 2D, ℓ_z)
layout(std430, binding = 3) readonly buffer KeyWeights { float kappa[]; };     // (H_kv, ℓ_z)
layout(std430, binding = 4) readonly buffer Values { float V[]; };             // (H_kv, d_mid, ℓ_z)
layout(std430, binding = 5) writeonly buffer Heads { float Y[]; };             // (H·d_mid, ℓ_x)
layout(std430, binding = 6) readonly buffer Plan { uint plan[]; };             // keep (ℓ_z), n (ℓ_x), order (ℓ_x)
// See rf_key_weights.comp.
layout(std430, binding = 7) buffer LoopGuard { uint loops_cut_short; uint two; } guard;
layout(std430, binding = 8) buffer Guarded { uint guarded_columns; };  // (head, column) pairs with b < ε·g

shared vec2 partial[64];

void main() {
  const uint j = gl_WorkGroupID.x, h = gl_WorkGroupID.y, lid = gl_LocalInvocationID.x;
  const uint g_kv = h * p.H_kv / p.H;
  float S[PER], s[PER];  // rows lid, lid + 64, … of S_φ[:, j] and s_φ
  for (uint r = 0u; r < PER; ++r) S[r] = s[r] = 0.0;
  float g = 0.0;
  uint n = 0u;
  for (uint q = 0u; q < p.l_x; ++q) {
    const uint t_x = plan[p.l_z + p.l_x + q], n_t = plan[p.l_z + t_x];
    for (; n < n_t; ++n) {  // L10
      if (plan[n] == 0u) continue;
      const float k_n = kappa[g_kv * p.l_z + n], v = V[(g_kv * p.l_z + n) * p.d_mid + j];
      for (uint r = 0u; r < PER; ++r) {
        const uint f = lid + 64u * r;
        if (f < FEATURES) {
          const float kf = k_n * phi_k[(h * p.l_z + n) * FEATURES + f];
          S[r] += kf * v;
          s[r] += kf;
        }
      }
      g += k_n;
    }
    vec2 ab = vec2(0.0);  // L11: this invocation's rows of a[j], b
    for (uint r = 0u; r < PER; ++r) {
      const uint f = lid + 64u * r;
      if (f < FEATURES) ab += phi_q[(h * p.l_x + t_x) * FEATURES + f] * vec2(S[r], s[r]);
    }
    partial[lid] = ab;
    memoryBarrierShared();
    barrier();
    for (uint m = 32u; m > 0u; m >>= 1u) {
      if (lid < m) partial[lid] += partial[lid + m];
      memoryBarrierShared();
      barrier();
    }
    if (lid == 0u) {  // L12
      const float a = partial[0].x, b = partial[0].y, floor_b = p.eps * g;
      if (j == 0u && g > 0.0 && b < floor_b) atomicAdd(guarded_columns, 1u);
      Y[t_x * p.y_rows + h * p.d_mid + j] = g > 0.0 ? a / max(b, floor_b) : 0.0;
    }
    barrier();  // partial is reused by the next query
  }

  uint steps = 0u;
  for (uint k = 0u; k < guard.two; ++k) ++steps;
  if (steps != guard.two) atomicOr(guard.loops_cut_short, 1u);
}
