#version 430
// Algorithm 4, line 5, all heads at once (head h = gl_WorkGroupID.z), one invocation per score:
//   L5: ∀t_z, t_x, if ¬Mask[t_z, t_x] then S[t_z, t_x] ← −∞
// Real −∞ (the IEEE bit pattern 0xff800000), never a large negative number. The masked scores
// go to their own buffer: S before masking stays as it was, for the learner to compare.
// Mask ∈ {0,1}^{ℓ_z×ℓ_x} (eq. 3): bidirectional (all ones), unidirectional [[t_z ≤ t_x]], or an
// explicit 0/1 matrix given as bytes, column-major (byte t_x·ℓ_z + t_z), four to a uint.
layout(local_size_x = 16, local_size_y = 16) in;

const uint MASK_BIDIRECTIONAL = 0u;
const uint MASK_UNIDIRECTIONAL = 1u;
const uint MASK_EXPLICIT = 2u;

layout(std140, binding = 0) uniform Params {
  uint l_z;
  uint l_x;
  uint mask_kind;  // MASK_BIDIRECTIONAL, MASK_UNIDIRECTIONAL or MASK_EXPLICIT
} p;

layout(std430, binding = 1) readonly buffer Scores { float S[]; };           // (H, ℓ_z, ℓ_x)
layout(std430, binding = 2) readonly buffer MaskBytes { uint mask_bytes[]; }; // (ℓ_z, ℓ_x) bytes
layout(std430, binding = 3) writeonly buffer MaskedScores { float S_masked[]; };  // (H, ℓ_z, ℓ_x)

bool visible(uint t_z, uint t_x) {
  if (p.mask_kind == MASK_BIDIRECTIONAL) return true;
  if (p.mask_kind == MASK_UNIDIRECTIONAL) return t_z <= t_x;
  const uint i = t_x * p.l_z + t_z;
  return ((mask_bytes[i >> 2u] >> (8u * (i & 3u))) & 0xffu) != 0u;
}

void main() {
  const uint h = gl_WorkGroupID.z;
  const uint t_z = gl_GlobalInvocationID.x;
  const uint t_x = gl_GlobalInvocationID.y;
  if (t_z >= p.l_z || t_x >= p.l_x) return;
  const uint i = (h * p.l_x + t_x) * p.l_z + t_z;
  S_masked[i] = visible(t_z, t_x) ? S[i] : uintBitsToFloat(0xff800000u);  // −∞
}
