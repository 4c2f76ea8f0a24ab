#version 430
// Algorithm 4, line 6 (second half), all heads at once (head h = gl_WorkGroupID.z):
//   Ṽ = V · A          Ṽ[i, t_x] = Σ_t_z V[i, t_z] · A[t_z, t_x],   A = softmax(S / √d_attn)
// Ṽ of head h is written straight into rows h·d_mid … (h+1)·d_mid − 1 of
// Y = [Y^1; Y^2; …; Y^H] (Algorithm 5, line 3), so W_o Y needs no copy.
// With H_kv < H key/value heads, query head h reads the V of its group g = ⌊h·H_kv/H⌋ (0-based).
layout(local_size_x = 16, local_size_y = 16) in;

layout(std140, binding = 0) uniform Params {
  uint d_mid;
  uint l_z;
  uint l_x;
  uint y_rows;  // rows of Y: H·d_mid
  uint H;       // query heads
  uint H_kv;    // key/value heads (H when every query head has its own)
} p;

layout(std430, binding = 1) readonly buffer Values { float V[]; };    // (H_kv, d_mid, ℓ_z)
layout(std430, binding = 2) readonly buffer Softmax { float A[]; };   // (H, ℓ_z, ℓ_x)
layout(std430, binding = 3) writeonly buffer Heads { float Y[]; };    // (H·d_mid, ℓ_x)
// Mesa's llvmpipe silently ends every loop of an invocation once all its loops together have
// run 65535 iterations (LP_MAX_TGSI_LOOP_ITERATIONS); this shader loops over ℓ_z. A loop of
// guard.two = 2 steps at the end then runs once: the invocation flags it, and the runtime
// reports the results as wrong.
layout(std430, binding = 7) buffer LoopGuard { uint loops_cut_short; uint two; } guard;

void main() {
  const uint h = gl_WorkGroupID.z;
  const uint i = gl_GlobalInvocationID.x;
  const uint t_x = gl_GlobalInvocationID.y;
  if (i >= p.d_mid || t_x >= p.l_x) return;
  const uint v = (h * p.H_kv / p.H) * p.d_mid * p.l_z + i;  // V^g[i, t_z] at v + t_z·d_mid
  const uint a = (h * p.l_x + t_x) * p.l_z;  // column t_x of A^h
  float acc = 0.0;
  for (uint t_z = 0u; t_z < p.l_z; ++t_z) acc += V[v + t_z * p.d_mid] * A[a + t_z];
  Y[t_x * p.y_rows + h * p.d_mid + i] = acc;

  uint steps = 0u;
  for (uint k = 0u; k < guard.two; ++k) ++steps;
  if (steps != guard.two) atomicOr(guard.loops_cut_short, 1u);
}
