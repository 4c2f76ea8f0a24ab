#version 430
// Algorithm 4-R, lines 5–6 (random-feature attention; NOT IN THE PAPER: Peng et al. 2021, Performer;
// core/algorithms/random_features.hpp), all heads at once, one invocation per (i, t, h):
//   φ(X)[2i−1, t] = D^{−1/2} cos⟨w_i, x_t⟩     φ(X)[2i, t] = D^{−1/2} sin⟨w_i, x_t⟩
// for the columns x_t of Q (query head h) or of K (key/value head g = ⌊h·src_heads/H⌋), with query head
// h's own directions w_i = ω_i/σ, σ = d_attn^{1/4} (rf_omega(D, d_attn, rf_seed, h, orthogonal), drawn
// in double on the CPU as core draws them, cast to float and uploaded).
// ⟨w_i, x⟩ is first brought into [−π, π] (minus the nearest multiple of 2π, in two parts: float(2π) and
// its rounding error), where GPUs compute cos and sin most accurately; the reduction's own rounding
// is of the order of ⟨w_i, x⟩'s.
// Storage: column-major, tokens as columns (element (r, c) at c·rows + r), heads one after another.
layout(local_size_x = 16, local_size_y = 16) in;

layout(std140, binding = 0) uniform Params {
  uint D;           // features: φ has 2D rows
  uint d_attn;
  uint cols;        // ℓ_x (Q) or ℓ_z (K)
  uint H;           // query heads
  uint src_heads;   // heads of the columns: H (Q) or H_kv (K)
  float inv_sqrt_D; // D^{−1/2}
} p;

layout(std430, binding = 1) readonly buffer Directions { float W[]; };   // (H, D, d_attn): w_i of head h
layout(std430, binding = 2) readonly buffer Columns { float X[]; };      // (src_heads, d_attn, cols)
layout(std430, binding = 3) writeonly buffer Features { float phi[]; };  // (H, 2D, cols)

const float TWO_PI_HI = 6.28318548202514648;     // float(2π)
const float TWO_PI_LO = -1.7484555314695172e-7;  // 2π − float(2π)

void main() {
  const uint i = gl_GlobalInvocationID.x, t = gl_GlobalInvocationID.y, h = gl_WorkGroupID.z;
  if (i >= p.D || t >= p.cols) return;
  const uint src = h * p.src_heads / p.H;
  float u = 0.0;  // ⟨w_i, x_t⟩
  for (uint k = 0u; k < p.d_attn; ++k) u += W[(h * p.d_attn + k) * p.D + i] * X[(src * p.cols + t) * p.d_attn + k];
  const float turns = round(u / TWO_PI_HI);
  const float r = (u - turns * TWO_PI_HI) - turns * TWO_PI_LO;  // u − 2π·turns ∈ [−π, π]
  const uint at = (h * p.cols + t) * 2u * p.D + 2u * i;
  phi[at] = p.inv_sqrt_D * cos(r);
  phi[at + 1u] = p.inv_sqrt_D * sin(r);
}
