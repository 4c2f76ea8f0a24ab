#version 430
// Algorithm 4, line 4, all heads at once (head h = gl_WorkGroupID.z), one invocation per score:
//   L4: S ← Kᵀ Q          S[t_z, t_x] = Σ_i K[i, t_z] · Q[i, t_x]
// Teaching form: S is kept (ℓ_z×ℓ_x per head) so that it can be shown.
// With H_kv < H key/value heads, query head h reads the K of its group g = ⌊h·H_kv/H⌋ (0-based).
// Storage: column-major, tokens as columns (element (r, c) at c·rows + r), heads one after another.
layout(local_size_x = 16, local_size_y = 16) in;

layout(std140, binding = 0) uniform Params {
  uint d_attn;
  uint l_z;
  uint l_x;
  uint H;     // query heads
  uint H_kv;  // key/value heads (H when every query head has its own)
} p;

layout(std430, binding = 1) readonly buffer Keys { float K[]; };      // (H_kv, d_attn, ℓ_z)
layout(std430, binding = 2) readonly buffer Queries { float Q[]; };   // (H, d_attn, ℓ_x)
layout(std430, binding = 3) writeonly buffer Scores { float S[]; };   // (H, ℓ_z, ℓ_x)

void main() {
  const uint h = gl_WorkGroupID.z;
  const uint t_z = gl_GlobalInvocationID.x;
  const uint t_x = gl_GlobalInvocationID.y;
  if (t_z >= p.l_z || t_x >= p.l_x) return;
  const uint g = h * p.H_kv / p.H;
  const uint k = (g * p.l_z + t_z) * p.d_attn;  // column t_z of K^g
  const uint q = (h * p.l_x + t_x) * p.d_attn;  // column t_x of Q^h
  float s = 0.0;
  for (uint i = 0u; i < p.d_attn; ++i) s += K[k + i] * Q[q + i];
  S[(h * p.l_x + t_x) * p.l_z + t_z] = s;
}
