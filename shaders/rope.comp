#version 430
// RoPE (variant, encyclopedia article 004), after Algorithm 4's line 1 (Q) or line 2 (K), all
// heads at once (head h = gl_WorkGroupID.z), one invocation per entry:
//   Out[2i−1, t] = In[2i−1, t]·cos(tθ_i) − In[2i, t]·sin(tθ_i)
//   Out[2i, t]   = In[2i−1, t]·sin(tθ_i) + In[2i, t]·cos(tθ_i),   θ_i = rope_base^{−2(i−1)/d_attn}
// (with an odd d_attn the last coordinate has no partner and is copied). The cosines and sines
// come from the CPU, computed in double and rounded to float as core's rope_rotate does: in float,
// an angle t·θ_i with t in the thousands would be off by ~1e-4 rad. The unrotated In is kept
// (the teaching form shows it).
// Storage: column-major, tokens as columns; In^h at h·d_attn·cols, Out^h at h·out_stride + out_offset.
layout(local_size_x = 16, local_size_y = 16) in;

layout(std140, binding = 0) uniform Params {
  uint d_attn;
  uint cols;        // columns to rotate (tokens)
  uint out_stride;  // floats from Out^h to Out^{h+1}
  uint out_offset;  // where column 0 of Out^h starts, after its head's start
} p;

layout(std430, binding = 1) readonly buffer Input { float In[]; };      // (heads, d_attn, cols)
layout(std430, binding = 2) readonly buffer Angles { vec2 cos_sin[]; }; // (⌊d_attn/2⌋, cols): (cos tθ_i, sin tθ_i)
layout(std430, binding = 3) writeonly buffer Output { float Out[]; };   // (heads, d_attn, ≥ cols)

void main() {
  const uint h = gl_WorkGroupID.z;
  const uint r = gl_GlobalInvocationID.x;  // row: coordinate r + 1 of the column
  const uint c = gl_GlobalInvocationID.y;  // column (token)
  if (r >= p.d_attn || c >= p.cols) return;
  const uint in_col = (h * p.cols + c) * p.d_attn;
  const uint o = h * p.out_stride + p.out_offset + c * p.d_attn + r;
  const uint i = r / 2u;  // the pair (2i+1, 2i+2), 1-based
  if (2u * i + 1u >= p.d_attn) {
    Out[o] = In[in_col + r];
    return;
  }
  const vec2 cs = cos_sin[c * (p.d_attn / 2u) + i];
  const float a = In[in_col + 2u * i], b = In[in_col + 2u * i + 1u];
  Out[o] = r % 2u == 0u ? a * cs.x - b * cs.y : a * cs.y + b * cs.x;
}
