#version 430
// Algorithm 4, lines 4–6 fused (flash-attention style), all heads at once:
//   L4: S ← Kᵀ Q     L5: masked S[t_z, t_x] ← −∞     L6: Ṽ = V · softmax(S / √d_attn)
// without ever storing the ℓ_z×ℓ_x matrix S. Each invocation owns one query column t_x of one
// head; a work group (BR queries, y = head h) walks over the keys in tiles of BC tokens held in
// shared memory, and keeps the softmax ONLINE: a running maximum m, a running sum
// l = Σ exp(s − m) and an unnormalised Ṽ column o, both rescaled by exp(m_old − m_new) whenever
// a score exceeds m (rarely, after the first keys).
// At the end Ṽ[:, t_x] = o / l. For the unidirectional mask, key tiles after the block's last
// query are masked for every query of the block and are skipped.
// With H_kv < H key/value heads, query head h reads the K and V of its group g = ⌊h·H_kv/H⌋
// (0-based): the heads of a group load the same tiles. A bias on each score/√d_attn (variants), from the
// Bias buffer as softmax_columns.comp reads it: ALiBi (seed 004) adds m_h·B[t_z, t_x] =
// −m_h·|(z_pos0 + t_z) − (x_pos0 + t_x)| (Bias = m_h); the relative bias (T5, issue 25) adds
// B[t_z, t_x] = W_rel[h, bucket(t_z − t_x)], one value per diagonal (Bias = (H, ℓ_z + ℓ_x − 1)), so
// the blocks still never hold an ℓ_z×ℓ_x matrix.
//
// Compiled with D_ATTN, D_MID (the head sizes), BR and BC defined by the runtime (gpu/).
// Columns are held as vec4s (zero-padded): the loops over a column then have D/4 steps, few
// enough for compilers to unroll (Mesa's llvmpipe unrolls up to 32), which keeps them out of
// llvmpipe's loop budget (see LoopGuard).
// Storage: column-major, tokens as columns (element (r, c) at c·rows + r), heads one after another.
layout(local_size_x = BR) in;

#define D_ATTN4 ((D_ATTN + 3) / 4)
#define D_MID4 ((D_MID + 3) / 4)

const uint MASK_BIDIRECTIONAL = 0u;
const uint MASK_UNIDIRECTIONAL = 1u;
const uint MASK_EXPLICIT = 2u;
const uint BIAS_NONE = 0u;
const uint BIAS_ALIBI = 1u;
const uint BIAS_RELATIVE = 2u;

layout(std140, binding = 0) uniform Params {
  uint l_z;
  uint l_x;
  uint mask_kind;         // MASK_BIDIRECTIONAL, MASK_UNIDIRECTIONAL or MASK_EXPLICIT
  uint y_rows;            // rows of Y: H·d_mid
  float inv_sqrt_d_attn;  // 1/√d_attn
  uint H;                 // query heads
  uint H_kv;              // key/value heads (H when every query head has its own)
  uint bias;              // BIAS_NONE, BIAS_ALIBI or BIAS_RELATIVE
  int x_pos0;             // positions before X's first column
  int z_pos0;             // positions before Z's first column
} p;

layout(std430, binding = 1) readonly buffer Queries { float Q[]; };           // (H, d_attn, ℓ_x)
layout(std430, binding = 2) readonly buffer Keys { float K[]; };              // (H_kv, d_attn, ℓ_z)
layout(std430, binding = 3) readonly buffer Values { float V[]; };            // (H_kv, d_mid, ℓ_z)
layout(std430, binding = 4) readonly buffer MaskBytes { uint mask_bytes[]; }; // (ℓ_z, ℓ_x) bytes
layout(std430, binding = 5) writeonly buffer Heads { float Y[]; };            // (H·d_mid, ℓ_x)
// L[t_x] = m + log l = log Σ_t_z exp(S[t_z, t_x]/√d_attn): softmax(S/√d_attn)[t_z, t_x] =
// exp(S[t_z, t_x]/√d_attn − L[t_x]) without storing it (−∞ when the column is masked everywhere).
layout(std430, binding = 6) writeonly buffer LogSumExp { float L[]; };        // (H, ℓ_x)
// Mesa's llvmpipe silently ends every loop of an invocation once all its loops together have
// run 65535 iterations (LP_MAX_TGSI_LOOP_ITERATIONS). A loop of guard.two = 2 steps at the end
// then runs once: the invocation flags it and the runtime reports the results as wrong.
layout(std430, binding = 8) readonly buffer Bias { float bias[]; };  // ALiBi: m_h (H); relative: (H, ℓ_z + ℓ_x − 1)
layout(std430, binding = 7) buffer LoopGuard { uint loops_cut_short; uint two; } guard;

shared vec4 K_tile[BC][D_ATTN4];  // K_tile[j] = K^g[:, t_z0 + j]
shared vec4 V_tile[BC][D_MID4];   // V_tile[j] = V^g[:, t_z0 + j]

bool visible(uint t_z, uint t_x) {
  if (p.mask_kind == MASK_BIDIRECTIONAL) return true;
  if (p.mask_kind == MASK_UNIDIRECTIONAL) return t_z <= t_x;
  const uint i = t_x * p.l_z + t_z;
  return ((mask_bytes[i >> 2u] >> (8u * (i & 3u))) & 0xffu) != 0u;
}

void main() {
  const uint h = gl_WorkGroupID.y, lid = gl_LocalInvocationID.x;
  const uint g = h * p.H_kv / p.H;  // the key/value head
  const uint t_x0 = gl_WorkGroupID.x * BR, t_x = t_x0 + lid;
  const bool owns_query = t_x < p.l_x;  // the others still help load the tiles
  const float NEG_INF = uintBitsToFloat(0xff800000u);

  vec4 q[D_ATTN4];  // Q^h[:, t_x] / √d_attn
  for (uint i = 0u; i < D_ATTN4; ++i) {
    q[i] = vec4(0.0);
    for (uint c = 0u; c < 4u; ++c)
      if (owns_query && 4u * i + c < D_ATTN) q[i][c] = Q[(h * p.l_x + t_x) * D_ATTN + 4u * i + c] * p.inv_sqrt_d_attn;
  }
  vec4 o[D_MID4];
  for (uint i = 0u; i < D_MID4; ++i) o[i] = vec4(0.0);
  float m = NEG_INF, l = 0.0;
  const float m_h = p.bias == BIAS_ALIBI ? bias[h] : 0.0;
  const uint diagonals = h * (p.l_z + p.l_x - 1u) + p.l_x - 1u;  // relative: B[t_z, t_x] = bias[diagonals + t_z − t_x]

  uint t_z_end = p.l_z;
  if (p.mask_kind == MASK_UNIDIRECTIONAL) t_z_end = min(p.l_z, t_x0 + BR);  // later keys: masked for all

  for (uint t_z0 = 0u; t_z0 < t_z_end; t_z0 += BC) {
    for (uint e = lid; e < BC * D_ATTN4; e += BR) {
      const uint j = e / D_ATTN4, i = e % D_ATTN4, t_z = t_z0 + j;
      vec4 k = vec4(0.0);
      for (uint c = 0u; c < 4u; ++c)
        if (t_z < p.l_z && 4u * i + c < D_ATTN) k[c] = K[(g * p.l_z + t_z) * D_ATTN + 4u * i + c];
      K_tile[j][i] = k;
    }
    for (uint e = lid; e < BC * D_MID4; e += BR) {
      const uint j = e / D_MID4, i = e % D_MID4, t_z = t_z0 + j;
      vec4 v = vec4(0.0);
      for (uint c = 0u; c < 4u; ++c)
        if (t_z < p.l_z && 4u * i + c < D_MID) v[c] = V[(g * p.l_z + t_z) * D_MID + 4u * i + c];
      V_tile[j][i] = v;
    }
    memoryBarrierShared();
    barrier();

    if (owns_query) {
      // (The key count is a run-time value, so that this loop is not unrolled: unrolled BC
      // times over the unrolled column loops, it takes llvmpipe minutes to compile.)
      const uint keys = min(uint(BC), p.l_z - t_z0);
      for (uint j = 0u; j < keys; ++j) {
        if (!visible(t_z0 + j, t_x)) continue;  // L5: −∞, weight exactly 0
        float s = 0.0;                          // L4: S[t_z0 + j, t_x] / √d_attn
        for (uint i = 0u; i < D_ATTN4; ++i) s += dot(K_tile[j][i], q[i]);
        if (p.bias == BIAS_ALIBI) s -= m_h * float(abs((p.z_pos0 + int(t_z0 + j)) - (p.x_pos0 + int(t_x))));
        if (p.bias == BIAS_RELATIVE) s += bias[diagonals + t_z0 + j - t_x];
        // L6, online: a new maximum rescales what was summed so far (to 0 on the first key)
        if (s > m) {
          const float rescale = floatBitsToUint(m) == 0xff800000u ? 0.0 : exp(m - s);
          l *= rescale;
          for (uint i = 0u; i < D_MID4; ++i) o[i] *= rescale;
          m = s;
        }
        const float w = exp(s - m);
        l += w;
        for (uint i = 0u; i < D_MID4; ++i) o[i] += w * V_tile[j][i];
      }
    }
    barrier();
  }

  if (owns_query) {
    // Ṽ[:, t_x] = o / l; a query that sees no key at all gets zeros, as in core
    for (uint i = 0u; i < D_MID; ++i) Y[t_x * p.y_rows + h * D_MID + i] = l > 0.0 ? o[i / 4u][i % 4u] / l : 0.0;
    L[h * p.l_x + t_x] = l > 0.0 ? m + log(l) : NEG_INF;
  }

  uint steps = 0u;
  for (uint k = 0u; k < guard.two; ++k) ++steps;
  if (steps != guard.two) atomicOr(guard.loops_cut_short, 1u);
}
