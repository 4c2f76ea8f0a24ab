// The block sizes of the GPU's fused form (shaders/flash_attention.comp), which is Algorithm 4-F,
// FlashAttention (not in the paper; core/algorithms/alg04f_flash_attention.cpp): each work group takes
// B_r query columns and walks the keys in blocks of B_c, whose K and V columns ((d_attn + d_mid) floats
// per key) it holds in shared memory, with the online softmax. gpu/attention.cpp compiles the shader
// with these; the app's GPU tab says them (header-only: no GL needed to say them).
#pragma once

namespace sf::gpu {

inline constexpr int kFlashBR = 64;        // B_r: query columns per work group
inline constexpr int kFlashMaxBC = 32;     // B_c at most: keys per shared-memory tile
inline constexpr int kMinSharedBytes = 32768;  // GL_MAX_COMPUTE_SHARED_MEMORY_SIZE every OpenGL 4.3 offers

struct FusedBlocks {
  int B_r = kFlashBR;
  int B_c = 0;            // 0: not even one key's K and V fit in shared memory
  int bytes_per_key = 0;  // (d_attn + d_mid)·4
};

// B_c: the largest power of two up to kFlashMaxBC whose tile fits in max_shared_bytes.
constexpr FusedBlocks fused_blocks(int d_attn, int d_mid, int max_shared_bytes) {
  FusedBlocks b;
  b.bytes_per_key = (d_attn + d_mid) * static_cast<int>(sizeof(float));
  int bc = kFlashMaxBC;
  while (bc > 1 && bc * b.bytes_per_key > max_shared_bytes) bc /= 2;
  b.B_c = bc * b.bytes_per_key <= max_shared_bytes ? bc : 0;
  return b;
}

}  // namespace sf::gpu
