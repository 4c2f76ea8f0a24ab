#version 430
// Algorithm 4, line 6 (first half), all heads at once: A ← softmax(S / √d_attn), eq. (2):
// each COLUMN t_x of S is normalised, A[t_z, t_x] = exp(S[t_z, t_x]/√d_attn − m) / Σ_t exp(S[t, t_x]/√d_attn − m)
// with m the column's largest unmasked entry (subtracting it changes nothing but keeps exp finite).
// Masked (−∞) entries get weight exactly 0; a column masked everywhere has no distribution
// and comes out as zeros, as in core.
// A bias on the logits (variants), read from the Bias buffer the CPU fills; a masked (−∞) entry stays −∞:
//   ALiBi (seed 004): S/√d_attn + m_h·B, B[t_z, t_x] = −|(z_pos0 + t_z) − (x_pos0 + t_x)| (1-based
//     positions), Bias = m_h = 2^{−8h/H} (H floats);
//   relative (T5, issue 25): S/√d_attn + B, B[t_z, t_x] = W_rel[h, bucket((z_pos0 + t_z) − (x_pos0 + t_x))].
//     B is Toeplitz (constant along each diagonal t_z − t_x), so Bias holds one value per diagonal:
//     head h's B[t_z, t_x] at h·(ℓ_z + ℓ_x − 1) + t_z − t_x + ℓ_x − 1 (0-based t_z, t_x), never ℓ_z×ℓ_x.
// One work group per column (x = t_x, y = head h): 64 invocations stride over t_z and reduce.
layout(local_size_x = 64) in;

layout(std140, binding = 0) uniform Params {
  uint l_z;
  uint l_x;
  float sqrt_d_attn;  // √d_attn
  uint bias;          // BIAS_NONE, BIAS_ALIBI or BIAS_RELATIVE
  int x_pos0;         // positions before X's first column
  int z_pos0;         // positions before Z's first column
} p;

layout(std430, binding = 1) readonly buffer MaskedScores { float S_masked[]; };  // (H, ℓ_z, ℓ_x)
layout(std430, binding = 2) writeonly buffer Softmax { float A[]; };             // (H, ℓ_z, ℓ_x)
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };  // ALiBi: m_h (H); relative: (H, ℓ_z + ℓ_x − 1)
// Mesa's llvmpipe silently ends every loop of an invocation once all its loops together have
// run 65535 iterations (LP_MAX_TGSI_LOOP_ITERATIONS); this shader loops over ℓ_z. A loop of
// guard.two = 2 steps at the end then runs once: the invocation flags it, and the runtime
// reports the results as wrong.
layout(std430, binding = 7) buffer LoopGuard { uint loops_cut_short; uint two; } guard;

const uint BIAS_NONE = 0u;
const uint BIAS_ALIBI = 1u;
const uint BIAS_RELATIVE = 2u;

shared float partial[64];

// One step of the tree reduction over partial[0 … 2n): invocation i < n folds in entry i + n (the largest, or the
// sum). GLSL 4.30 §8.16: "Calls to barrier may not be placed within any control flow", so main() calls the six
// steps one after another instead of looping over n (the loop was accepted by llvmpipe and NVIDIA, but is outside
// what 4.30 defines; GLSL 4.50 allows barrier in uniform control flow).
void reduce_step(uint n, bool largest) {
  const uint lid = gl_LocalInvocationID.x;
  if (lid < n) partial[lid] = largest ? max(partial[lid], partial[lid + n]) : partial[lid] + partial[lid + n];
  memoryBarrierShared();
  barrier();
}

bool is_masked(float s) { return floatBitsToUint(s) == 0xff800000u; }  // −∞, by its bits

// The softmax's argument for an unmasked score s = S[t_z, t_x] of head h.
float logit(float s, uint t_z, uint t_x, uint h) {
  if (p.bias == BIAS_ALIBI) return s / p.sqrt_d_attn + bias[h] * -float(abs((p.z_pos0 + int(t_z)) - (p.x_pos0 + int(t_x))));
  if (p.bias == BIAS_RELATIVE) return s / p.sqrt_d_attn + bias[h * (p.l_z + p.l_x - 1u) + t_z + p.l_x - 1u - t_x];
  return s / p.sqrt_d_attn;
}

void main() {
  const uint t_x = gl_WorkGroupID.x, h = gl_WorkGroupID.y, lid = gl_LocalInvocationID.x;
  const uint column = (h * p.l_x + t_x) * p.l_z;
  const float NEG_INF = uintBitsToFloat(0xff800000u);

  // m_max = max over unmasked t_z of the logits (−∞ when all are masked)
  float m_max = NEG_INF;
  for (uint t_z = lid; t_z < p.l_z; t_z += 64u) {
    const float s = S_masked[column + t_z];
    if (!is_masked(s)) m_max = max(m_max, logit(s, t_z, t_x, h));
  }
  partial[lid] = m_max;
  memoryBarrierShared();
  barrier();
  reduce_step(32u, true);
  reduce_step(16u, true);
  reduce_step(8u, true);
  reduce_step(4u, true);
  reduce_step(2u, true);
  reduce_step(1u, true);
  m_max = partial[0];
  barrier();

  // Σ_t exp(logit − m_max) over unmasked t
  float sum = 0.0;
  if (!is_masked(m_max))
    for (uint t_z = lid; t_z < p.l_z; t_z += 64u) {
      const float s = S_masked[column + t_z];
      if (!is_masked(s)) sum += exp(logit(s, t_z, t_x, h) - m_max);
    }
  partial[lid] = sum;
  memoryBarrierShared();
  barrier();
  reduce_step(32u, false);
  reduce_step(16u, false);
  reduce_step(8u, false);
  reduce_step(4u, false);
  reduce_step(2u, false);
  reduce_step(1u, false);
  sum = partial[0];

  for (uint t_z = lid; t_z < p.l_z; t_z += 64u) {
    const float s = S_masked[column + t_z];
    A[column + t_z] = is_masked(s) ? 0.0 : exp(logit(s, t_z, t_x, h) - m_max) / sum;
  }

  uint steps = 0u;
  for (uint k = 0u; k < guard.two; ++k) ++steps;
  if (steps != guard.two) atomicOr(guard.loops_cut_short, 1u);
}
