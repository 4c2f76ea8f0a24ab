#version 430
// Algorithm 4, lines 1–3, one dispatch per line, all heads at once (head h = gl_WorkGroupID.z):
//   L1: Q ← W_q X + b_q 1ᵀ        L2: K ← W_k Z + b_k 1ᵀ        L3: V ← W_v Z + b_v 1ᵀ
// and Algorithm 5, line 4, as one "head": Ṽ ← W_o Y + b_o 1ᵀ.
// Used by both forms (teaching and fused). One invocation per output element:
//   Out^h[r, c] = Σ_k W^h[r, k] · In[k, c] + b^h[r]
// (no shared-memory tiles: their barriers make Mesa's llvmpipe many times slower).
//
// Storage: column-major with tokens as columns, as in the paper and core's Eigen matrices:
// element (r, c) of a rows×cols matrix is at c·rows + r. Per-head matrices lie one after another;
// Out^h starts at h·out_stride + out_offset, so that the KV-cached step can write its new columns
// after the cached ones (out_stride = rows·(ℓ_c + n), out_offset = rows·ℓ_c).
layout(local_size_x = 16, local_size_y = 16) in;

layout(std140, binding = 0) uniform Params {
  uint rows;   // rows of W^h and of Out^h: d_attn (Q, K), d_mid (V) or d_out (W_o)
  uint inner;  // columns of W^h = rows of In: d_x, d_z or H·d_mid
  uint cols;   // columns of In and of Out^h: tokens, ℓ_x or ℓ_z
  uint out_stride;  // floats from Out^h to Out^{h+1} (rows·cols unless the output has more columns)
  uint out_offset;  // where column 0 of Out^h starts, after its head's start
} p;

layout(std430, binding = 1) readonly buffer Weights { float W[]; };   // (H, rows, inner)
layout(std430, binding = 2) readonly buffer Biases { float b[]; };    // (H, rows)
layout(std430, binding = 3) readonly buffer Input { float In[]; };    // (inner, cols), shared by the heads
layout(std430, binding = 4) writeonly buffer Output { float Out[]; }; // (H, rows, ≥ cols)

void main() {
  const uint h = gl_WorkGroupID.z;
  const uint r = gl_GlobalInvocationID.x;  // output row: neighbouring invocations read neighbouring W
  const uint c = gl_GlobalInvocationID.y;  // output column (token)
  if (r >= p.rows || c >= p.cols) return;
  const uint w = h * p.rows * p.inner + r;  // W^h[r, k] at w + k·rows
  const uint x = c * p.inner;               // In[k, c] at x + k
  float acc = 0.0;
  for (uint k = 0u; k < p.inner; ++k) acc += W[w + k * p.rows] * In[x + k];
  Out[h * p.out_stride + p.out_offset + c * p.rows + r] = acc + b[h * p.rows + r];
}
