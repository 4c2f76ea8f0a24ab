#version 430
// Algorithm 4-R, line 7 (random-feature attention; not in the paper), one work group per key/value
// head g (K is the same for every query head of g):
//   κ[t_z] ← exp(‖K[:, t_z]‖²/2σ² − c),  σ² = √d_attn,  c = max over the kept keys of ‖k‖²/2σ²
// e^{‖k‖²/2σ²} is the factor of exp(⟨q, k⟩/σ²) that the random features do not estimate and that does
// not cancel; the common e^{−c} cancels between numerator and denominator and keeps exp finite.
// Keys masked for every query (padding: keep = 0) do not count in c; their κ (≤ 1) is never used.
// 64 invocations stride over the keys and reduce c as softmax_columns.comp reduces its maximum.
layout(local_size_x = 64) in;

layout(std140, binding = 0) uniform Params {
  uint d_attn;
  uint l_z;
  float two_sigma2;  // 2σ² = 2√d_attn, as core's float
} p;

layout(std430, binding = 1) readonly buffer Keys { float K[]; };     // (H_kv, d_attn, ℓ_z)
layout(std430, binding = 2) readonly buffer Plan { uint plan[]; };   // keep (ℓ_z), then n, order (ℓ_x each)
layout(std430, binding = 3) buffer KeyWeights { float kappa[]; };    // (H_kv, ℓ_z): ‖k‖²/2σ², then κ
// Mesa's llvmpipe silently ends every loop of an invocation once all its loops together have run
// 65535 iterations (LP_MAX_TGSI_LOOP_ITERATIONS); a loop of guard.two = 2 steps at the end then runs
// once: the invocation flags it and the runtime reports the results as wrong.
layout(std430, binding = 7) buffer LoopGuard { uint loops_cut_short; uint two; } guard;

shared float partial[64];

void main() {
  const uint g = gl_WorkGroupID.x, lid = gl_LocalInvocationID.x;
  const float NEG_INF = uintBitsToFloat(0xff800000u);
  float c = NEG_INF;
  for (uint t_z = lid; t_z < p.l_z; t_z += 64u) {
    float sq = 0.0;
    for (uint i = 0u; i < p.d_attn; ++i) {
      const float k = K[(g * p.l_z + t_z) * p.d_attn + i];
      sq += k * k;
    }
    const float e = sq / p.two_sigma2;
    kappa[g * p.l_z + t_z] = e;
    if (plan[t_z] != 0u) c = max(c, e);
  }
  partial[lid] = c;
  memoryBarrierShared();
  barrier();
  for (uint n = 32u; n > 0u; n >>= 1u) {
    if (lid < n) partial[lid] = max(partial[lid], partial[lid + n]);
    memoryBarrierShared();
    barrier();
  }
  c = floatBitsToUint(partial[0]) == 0xff800000u ? 0.0 : partial[0];  // no kept key: c = 0, as core
  for (uint t_z = lid; t_z < p.l_z; t_z += 64u) kappa[g * p.l_z + t_z] = exp(min(kappa[g * p.l_z + t_z] - c, 0.0));

  uint steps = 0u;
  for (uint k = 0u; k < guard.two; ++k) ++steps;
  if (steps != guard.two) atomicOr(guard.loops_cut_short, 1u);
}
