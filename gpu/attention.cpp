// Algorithms 4 and 5 on the GPU: see attention.hpp. The shaders are in shaders/; this file
// plans the buffers, uploads, dispatches one shader per pseudocode line (or the fused one) and
// reads back.
#include "gpu/attention.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>

#include "core/algorithms/random_features.hpp"
#include "core/model/error.hpp"
#include "core/trace/value_keys.hpp"
#include "gpu/fused_blocks.hpp"
#include "gpu/gl_util.hpp"

namespace sf::gpu {

namespace {

// The parameter blocks of shaders/*.comp (std140). They hold 4-byte scalars only, which
// std140 packs one after another; alignas(16) rounds the size up as std140 rounds a block.
struct alignas(16) LinearParams {
  uint32_t rows, inner, cols, out_stride, out_offset;
};
struct alignas(16) RopeParams {
  uint32_t d_attn, cols, out_stride, out_offset;
};
struct alignas(16) ScoresParams {
  uint32_t d_attn, l_z, l_x, H, H_kv;
};
struct alignas(16) MaskParams {
  uint32_t l_z, l_x, mask_kind;
};
struct alignas(16) SoftmaxParams {
  uint32_t l_z, l_x;
  float sqrt_d_attn;
  uint32_t bias;
  int32_t x_pos0, z_pos0;
};
struct alignas(16) ApplyValuesParams {
  uint32_t d_mid, l_z, l_x, y_rows, H, H_kv;
};
struct alignas(16) RfFeaturesParams {
  uint32_t D, d_attn, cols, H, src_heads;
  float inv_sqrt_D;
};
struct alignas(16) RfKeyWeightsParams {
  uint32_t d_attn, l_z;
  float two_sigma2;
};
struct alignas(16) RfPrefixSumsParams {
  uint32_t l_z, l_x, d_mid, H, H_kv, y_rows;
  float eps;
};
struct alignas(16) FlashParams {
  uint32_t l_z, l_x, mask_kind, y_rows;
  float inv_sqrt_d_attn;
  uint32_t H, H_kv, bias;
  int32_t x_pos0, z_pos0;
};

// As MASK_* in mask.comp and flash_attention.comp.
enum MaskKind : uint32_t { kBidirectional = 0, kUnidirectional = 1, kExplicit = 2 };
// As BIAS_* in softmax_columns.comp and flash_attention.comp: what line 6 adds to S/√d_attn.
enum BiasKind : uint32_t { kNoBias = 0, kAlibi = 1, kRelative = 2 };

constexpr uint32_t kTile = 16;     // work groups of 16×16 in linear, rope, scores, mask, apply_values

GLuint groups(int n, uint32_t per) { return (static_cast<uint32_t>(n) + per - 1) / per; }

MaskKind classify(const Mask& mask) {
  if ((mask.array() != 0).all()) return kBidirectional;
  for (Eigen::Index t_x = 0; t_x < mask.cols(); ++t_x) {  // [[t_z ≤ t_x]]: ones down to row t_x, zeros below
    const Eigen::Index ones = std::min(t_x + 1, mask.rows());
    if (!(mask.col(t_x).head(ones).array() != 0).all() || !(mask.col(t_x).tail(mask.rows() - ones).array() == 0).all())
      return kExplicit;
  }
  return kUnidirectional;
}

std::string dims(Eigen::Index r, Eigen::Index c) { return std::to_string(r) + "×" + std::to_string(c); }

// The key/value heads of a call: H_kv < H shares each among ⌈H/H_kv⌉ query heads (core's rule).
int kv_heads(const AttentionOptions& av, int H) { return av.H_kv > 0 && av.H_kv < H ? av.H_kv : H; }
// The key/value head g (0-based) of query head h (0-based): ⌊(h−1)·H_kv/H⌋ + 1 in 1-based terms.
int group_of(int h, int H_kv, int H) { return h * H_kv / H; }
// The first query head of key/value head g: the one whose W_k, W_v (and cached K, V) are uploaded.
int first_of_group(int g, int H_kv, int H) { return (g * H + H_kv - 1) / H_kv; }

// The sizes of one call, checked against each other. K and V hold ℓ_z = ℓ_c + ℓ_new columns per
// key/value head: ℓ_c cached (uploaded; 0 outside the KV-cached step), ℓ_new computed from Z.
struct Shapes {
  int H = 0, H_kv = 0, d_x = 0, d_z = 0, d_attn = 0, d_mid = 0, l_x = 0, l_z = 0, l_c = 0;
  int l_new() const { return l_z - l_c; }
};

// X (d_x, ℓ_x) and the heads' W_q, b_q; with `kv_weights` (lines 2–3 run) also W_k, b_k, W_v, b_v
// against d_z, and that the query heads of one key/value head view the same W_k, b_k, W_v, b_v.
Shapes check_shapes(const MatF& X, int d_z, int l_z, const std::vector<AttentionHeadW<const float>>& heads,
                    const Mask& mask, const AttentionOptions& av, bool kv_weights) {
  if (heads.empty()) throw Error("MHAttention on the GPU: W has no heads");
  Shapes s;
  s.H = static_cast<int>(heads.size());
  s.H_kv = kv_heads(av, s.H);
  s.d_x = static_cast<int>(X.rows());
  s.d_z = d_z;
  s.l_x = static_cast<int>(X.cols());
  s.l_z = l_z;
  s.d_attn = static_cast<int>(heads[0].W_q.rows());
  s.d_mid = static_cast<int>(heads[0].W_v.rows());
  if (s.l_x < 1 || s.l_z < 1 || s.d_x < 1 || s.d_z < 1 || s.d_attn < 1 || s.d_mid < 1)
    throw Error("Attention on the GPU: X is " + dims(X.rows(), X.cols()) + ", Z " + dims(s.d_z, s.l_z) +
                ", d_attn = " + std::to_string(s.d_attn) + ", d_mid = " + std::to_string(s.d_mid) +
                ": every size must be at least 1");
  if (mask.rows() != s.l_z || mask.cols() != s.l_x)
    throw Error("Attention on the GPU: Mask must be ℓ_z×ℓ_x = " + dims(s.l_z, s.l_x) + ", not " +
                dims(mask.rows(), mask.cols()));
  for (int h = 0; h < s.H; ++h) {
    const AttentionHeadW<const float>& W = heads[h];
    const std::string head = "head " + std::to_string(h + 1) + ": ";
    if (W.W_q.rows() != s.d_attn || W.W_q.cols() != s.d_x || W.b_q.size() != s.d_attn)
      throw Error("Attention on the GPU, " + head + "W_q must be d_attn×d_x = " + dims(s.d_attn, s.d_x) +
                  " and b_q of size d_attn, not " + dims(W.W_q.rows(), W.W_q.cols()) + " and " +
                  std::to_string(W.b_q.size()));
    if (!kv_weights) continue;
    if (W.W_k.rows() != s.d_attn || W.W_k.cols() != s.d_z || W.b_k.size() != s.d_attn)
      throw Error("Attention on the GPU, " + head + "W_k must be d_attn×d_z = " + dims(s.d_attn, s.d_z) +
                  " and b_k of size d_attn, not " + dims(W.W_k.rows(), W.W_k.cols()) + " and " +
                  std::to_string(W.b_k.size()));
    if (W.W_v.rows() != s.d_mid || W.W_v.cols() != s.d_z || W.b_v.size() != s.d_mid)
      throw Error("Attention on the GPU, " + head + "W_v must be d_mid×d_z = " + dims(s.d_mid, s.d_z) +
                  " and b_v of size d_mid, not " + dims(W.W_v.rows(), W.W_v.cols()) + " and " +
                  std::to_string(W.b_v.size()));
    // The GPU computes K and V once per key/value head, from the group's first query head.
    const AttentionHeadW<const float>& first = heads[first_of_group(group_of(h, s.H_kv, s.H), s.H_kv, s.H)];
    if (W.W_k.data() != first.W_k.data() || W.b_k.data() != first.b_k.data() || W.W_v.data() != first.W_v.data() ||
        W.b_v.data() != first.b_v.data())
      throw Error("MHAttention on the GPU with H_kv = " + std::to_string(s.H_kv) + " of H = " + std::to_string(s.H) +
                  ": query " + head + "shares key/value head " + std::to_string(group_of(h, s.H_kv, s.H) + 1) +
                  ", so its W_k, b_k, W_v, b_v must view that head's (as core's parameter table gives them); "
                  "they are other matrices");
  }
  return s;
}

std::string heads_note(int H) { return " (" + std::to_string(H) + (H == 1 ? " head)" : " heads)"); }
// DispatchTime::heads: "1–8", or "1" for one head.
std::string heads_range(int n) { return n == 1 ? "1" : "1–" + std::to_string(n); }

struct Binding {
  GLuint index;  // the shader's binding = N
  const Buffer* buffer;
};

// (cos tθ_i, sin tθ_i) for the columns t = pos0 + 1 … pos0 + cols and the pairs i = 1 … ⌊d_attn/2⌋,
// as rope.comp reads them: computed in double and rounded to float exactly as core's rope_rotate.
std::vector<float> rope_table(int d_attn, int cols, int pos0, double rope_base) {
  const int pairs = d_attn / 2;
  std::vector<float> cs(2 * static_cast<size_t>(pairs) * cols);
  for (int j = 0; j < cols; ++j) {
    const double t = pos0 + static_cast<double>(j) + 1;
    for (int i = 1; i <= pairs; ++i) {
      const double theta = std::pow(rope_base, -2.0 * static_cast<double>(i - 1) / static_cast<double>(d_attn));
      const size_t at = 2 * (static_cast<size_t>(j) * pairs + (i - 1));
      cs[at] = static_cast<float>(std::cos(t * theta));
      cs[at + 1] = static_cast<float>(std::sin(t * theta));
    }
  }
  return cs;
}

// ALiBi's slopes m_h = 2^{−8h/H}, h = 1 … H, in double and cast to float as core's mh_attention does.
std::vector<float> alibi_slopes(int H) {
  std::vector<float> m(H);
  for (int h = 1; h <= H; ++h) m[h - 1] = static_cast<float>(std::pow(2.0, -8.0 * h / H));
  return m;
}

// The relative bias (T5, issue 25) of one head as the shaders read it: B is Toeplitz, so one value per
// diagonal, B[t_z, t_x] at t_z − t_x + ℓ_x − 1 (0-based), ℓ_z + ℓ_x − 1 in all, each
// av.rel_table[bucket((z_pos0 + t_z) − (x_pos0 + t_x))] cast to float as core's relative_bias does.
std::vector<float> relative_diagonals(const AttentionOptions& av, int l_z, int l_x) {
  if (static_cast<int>(av.rel_table.size()) != av.rel_buckets)
    throw Error("relative position bias on the GPU: the head's W_rel row has " + std::to_string(av.rel_table.size()) +
                " entries, not relative_buckets = " + std::to_string(av.rel_buckets));
  std::vector<float> b(static_cast<size_t>(l_z + l_x - 1));
  for (int k = 0; k < l_z + l_x - 1; ++k) {
    const int t_z_minus_t_x = k - (l_x - 1);
    const int bucket = relative_bucket(av.z_pos0 - av.x_pos0 + t_z_minus_t_x, av.rel_bidirectional, av.rel_buckets,
                                       av.rel_max_distance);
    b[static_cast<size_t>(k)] = static_cast<float>(av.rel_table[static_cast<size_t>(bucket)]);
  }
  return b;
}

// One call of Algorithm 5 as the runtime plans it.
struct Call {
  Shapes s;
  Form form = Form::Teaching;
  MaskKind kind = kBidirectional;
  bool self = false;  // Z is X: uploaded once
  // The variant; x_pos0, z_pos0: positions before X's and before K's first column (cached or not).
  AttentionOptions av;
  const MHAttentionW<const float>* W = nullptr;  // W_o, b_o: Algorithm 5's line 4 runs when set
  const std::vector<MatF>* K_cached = nullptr;   // ℓ_c columns of each query head (the KV-cached step)
  const std::vector<MatF>* V_cached = nullptr;
  // Line 6's bias, per query head: ALiBi's m_h, or the relative bias's ℓ_z + ℓ_x − 1 diagonals
  // (relative_diagonals); empty without either.
  std::vector<float> bias;
  // Algorithm 4-R (random-feature attention, not in the paper): each query head's directions
  // w_i = ω_i/σ (H, D, d_attn), and the mask as key prefixes (rf_plan: keep (ℓ_z), n (ℓ_x), order (ℓ_x)).
  std::vector<float> rf_W;
  std::vector<uint32_t> rf_plan;
  bool rope() const { return av.rope_base > 0; }
  bool rf() const { return av.random_features(); }
  // The listing whose lines the dispatches compute: Algorithm 4, or 4-R (not in the paper).
  int algorithm() const { return rf() ? algs::random_feature_attention : 4; }
  BiasKind bias_kind() const { return av.alibi ? kAlibi : av.relative() ? kRelative : kNoBias; }
  // Line 6's formula as the dispatch list names it.
  std::string softmax_of(const std::string& scores) const {
    if (av.alibi) return "softmax(" + scores + " / √d_attn + m_h·B) (ALiBi)";
    if (av.relative()) return "softmax(" + scores + " / √d_attn + B) (relative bias, T5)";
    return "softmax(" + scores + " / √d_attn)";
  }
};

}  // namespace

const char* to_string(Form f) { return f == Form::Teaching ? "teaching" : "fused"; }

std::string describe_call(bool self, const Mask& mask, const AttentionOptions& av, int H) {
  static const char* const kinds[] = {"bidirectional mask", "causal mask", "explicit mask"};
  std::string s = std::string(self ? "self-attention" : "cross-attention") + " · " + kinds[classify(mask)];
  if (av.rope_base > 0) s += " · RoPE";
  if (av.alibi) s += " · ALiBi";
  if (av.relative()) s += " · relative bias (T5)";
  if (av.random_features())
    s += " · random features (Algorithm 4-R, D = " + std::to_string(av.rf_D) + (av.rf_orthogonal ? ", orthogonal)" : ")");
  if (av.H_kv > 0 && av.H_kv < H) s += " · H_kv = " + std::to_string(av.H_kv) + " of H = " + std::to_string(H);
  return s;
}

struct GpuAttention::Impl {
  std::unique_ptr<HeadlessGl> own;  // the headless context, when this object made it (destroyed last)
  DeviceInfo dev;
  std::string dir = shader_dir();
  // The teaching form's shaders, one per pseudocode line (linear also serves the fused form and W_o).
  Program linear{dir, "linear", {}};
  Program rope{dir, "rope", {}};
  Program scores{dir, "scores", {}};
  Program mask{dir, "mask", {}};
  Program softmax{dir, "softmax_columns", {}};
  Program apply_values{dir, "apply_values", {}};
  std::map<std::array<int, 3>, std::unique_ptr<Program>> flash;  // by (d_attn, d_mid, BC)
  // Algorithm 4-R's shaders, compiled when first used (rf_prefix_sums by its 2D features).
  std::unique_ptr<Program> rf_features, rf_key_weights;
  std::map<int, std::unique_ptr<Program>> rf_prefix_sums;
  Buffer params;                                                 // the parameter block (uniform buffer, binding 0)
  Buffer X, Z, W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o;           // inputs
  Buffer rope_x, rope_z, bias;                                   // RoPE's cos/sin of Q's and K's columns, line 6's bias
  Buffer Q_pre, K_pre;                                           // RoPE: lines 1–2 before the rotation
  Buffer Q, K, V, S, S_masked, A, Y, L, out;                     // results
  Buffer mask_bytes;
  Buffer rf_W, phi_Q, phi_K, kappa, rf_plan, rf_guarded;  // Algorithm 4-R: directions, φ(Q), φ(K), κ, the plan, the guard's count
  Buffer loop_guard;  // {loops_cut_short, two}: see LoopGuard in the shaders
  DispatchTimer timer;
  int guarded = 0;  // Algorithm 4-R: the last call's guarded (head, column) pairs

  Impl(std::unique_ptr<HeadlessGl> context, DeviceInfo info) : own(std::move(context)), dev(std::move(info)) {}

  void make_current() const {
    if (own) own->make_current();
  }

  const Program& flash_program(int d_attn, int d_mid) {
    const FusedBlocks blocks = fused_blocks(d_attn, d_mid, dev.max_shared_bytes);  // Algorithm 4-F's B_r, B_c
    const int per_key = blocks.bytes_per_key, bc = blocks.B_c;
    if (bc == 0)
      throw Error("the fused form needs (d_attn + d_mid)·4 = " + std::to_string(per_key) +
                  " bytes of shared memory per key, more than this GL's GL_MAX_COMPUTE_SHARED_MEMORY_SIZE of " +
                  std::to_string(dev.max_shared_bytes) + ": use the teaching form");
    auto& p = flash[{d_attn, d_mid, bc}];
    if (!p)
      p = std::make_unique<Program>(
          dir, "flash_attention",
          std::vector<std::pair<std::string, int>>{
              {"D_ATTN", d_attn}, {"D_MID", d_mid}, {"BR", blocks.B_r}, {"BC", bc}});
    return *p;
  }

  const Program& compiled(std::unique_ptr<Program>& p, const char* name,
                          const std::vector<std::pair<std::string, int>>& defines = {}) {
    if (!p) p = std::make_unique<Program>(dir, name, defines);
    return *p;
  }

  // `meta`: what the dispatch computes and where it is in the paper (its times are filled in).
  template <class P>
  void dispatch(const Program& program, const P& p, std::initializer_list<Binding> bindings,
                std::array<GLuint, 3> count, DispatchTime meta) {
    for (int i = 0; i < 3; ++i)
      if (count[i] > static_cast<GLuint>(dev.max_groups[i]))
        throw Error(meta.what + " needs " + std::to_string(count[i]) + " work groups along " + "xyz"[i] +
                    ", more than this GL's GL_MAX_COMPUTE_WORK_GROUP_COUNT of " + std::to_string(dev.max_groups[i]) +
                    ": use shorter sequences or fewer heads");
    params.set(&p, sizeof p);
    glUseProgram(program.id());
    glBindBufferBase(GL_UNIFORM_BUFFER, 0, params.id());
    for (const Binding& b : bindings) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, b.index, b.buffer->id());
    timer.before(std::move(meta));
    glDispatchCompute(count[0], count[1], count[2]);
    timer.after();
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  }

  // Room for everything one call needs, before anything is uploaded or run: a size the
  // device cannot take fails first, naming the buffer.
  void reserve(const Call& c) {
    const Shapes& s = c.s;
    const size_t f = sizeof(float), H = s.H, H_kv = s.H_kv, d_attn = s.d_attn, d_mid = s.d_mid, l_x = s.l_x,
                 l_z = s.l_z, l_new = s.l_new();
    const std::string hn = heads_note(s.H), kvn = heads_note(s.H_kv);
    X.reserve(f * s.d_x * l_x, "X", dev);
    if (!c.self && l_new > 0) Z.reserve(f * s.d_z * l_new, "Z", dev);
    W_q.reserve(f * H * d_attn * s.d_x, "W_q" + hn, dev);
    b_q.reserve(f * H * d_attn, "b_q" + hn, dev);
    if (l_new > 0) {
      W_k.reserve(f * H_kv * d_attn * s.d_z, "W_k" + kvn, dev);
      b_k.reserve(f * H_kv * d_attn, "b_k" + kvn, dev);
      W_v.reserve(f * H_kv * d_mid * s.d_z, "W_v" + kvn, dev);
      b_v.reserve(f * H_kv * d_mid, "b_v" + kvn, dev);
    }
    Q.reserve(f * H * d_attn * l_x, "Q" + hn, dev);
    K.reserve(f * H_kv * d_attn * l_z, "K" + kvn, dev);
    V.reserve(f * H_kv * d_mid * l_z, "V" + kvn, dev);
    if (c.rope()) {
      Q_pre.reserve(f * H * d_attn * l_x, "Q before RoPE" + hn, dev);
      K_pre.reserve(f * H_kv * d_attn * std::max<size_t>(l_new, 1), "K before RoPE" + kvn, dev);
      rope_x.reserve(f * (d_attn / 2 * 2) * l_x + f, "RoPE's angles of X", dev);
      rope_z.reserve(f * (d_attn / 2 * 2) * std::max<size_t>(l_new, 1) + f, "RoPE's angles of Z", dev);
    }
    bias.reserve(f * std::max<size_t>(c.bias.size(), 1), "line 6's bias (ALiBi's m_h or the relative bias's diagonals)",
                 dev);
    if (c.rf()) {
      const size_t D = static_cast<size_t>(c.av.rf_D);
      rf_W.reserve(f * H * D * d_attn, "Algorithm 4-R's directions w_i" + hn, dev);
      phi_Q.reserve(f * H * 2 * D * l_x, "φ(Q)" + hn, dev);
      phi_K.reserve(f * H * 2 * D * l_z, "φ(K)" + hn, dev);
      kappa.reserve(f * H_kv * l_z, "κ" + kvn, dev);
      rf_plan.reserve(sizeof(uint32_t) * (l_z + 2 * l_x), "the mask's key prefixes", dev);
      rf_guarded.reserve(sizeof(uint32_t), "the guarded columns' count", dev);
    } else if (c.form == Form::Teaching) {
      const std::string what = hn + " of ℓ_z×ℓ_x = " + dims(s.l_z, s.l_x) + " (teaching form)";
      S.reserve(f * H * l_z * l_x, "S" + what, dev);
      S_masked.reserve(f * H * l_z * l_x, "masked S" + what, dev);
      A.reserve(f * H * l_z * l_x, keys::attention_weights.symbol + what, dev);
    } else {
      L.reserve(f * H * l_x, "L" + hn, dev);
    }
    Y.reserve(f * H * d_mid * l_x, "Y = [Y¹; …; Yᴴ]", dev);
    mask_bytes.reserve(c.kind == kExplicit ? (l_z * l_x + 3) / 4 * 4 : 4, "Mask", dev);
    loop_guard.reserve(2 * sizeof(uint32_t), "the loop guard", dev);
    if (c.W) {
      W_o.reserve(f * c.W->W_o.size(), "W_o", dev);
      b_o.reserve(f * c.W->b_o.size(), "b_o", dev);
      out.reserve(f * c.W->W_o.rows() * l_x, "Ṽ", dev);
    }
  }

  void upload(const MatF& Xh, const MatF* Zh, const std::vector<AttentionHeadW<const float>>& heads, const Mask& m,
              const Call& c) {
    const Shapes& s = c.s;
    const size_t f = sizeof(float);
    X.upload(Xh.data(), f * Xh.size());
    if (!c.self && s.l_new() > 0) Z.upload(Zh->data(), f * Zh->size());
    for (int h = 0; h < s.H; ++h) {
      const AttentionHeadW<const float>& w = heads[h];
      W_q.upload(w.W_q.data(), f * w.W_q.size(), f * h * w.W_q.size());
      b_q.upload(w.b_q.data(), f * w.b_q.size(), f * h * w.b_q.size());
    }
    for (int g = 0; g < s.H_kv; ++g) {
      const int h = first_of_group(g, s.H_kv, s.H);
      if (s.l_new() > 0) {
        const AttentionHeadW<const float>& w = heads[h];
        W_k.upload(w.W_k.data(), f * w.W_k.size(), f * g * w.W_k.size());
        b_k.upload(w.b_k.data(), f * w.b_k.size(), f * g * w.b_k.size());
        W_v.upload(w.W_v.data(), f * w.W_v.size(), f * g * w.W_v.size());
        b_v.upload(w.b_v.data(), f * w.b_v.size(), f * g * w.b_v.size());
      }
      if (s.l_c > 0) {  // the cached columns, first in each key/value head's slice
        K.upload((*c.K_cached)[h].data(), f * s.d_attn * s.l_c, f * g * s.d_attn * s.l_z);
        V.upload((*c.V_cached)[h].data(), f * s.d_mid * s.l_c, f * g * s.d_mid * s.l_z);
      }
    }
    if (c.rope()) {
      const std::vector<float> tx = rope_table(s.d_attn, s.l_x, c.av.x_pos0, c.av.rope_base);
      const std::vector<float> tz = rope_table(s.d_attn, s.l_new(), c.av.z_pos0 + s.l_c, c.av.rope_base);
      rope_x.upload(tx.data(), f * tx.size());
      rope_z.upload(tz.data(), f * tz.size());
    }
    if (!c.bias.empty()) bias.upload(c.bias.data(), f * c.bias.size());
    if (c.rf()) {
      rf_W.upload(c.rf_W.data(), f * c.rf_W.size());
      rf_plan.upload(c.rf_plan.data(), sizeof(uint32_t) * c.rf_plan.size());
      const uint32_t none = 0;
      rf_guarded.upload(&none, sizeof none);
    }
    if (c.kind == kExplicit) mask_bytes.upload(m.data(), static_cast<size_t>(m.size()));
    const uint32_t guard[2] = {0, 2};  // no loop cut short yet; the guard loop's 2 steps
    loop_guard.upload(guard, sizeof guard);
    if (c.W) {
      W_o.upload(c.W->W_o.data(), f * c.W->W_o.size());
      b_o.upload(c.W->b_o.data(), f * c.W->b_o.size());
    }
  }

  // Lines 1–3 for every head (and key/value head): Q, and K, V for Z's ℓ_new columns after the
  // ℓ_c cached ones; under RoPE, lines 1–2 write Q_pre, K_pre and rope.comp rotates them into Q, K.
  void lines_1_to_3(const Call& c) {
    const Shapes& s = c.s;
    const uint32_t H = s.H, H_kv = s.H_kv, d_x = s.d_x, d_z = s.d_z, d_attn = s.d_attn, d_mid = s.d_mid,
                   l_x = s.l_x, l_z = s.l_z, l_c = s.l_c, l_new = s.l_new();
    const std::string hq = heads_range(s.H);
    const std::string hkv = s.H_kv < s.H ? heads_range(s.H_kv) + " (key/value)" : hq;
    const std::string hn = heads_note(s.H);
    const std::string kvn = s.H_kv < s.H ? " (" + std::to_string(s.H_kv) + " key/value heads of H = " +
                                               std::to_string(s.H) + ")"
                                         : hn;
    const std::string cached = l_c > 0 ? ", after the " + std::to_string(l_c) + " cached columns" : "";
    const Buffer& context = c.self ? X : Z;
    const Buffer& q_out = c.rope() ? Q_pre : Q;
    const int alg = c.algorithm();
    const std::string a = c.rf() ? "Alg. 4-R" : "Alg. 4";
    dispatch(linear, LinearParams{d_attn, d_x, l_x, d_attn * l_x, 0}, {{1, &W_q}, {2, &b_q}, {3, &X}, {4, &q_out}},
             {groups(s.d_attn, kTile), groups(s.l_x, kTile), H},
             {a + " L1: Q ← W_q X + b_q 1ᵀ" + hn, alg, 1, 1, hq});
    if (c.rope())
      dispatch(rope, RopeParams{d_attn, l_x, d_attn * l_x, 0}, {{1, &Q_pre}, {2, &rope_x}, {3, &Q}},
               {groups(s.d_attn, kTile), groups(s.l_x, kTile), H},
               {a + " L1: Q rotated by RoPE (positions " + std::to_string(c.av.x_pos0 + 1) + " … " +
                    std::to_string(c.av.x_pos0 + s.l_x) + ")" + hn,
                alg, 1, 1, hq});
    if (l_new == 0) return;  // the KV-cached cross-attention: K and V are all cached
    // K^g and V^g are ℓ_z columns long; the new ones start after the ℓ_c cached ones.
    const Buffer& k_out = c.rope() ? K_pre : K;
    const LinearParams k_params = c.rope() ? LinearParams{d_attn, d_z, l_new, d_attn * l_new, 0}
                                           : LinearParams{d_attn, d_z, l_new, d_attn * l_z, d_attn * l_c};
    dispatch(linear, k_params, {{1, &W_k}, {2, &b_k}, {3, &context}, {4, &k_out}},
             {groups(s.d_attn, kTile), groups(static_cast<int>(l_new), kTile), H_kv},
             {a + " L2: K ← W_k Z + b_k 1ᵀ" + kvn + cached, alg, 2, 2, hkv});
    if (c.rope())
      dispatch(rope, RopeParams{d_attn, l_new, d_attn * l_z, d_attn * l_c}, {{1, &K_pre}, {2, &rope_z}, {3, &K}},
               {groups(s.d_attn, kTile), groups(static_cast<int>(l_new), kTile), H_kv},
               {a + " L2: K rotated by RoPE (positions " + std::to_string(c.av.z_pos0 + s.l_c + 1) + " … " +
                    std::to_string(c.av.z_pos0 + s.l_z) + ")" + kvn,
                alg, 2, 2, hkv});
    dispatch(linear, LinearParams{d_mid, d_z, l_new, d_mid * l_z, d_mid * l_c},
             {{1, &W_v}, {2, &b_v}, {3, &context}, {4, &V}},
             {groups(s.d_mid, kTile), groups(static_cast<int>(l_new), kTile), H_kv},
             {a + " L3: V ← W_v Z + b_v 1ᵀ" + kvn + cached, alg, 3, 3, hkv});
  }

  // Algorithm 4-R's lines 4–13 for every query head, into Y = [Y¹; …; Yᴴ], in either form: φ(Q) and
  // φ(K) with head h's directions, κ per key/value head, then the running sums and each query's
  // a / max(b, ε·g) (shaders/rf_*.comp).
  void random_feature_lines(const Call& c) {
    const Shapes& s = c.s;
    const uint32_t H = s.H, H_kv = s.H_kv, d_attn = s.d_attn, l_x = s.l_x, l_z = s.l_z, D = c.av.rf_D;
    const std::string hq = heads_range(s.H), hn = heads_note(s.H);
    const std::string kvn = s.H_kv < s.H ? " (" + std::to_string(s.H_kv) + " key/value heads)" : hn;
    const std::string hkv = s.H_kv < s.H ? heads_range(s.H_kv) + " (key/value)" : hq;
    const float inv_sqrt_D = 1.0f / std::sqrt(static_cast<float>(D));
    const Program& features = compiled(rf_features, "rf_features");
    dispatch(features, RfFeaturesParams{D, d_attn, l_x, H, H, inv_sqrt_D}, {{1, &rf_W}, {2, &Q}, {3, &phi_Q}},
             {groups(c.av.rf_D, kTile), groups(s.l_x, kTile), H},
             {"Alg. 4-R L5: Φ_Q ← φ(Q), D = " + std::to_string(D) + " cos/sin pairs" + hn, algs::random_feature_attention, 5, 5, hq});
    dispatch(features, RfFeaturesParams{D, d_attn, l_z, H, H_kv, inv_sqrt_D}, {{1, &rf_W}, {2, &K}, {3, &phi_K}},
             {groups(c.av.rf_D, kTile), groups(s.l_z, kTile), H},
             {"Alg. 4-R L6: Φ_K ← φ(K), each query head's w_i" + hn, algs::random_feature_attention, 6, 6, hq});
    dispatch(compiled(rf_key_weights, "rf_key_weights"),
             RfKeyWeightsParams{d_attn, l_z, 2.0f * static_cast<float>(std::sqrt(static_cast<double>(d_attn)))},
             {{1, &K}, {2, &rf_plan}, {3, &kappa}, {7, &loop_guard}}, {H_kv, 1, 1},
             {"Alg. 4-R L7: κ[t_z] ← exp(‖k‖²/2σ² − c)" + kvn, algs::random_feature_attention, 7, 7, hkv});
    const int features_2D = 2 * c.av.rf_D;
    dispatch(compiled(rf_prefix_sums[features_2D], "rf_prefix_sums", {{"FEATURES", features_2D}}),
             RfPrefixSumsParams{l_z, l_x, static_cast<uint32_t>(s.d_mid), H, H_kv, H * static_cast<uint32_t>(s.d_mid),
                                static_cast<float>(kRfGuard)},
             {{1, &phi_Q}, {2, &phi_K}, {3, &kappa}, {4, &V}, {5, &Y}, {6, &rf_plan}, {7, &loop_guard}, {8, &rf_guarded}},
             {static_cast<GLuint>(s.d_mid), H, 1},
             {"Alg. 4-R L8–L13: running S_φ, s_φ, g; Ṽ[:, t_x] ← S_φᵀφ(q) / max(s_φᵀφ(q), ε·g), into Y" + hn,
              algs::random_feature_attention, 8, 13, hq});
  }

  // Lines 4–6 for every query head, into Y = [Y¹; …; Yᴴ]: one dispatch per line, or fused.
  void lines_4_to_6(const Call& c) {
    const Shapes& s = c.s;
    const uint32_t H = s.H, H_kv = s.H_kv, d_attn = s.d_attn, d_mid = s.d_mid, l_x = s.l_x, l_z = s.l_z;
    const uint32_t bias_kind = c.bias_kind();
    const std::string hq = heads_range(s.H), hn = heads_note(s.H);
    const std::string shared =
        s.H_kv < s.H ? ", query head h reading K, V of key/value head ⌊(h−1)·H_kv/H⌋ + 1" : "";
    if (c.form == Form::Teaching) {
      dispatch(scores, ScoresParams{d_attn, l_z, l_x, H, H_kv}, {{1, &K}, {2, &Q}, {3, &S}},
               {groups(s.l_z, kTile), groups(s.l_x, kTile), H}, {"Alg. 4 L4: S ← Kᵀ Q" + hn + shared, 4, 4, 4, hq});
      dispatch(mask, MaskParams{l_z, l_x, c.kind}, {{1, &S}, {2, &mask_bytes}, {3, &S_masked}},
               {groups(s.l_z, kTile), groups(s.l_x, kTile), H},
               {"Alg. 4 L5: S[t_z, t_x] ← −∞ where ¬Mask" + hn, 4, 5, 5, hq});
      dispatch(softmax,
               SoftmaxParams{l_z, l_x, std::sqrt(static_cast<float>(d_attn)), bias_kind, c.av.x_pos0, c.av.z_pos0},
               {{1, &S_masked}, {2, &A}, {3, &bias}, {7, &loop_guard}}, {l_x, H, 1},
               {"Alg. 4 L6: A ← " + c.softmax_of("S") + ", by columns" + hn, 4, 6, 6, hq});
      dispatch(apply_values, ApplyValuesParams{d_mid, l_z, l_x, H * d_mid, H, H_kv},
               {{1, &V}, {2, &A}, {3, &Y}, {7, &loop_guard}}, {groups(s.d_mid, kTile), groups(s.l_x, kTile), H},
               {"Alg. 4 L6: Ṽ = V · A, into Y" + hn + shared, 4, 6, 6, hq});
    } else {
      dispatch(flash_program(s.d_attn, s.d_mid),
               FlashParams{l_z, l_x, c.kind, H * d_mid, 1.0f / std::sqrt(static_cast<float>(d_attn)), H, H_kv,
                           bias_kind, c.av.x_pos0, c.av.z_pos0},
               {{1, &Q}, {2, &K}, {3, &V}, {4, &mask_bytes}, {5, &Y}, {6, &L}, {7, &loop_guard}, {8, &bias}},
               {groups(s.l_x, static_cast<uint32_t>(kFlashBR)), H, 1},
               {"Alg. 4 L4–L6 fused: Ṽ = V · " + c.softmax_of("Kᵀ Q") + ", into Y" + hn + shared, 4, 4, 6, hq});
    }
  }

  // Algorithm 4, lines 1–6, for every head (Algorithm 5, lines 1–3): leaves
  // Y = [Y¹; …; Yᴴ] (H·d_mid, ℓ_x) in buffer Y, and, with c.W, Ṽ = W_o Y + b_o 1ᵀ in `out`.
  // Zh: the ℓ_new context columns lines 2–3 read (ignored when c.self or ℓ_new = 0).
  void run(const MatF& Xh, const MatF* Zh, const std::vector<AttentionHeadW<const float>>& heads, const Mask& m,
           const Call& c, bool timed) {
    reserve(c);
    upload(Xh, Zh, heads, m, c);
    timer.start(timed, dev);
    lines_1_to_3(c);
    if (c.rf())
      random_feature_lines(c);
    else
      lines_4_to_6(c);
    if (c.W) {
      const uint32_t d_out = static_cast<uint32_t>(c.W->W_o.rows()), l_x = c.s.l_x, Hd = c.s.H * c.s.d_mid;
      dispatch(linear, LinearParams{d_out, Hd, l_x, d_out * l_x, 0}, {{1, &W_o}, {2, &b_o}, {3, &Y}, {4, &out}},
               {groups(static_cast<int>(d_out), kTile), groups(c.s.l_x, kTile), 1},
               {"Alg. 5 L4: Ṽ ← W_o Y + b_o 1ᵀ", 5, 4, 4, ""});
    }
    glUseProgram(0);
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);  // the read-backs see the shaders' writes
    uint32_t cut_short = 0, guarded_pairs = 0;
    loop_guard.download(&cut_short, sizeof cut_short);
    if (c.rf()) rf_guarded.download(&guarded_pairs, sizeof guarded_pairs);
    guarded = static_cast<int>(guarded_pairs);
    if (cut_short)
      throw Error(dev.renderer + " cut the " + to_string(c.form) +
                  " form's shader loops short, so its results would be wrong: Mesa's llvmpipe ends every loop of a "
                  "shader invocation once its loops have run 65535 iterations in all (LP_MAX_TGSI_LOOP_ITERATIONS), "
                  "and ℓ_z = " +
                  std::to_string(c.s.l_z) + " needs more: use shorter sequences, or a GPU");
  }

  MatF read(const Buffer& b, Eigen::Index rows, Eigen::Index cols, size_t offset_elements = 0) const {
    MatF m(rows, cols);
    b.download(m.data(), sizeof(float) * m.size(), sizeof(float) * offset_elements);
    return m;
  }

  // Head h's record of the teaching form, from the buffers of the last run; Y is read once.
  // K, V (and K_pre) are those of h's key/value head; B and m as core's Algorithm 4 keeps them.
  void read_record(const Call& c, int h, const MatF& Yall, AttentionRecord<float>& r) const {
    const Shapes& s = c.s;
    const size_t q_at = static_cast<size_t>(h), g = static_cast<size_t>(group_of(h, s.H_kv, s.H));
    r.Q = read(Q, s.d_attn, s.l_x, q_at * s.d_attn * s.l_x);
    r.K = read(K, s.d_attn, s.l_z, g * s.d_attn * s.l_z);
    r.V = read(V, s.d_mid, s.l_z, g * s.d_mid * s.l_z);
    r.S = read(S, s.l_z, s.l_x, q_at * s.l_z * s.l_x);
    r.S_masked = read(S_masked, s.l_z, s.l_x, q_at * s.l_z * s.l_x);
    r.A = read(A, s.l_z, s.l_x, q_at * s.l_z * s.l_x);
    r.Vt = Yall.middleRows(static_cast<Eigen::Index>(h) * s.d_mid, s.d_mid);
    if (c.rope()) {
      r.Q_pre = read(Q_pre, s.d_attn, s.l_x, q_at * s.d_attn * s.l_x);
      r.K_pre = read(K_pre, s.d_attn, s.l_new(), g * s.d_attn * s.l_new());
    }
    if (c.av.alibi) {
      r.B = alibi_bias<float>(s.l_z, s.l_x, c.av.z_pos0, c.av.x_pos0);
      r.m = c.bias[h];
    }
    if (c.av.relative()) {  // B as the shaders read it: head h's diagonal values, spread over ℓ_z×ℓ_x
      const size_t diagonals = static_cast<size_t>(s.l_z + s.l_x - 1);
      r.B.resize(s.l_z, s.l_x);
      for (int t_x = 0; t_x < s.l_x; ++t_x)
        for (int t_z = 0; t_z < s.l_z; ++t_z) r.B(t_z, t_x) = c.bias[h * diagonals + t_z - t_x + s.l_x - 1];
      r.m = 1;
      r.relative = true;
    }
  }

  // The KV-cached step's new columns of K and V (after the ℓ_c cached ones in each key/value
  // head's slice), appended to the cache of every query head of the group.
  void append_new_columns(const Call& c, std::vector<MatF>& K_cache, std::vector<MatF>& V_cache) const {
    const Shapes& s = c.s;
    const int n = s.l_new();
    for (int g = 0; g < s.H_kv; ++g) {
      const MatF K_new = read(K, s.d_attn, n, static_cast<size_t>(g) * s.d_attn * s.l_z + s.d_attn * s.l_c);
      const MatF V_new = read(V, s.d_mid, n, static_cast<size_t>(g) * s.d_mid * s.l_z + s.d_mid * s.l_c);
      for (int h = 0; h < s.H; ++h) {
        if (group_of(h, s.H_kv, s.H) != g) continue;
        K_cache[h].conservativeResize(s.d_attn, s.l_z);
        K_cache[h].rightCols(n) = K_new;
        V_cache[h].conservativeResize(s.d_mid, s.l_z);
        V_cache[h].rightCols(n) = V_new;
      }
    }
  }
};

GpuAttention::GpuAttention(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GpuAttention::~GpuAttention() {
  if (impl_->own) impl_->own->make_current();  // GL objects are deleted on their context
}

namespace {

// Loads GL through `load` into glad; "" or why it cannot be used.
std::string load_gl(GlLoader load) {
  const int version = gladLoadGL(load);
  if (version == 0)
    return "no OpenGL context is current on this thread (or its GL functions cannot be loaded): make the "
           "context current before creating the GPU attention";
  const int major = GLAD_VERSION_MAJOR(version), minor = GLAD_VERSION_MINOR(version);
  if (major * 100 + minor < 403) {
    const GLubyte* renderer = glGetString(GL_RENDERER);
    return "the OpenGL context is version " + std::to_string(major) + "." + std::to_string(minor) + " (" +
           (renderer ? reinterpret_cast<const char*>(renderer) : "unknown renderer") +
           "); the attention shaders need OpenGL 4.3 (compute shaders and shader storage buffers): use a "
           "4.3 core context or a newer driver";
  }
  return "";
}

}  // namespace

std::unique_ptr<GpuAttention> GpuAttention::create(std::string& why_not) {
  std::unique_ptr<HeadlessGl> context = HeadlessGl::create(why_not);
  if (!context) return nullptr;
  if (std::string e = load_gl(HeadlessGl::loader()); !e.empty()) {
    why_not = context->platform() + ": " + e;
    return nullptr;
  }
  try {
    DeviceInfo info = query_device(context->platform());
    return std::unique_ptr<GpuAttention>(new GpuAttention(std::make_unique<Impl>(std::move(context), std::move(info))));
  } catch (const std::exception& e) {
    why_not = e.what();
    return nullptr;
  }
}

std::unique_ptr<GpuAttention> GpuAttention::create_on_current_context(GlLoader load, std::string& why_not) {
  if (std::string e = load_gl(load); !e.empty()) {
    why_not = e;
    return nullptr;
  }
  try {
    return std::unique_ptr<GpuAttention>(
        new GpuAttention(std::make_unique<Impl>(nullptr, query_device("the caller's context"))));
  } catch (const std::exception& e) {
    why_not = e.what();
    return nullptr;
  }
}

const DeviceInfo& GpuAttention::device() const { return impl_->dev; }

int GpuAttention::guarded_columns() const { return impl_->guarded; }

namespace {

void check_w_o(const MHAttentionW<const float>& W, const Shapes& s) {
  if (W.W_o.cols() != static_cast<Eigen::Index>(s.H) * s.d_mid || W.b_o.size() != W.W_o.rows() || W.W_o.rows() < 1)
    throw Error("MHAttention on the GPU: W_o must be d_out×H·d_mid = d_out×" + std::to_string(s.H * s.d_mid) +
                " and b_o of size d_out, not " + dims(W.W_o.rows(), W.W_o.cols()) + " and " +
                std::to_string(W.b_o.size()));
}

// The cache of the KV-cached step: H matrices K[h] (d_attn, ℓ_c) and V[h] (d_mid, ℓ_c). Returns ℓ_c.
int check_cache(const std::vector<MatF>& K, const std::vector<MatF>& V, const Shapes& s) {
  if (static_cast<int>(K.size()) != s.H || static_cast<int>(V.size()) != s.H)
    throw Error("MHAttention's KV-cached step on the GPU: the cache holds K, V for " + std::to_string(K.size()) + ", " +
                std::to_string(V.size()) + " heads, W for " + std::to_string(s.H) +
                ": rebuild the cache for this model");
  const Eigen::Index l_c = K[0].cols();
  for (int h = 0; h < s.H; ++h)
    if (K[h].rows() != s.d_attn || V[h].rows() != s.d_mid || K[h].cols() != l_c || V[h].cols() != l_c)
      throw Error("MHAttention's KV-cached step on the GPU: head " + std::to_string(h + 1) + "'s cached K is " +
                  dims(K[h].rows(), K[h].cols()) + " and V " + dims(V[h].rows(), V[h].cols()) +
                  "; every head's must be d_attn×ℓ_c = " + dims(s.d_attn, l_c) + " and d_mid×ℓ_c = " +
                  dims(s.d_mid, l_c) + ": rebuild the cache");
  return static_cast<int>(l_c);
}

// Line 6's bias of every query head, one after another (Call::bias): ALiBi's m_h = 2^{−8h/H}, or the
// relative bias's diagonals from W_rel[h, :] (relative_head) at av's positions.
std::vector<float> head_biases(const AttentionOptions& av, const MHAttentionW<const float>& W, const Shapes& s) {
  if (av.alibi) return alibi_slopes(s.H);
  std::vector<float> b;
  if (av.relative())
    for (int h = 1; h <= s.H; ++h) {
      const std::vector<float> d = relative_diagonals(relative_head<float>(av, W, h), s.l_z, s.l_x);
      b.insert(b.end(), d.begin(), d.end());
    }
  return b;
}

// Algorithm 4 for one head, as core's attention takes `av` (ALiBi's slope is av.m, the relative bias's row av.rel_table).
Call one_head_call(const MatF& X, const MatF& Z, const std::vector<AttentionHeadW<const float>>& heads,
                   const Mask& mask, Form form, const AttentionOptions& av) {
  Call c;
  c.s = check_shapes(X, static_cast<int>(Z.rows()), static_cast<int>(Z.cols()), heads, mask, av, true);
  c.form = form;
  c.kind = classify(mask);
  c.self = X.data() == Z.data();
  c.av = av;
  if (av.alibi) c.bias = {static_cast<float>(av.m)};
  if (av.relative()) c.bias = relative_diagonals(av, c.s.l_z, c.s.l_x);
  return c;
}

}  // namespace

GpuAttentionResult GpuAttention::teaching(const MatF& X, const MatF& Z, const AttentionHeadW<const float>& W,
                                          const Mask& mask, const AttentionOptions& av) {
  impl_->make_current();
  const std::vector<AttentionHeadW<const float>> heads{W};
  const Call c = one_head_call(X, Z, heads, mask, Form::Teaching, av);
  impl_->run(X, &Z, heads, mask, c, true);
  GpuAttentionResult r;
  impl_->read_record(c, 0, impl_->read(impl_->Y, c.s.d_mid, c.s.l_x), r.record);
  r.times = impl_->timer.finish();
  return r;
}

FusedResult GpuAttention::fused(const MatF& X, const MatF& Z, const AttentionHeadW<const float>& W, const Mask& mask,
                                bool timed, const AttentionOptions& av) {
  impl_->make_current();
  const std::vector<AttentionHeadW<const float>> heads{W};
  const Call c = one_head_call(X, Z, heads, mask, Form::Fused, av);
  impl_->run(X, &Z, heads, mask, c, timed);
  FusedResult r;
  r.Vt = impl_->read(impl_->Y, c.s.d_mid, c.s.l_x);
  r.L = impl_->read(impl_->L, 1, c.s.l_x);
  r.times = impl_->timer.finish();
  return r;
}

// Random-feature attention (Algorithm 4-R, config "attention": "random_features") is another function
// than Algorithm 4: its inputs that the CPU prepares (Call::rf_W, rf_plan) are each query head's
// directions w_i = ω_i/σ, drawn as core's mh_attention draws them (head h's stream of rf_seed, in double,
// cast to float), and the mask as key prefixes (key_prefixes: it throws, naming the column, for a mask
// 4-R cannot compute in linear time, as core does).
namespace {
void plan_random_features(Call& c, const Mask& mask) {
  if (!c.rf()) return;
  if (c.av.alibi || c.av.relative())
    throw Error("random-feature attention (Algorithm 4-R) cannot add ALiBi's or the relative bias: it never forms the "
                "scores S (use attention \"exact\" with them)");
  for (int h = 1; h <= c.s.H; ++h) {
    const MatF W = rf_directions<float>(rf_omega(c.av.rf_D, c.s.d_attn, static_cast<std::uint64_t>(c.av.rf_seed), h,
                                                 c.av.rf_orthogonal));  // (D, d_attn)
    c.rf_W.insert(c.rf_W.end(), W.data(), W.data() + W.size());
  }
  const KeyPrefixes p = key_prefixes(mask);
  c.rf_plan.assign(p.keep.begin(), p.keep.end());
  c.rf_plan.insert(c.rf_plan.end(), p.n.begin(), p.n.end());
  c.rf_plan.insert(c.rf_plan.end(), p.order.begin(), p.order.end());
}
}  // namespace

MatF GpuAttention::mh_attention(const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
                                Form form, std::vector<DispatchTime>* times,
                                std::vector<AttentionRecord<float>>* recs, const AttentionOptions& av) {
  impl_->make_current();
  if (recs && av.random_features())
    throw Error("MHAttention on the GPU: random-feature attention (Algorithm 4-R) has no Algorithm 4 record (S, "
                "softmax(S)) to keep");
  if (recs && form != Form::Teaching)
    throw Error(
        "MHAttention on the GPU: only the teaching form keeps the records of each line (the fused form "
        "never stores S)");
  Call c;
  c.s = check_shapes(X, static_cast<int>(Z.rows()), static_cast<int>(Z.cols()), W.heads, mask, av, true);
  check_w_o(W, c.s);
  c.form = form;
  c.kind = classify(mask);
  c.self = X.data() == Z.data();
  c.av = av;
  c.bias = head_biases(av, W, c.s);
  plan_random_features(c, mask);
  c.W = &W;
  impl_->run(X, &Z, W.heads, mask, c, times != nullptr);
  MatF Vt = impl_->read(impl_->out, W.W_o.rows(), c.s.l_x);
  if (recs) {
    const MatF Y = impl_->read(impl_->Y, static_cast<Eigen::Index>(c.s.H) * c.s.d_mid, c.s.l_x);
    recs->assign(c.s.H, AttentionRecord<float>{});
    for (int h = 0; h < c.s.H; ++h) impl_->read_record(c, h, Y, (*recs)[h]);
  }
  if (times) *times = impl_->timer.finish();
  return Vt;
}

MatF GpuAttention::mh_attention_cached(const MatF& X, const MHAttentionW<const float>& W, std::vector<MatF>& K,
                                       std::vector<MatF>& V, bool append, const Mask& mask, Form form,
                                       const AttentionOptions& av, std::vector<DispatchTime>* times) {
  impl_->make_current();
  if (W.heads.empty()) throw Error("MHAttention on the GPU: W has no heads");
  if (!append && av.positional())
    throw Error("MHAttention's KV-cached cross-attention on the GPU: RoPE and ALiBi act on self-attention only "
                "(core's attention_options gives a cross-attention neither); call it with the cross-attention's "
                "options");
  const int n = static_cast<int>(X.cols());
  Shapes probe;  // the cache's sizes, checked before the mask is (its ℓ_z depends on ℓ_c)
  probe.H = static_cast<int>(W.heads.size());
  probe.d_attn = static_cast<int>(W.heads[0].W_q.rows());
  probe.d_mid = static_cast<int>(W.heads[0].W_v.rows());
  const int l_c = check_cache(K, V, probe);
  Call c;
  // Cached self-attention: lines 2–3 run for the n new columns of Z = X, after the ℓ_c cached ones.
  // Cached cross-attention: K, V are all cached (ℓ_z = ℓ_c).
  c.s = check_shapes(X, static_cast<int>(X.rows()), append ? l_c + n : l_c, W.heads, mask, av, append);
  c.s.l_c = l_c;
  check_w_o(W, c.s);
  c.form = form;
  c.kind = classify(mask);
  c.self = true;
  c.av = av;
  // Core's cached_attention: Q and the new K at positions ℓ_c + 1 … (RoPE), and ALiBi's B over
  // keys 1 … ℓ_c + n against queries ℓ_c + 1 …
  c.av.x_pos0 = l_c;
  c.av.z_pos0 = 0;
  c.bias = head_biases(c.av, W, c.s);
  plan_random_features(c, mask);
  c.W = &W;
  c.K_cached = &K;
  c.V_cached = &V;
  impl_->run(X, nullptr, W.heads, mask, c, times != nullptr);
  MatF Vt = impl_->read(impl_->out, W.W_o.rows(), n);
  if (append) impl_->append_new_columns(c, K, V);
  if (times) *times = impl_->timer.finish();
  return Vt;
}

}  // namespace sf::gpu
