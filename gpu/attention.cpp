// Algorithms 4 and 5 on the GPU: see attention.hpp. The shaders are in shaders/; this file
// plans the buffers, uploads, dispatches one shader per pseudocode line (or the fused one) and
// reads back.
#include "gpu/attention.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>

#include "core/model/error.hpp"
#include "gpu/gl_util.hpp"

namespace sf::gpu {

namespace {

// The parameter blocks of shaders/*.comp (std140). They hold 4-byte scalars only, which
// std140 packs one after another; alignas(16) rounds the size up as std140 rounds a block.
struct alignas(16) LinearParams {
  uint32_t rows, inner, cols;
};
struct alignas(16) ScoresParams {
  uint32_t d_attn, l_z, l_x;
};
struct alignas(16) MaskParams {
  uint32_t l_z, l_x, mask_kind;
};
struct alignas(16) SoftmaxParams {
  uint32_t l_z, l_x;
  float sqrt_d_attn;
};
struct alignas(16) ApplyValuesParams {
  uint32_t d_mid, l_z, l_x, y_rows;
};
struct alignas(16) FlashParams {
  uint32_t l_z, l_x, mask_kind, y_rows;
  float inv_sqrt_d_attn;
};

// As MASK_* in mask.comp and flash_attention.comp.
enum MaskKind : uint32_t { kBidirectional = 0, kUnidirectional = 1, kExplicit = 2 };

constexpr uint32_t kTile = 16;     // work groups of 16×16 in linear, scores, mask, apply_values
constexpr uint32_t kFlashBR = 64;  // queries per work group in flash_attention.comp
constexpr int kFlashMaxBC = 32;    // keys per shared-memory tile, fewer when shared memory is short

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

// The sizes of one call, checked against each other.
struct Shapes {
  int H = 0, d_x = 0, d_z = 0, d_attn = 0, d_mid = 0, l_x = 0, l_z = 0;
};

Shapes check_shapes(const MatF& X, const MatF& Z, const std::vector<AttentionHeadW<const float>>& heads,
                    const Mask& mask) {
  if (heads.empty()) throw Error("MHAttention on the GPU: W has no heads");
  Shapes s;
  s.H = static_cast<int>(heads.size());
  s.d_x = static_cast<int>(X.rows());
  s.d_z = static_cast<int>(Z.rows());
  s.l_x = static_cast<int>(X.cols());
  s.l_z = static_cast<int>(Z.cols());
  s.d_attn = static_cast<int>(heads[0].W_q.rows());
  s.d_mid = static_cast<int>(heads[0].W_v.rows());
  if (s.l_x < 1 || s.l_z < 1 || s.d_x < 1 || s.d_z < 1 || s.d_attn < 1 || s.d_mid < 1)
    throw Error("Attention on the GPU: X is " + dims(X.rows(), X.cols()) + ", Z " + dims(Z.rows(), Z.cols()) +
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
    if (W.W_k.rows() != s.d_attn || W.W_k.cols() != s.d_z || W.b_k.size() != s.d_attn)
      throw Error("Attention on the GPU, " + head + "W_k must be d_attn×d_z = " + dims(s.d_attn, s.d_z) +
                  " and b_k of size d_attn, not " + dims(W.W_k.rows(), W.W_k.cols()) + " and " +
                  std::to_string(W.b_k.size()));
    if (W.W_v.rows() != s.d_mid || W.W_v.cols() != s.d_z || W.b_v.size() != s.d_mid)
      throw Error("Attention on the GPU, " + head + "W_v must be d_mid×d_z = " + dims(s.d_mid, s.d_z) +
                  " and b_v of size d_mid, not " + dims(W.W_v.rows(), W.W_v.cols()) + " and " +
                  std::to_string(W.b_v.size()));
  }
  return s;
}

std::string heads_note(int H) { return " (" + std::to_string(H) + (H == 1 ? " head)" : " heads)"); }

struct Binding {
  GLuint index;  // the shader's binding = N
  const Buffer* buffer;
};

}  // namespace

const char* to_string(Form f) { return f == Form::Teaching ? "teaching" : "fused"; }

std::string describe_call(bool self, const Mask& mask, const AttentionOptions& av, int H) {
  static const char* const kinds[] = {"bidirectional mask", "causal mask", "explicit mask"};
  std::string s = std::string(self ? "self-attention" : "cross-attention") + " · " + kinds[classify(mask)];
  if (av.rope_base > 0) s += " · RoPE";
  if (av.alibi) s += " · ALiBi";
  if (av.H_kv > 0 && av.H_kv < H) s += " · H_kv = " + std::to_string(av.H_kv) + " of H = " + std::to_string(H);
  return s;
}

struct GpuAttention::Impl {
  std::unique_ptr<HeadlessGl> own;  // the headless context, when this object made it (destroyed last)
  DeviceInfo dev;
  std::string dir = shader_dir();
  // The teaching form's shaders, one per pseudocode line (linear also serves the fused form and W_o).
  Program linear{dir, "linear", {}};
  Program scores{dir, "scores", {}};
  Program mask{dir, "mask", {}};
  Program softmax{dir, "softmax_columns", {}};
  Program apply_values{dir, "apply_values", {}};
  std::map<std::array<int, 3>, std::unique_ptr<Program>> flash;  // by (d_attn, d_mid, BC)
  Buffer params;                                                 // the parameter block (uniform buffer, binding 0)
  Buffer X, Z, W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o;           // inputs
  Buffer Q, K, V, S, S_masked, A, Y, L, out;                     // results
  Buffer mask_bytes;
  Buffer loop_guard;  // {loops_cut_short, two}: see LoopGuard in the shaders
  DispatchTimer timer;

  Impl(std::unique_ptr<HeadlessGl> context, DeviceInfo info) : own(std::move(context)), dev(std::move(info)) {}

  void make_current() const {
    if (own) own->make_current();
  }

  const Program& flash_program(int d_attn, int d_mid) {
    const int per_key = (d_attn + d_mid) * static_cast<int>(sizeof(float));  // shared bytes per key
    int bc = kFlashMaxBC;
    while (bc > 1 && bc * per_key > dev.max_shared_bytes) bc /= 2;
    if (bc * per_key > dev.max_shared_bytes)
      throw Error("the fused form needs (d_attn + d_mid)·4 = " + std::to_string(per_key) +
                  " bytes of shared memory per key, more than this GL's GL_MAX_COMPUTE_SHARED_MEMORY_SIZE of " +
                  std::to_string(dev.max_shared_bytes) + ": use the teaching form");
    auto& p = flash[{d_attn, d_mid, bc}];
    if (!p)
      p = std::make_unique<Program>(
          dir, "flash_attention",
          std::vector<std::pair<std::string, int>>{
              {"D_ATTN", d_attn}, {"D_MID", d_mid}, {"BR", static_cast<int>(kFlashBR)}, {"BC", bc}});
    return *p;
  }

  template <class P>
  void dispatch(const Program& program, const P& p, std::initializer_list<Binding> bindings,
                std::array<GLuint, 3> count, std::string what) {
    for (int i = 0; i < 3; ++i)
      if (count[i] > static_cast<GLuint>(dev.max_groups[i]))
        throw Error(what + " needs " + std::to_string(count[i]) + " work groups along " + "xyz"[i] +
                    ", more than this GL's GL_MAX_COMPUTE_WORK_GROUP_COUNT of " + std::to_string(dev.max_groups[i]) +
                    ": use shorter sequences or fewer heads");
    params.set(&p, sizeof p);
    glUseProgram(program.id());
    glBindBufferBase(GL_UNIFORM_BUFFER, 0, params.id());
    for (const Binding& b : bindings) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, b.index, b.buffer->id());
    timer.before(std::move(what));
    glDispatchCompute(count[0], count[1], count[2]);
    timer.after();
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  }

  // Room for everything one call needs, before anything is uploaded or run: a size the
  // device cannot take fails first, naming the buffer.
  void reserve(const Shapes& s, Form form, MaskKind kind, bool self, const MHAttentionW<const float>* W) {
    const size_t f = sizeof(float), H = s.H, d_attn = s.d_attn, d_mid = s.d_mid, l_x = s.l_x, l_z = s.l_z;
    const std::string hn = heads_note(s.H);
    X.reserve(f * s.d_x * l_x, "X", dev);
    if (!self) Z.reserve(f * s.d_z * l_z, "Z", dev);
    W_q.reserve(f * H * d_attn * s.d_x, "W_q" + hn, dev);
    b_q.reserve(f * H * d_attn, "b_q" + hn, dev);
    W_k.reserve(f * H * d_attn * s.d_z, "W_k" + hn, dev);
    b_k.reserve(f * H * d_attn, "b_k" + hn, dev);
    W_v.reserve(f * H * d_mid * s.d_z, "W_v" + hn, dev);
    b_v.reserve(f * H * d_mid, "b_v" + hn, dev);
    Q.reserve(f * H * d_attn * l_x, "Q" + hn, dev);
    K.reserve(f * H * d_attn * l_z, "K" + hn, dev);
    V.reserve(f * H * d_mid * l_z, "V" + hn, dev);
    if (form == Form::Teaching) {
      const std::string what = hn + " of ℓ_z×ℓ_x = " + dims(s.l_z, s.l_x) + " (teaching form)";
      S.reserve(f * H * l_z * l_x, "S" + what, dev);
      S_masked.reserve(f * H * l_z * l_x, "masked S" + what, dev);
      A.reserve(f * H * l_z * l_x, "softmax(S/√d_attn)" + what, dev);
    } else {
      L.reserve(f * H * l_x, "L" + hn, dev);
    }
    Y.reserve(f * H * d_mid * l_x, "Y = [Y¹; …; Yᴴ]", dev);
    mask_bytes.reserve(kind == kExplicit ? (l_z * l_x + 3) / 4 * 4 : 4, "Mask", dev);
    loop_guard.reserve(2 * sizeof(uint32_t), "the loop guard", dev);
    if (W) {
      W_o.reserve(f * W->W_o.size(), "W_o", dev);
      b_o.reserve(f * W->b_o.size(), "b_o", dev);
      out.reserve(f * W->W_o.rows() * l_x, "Ṽ", dev);
    }
  }

  // Algorithm 4, lines 1–6, for every head (Algorithm 5, lines 1–3): leaves
  // Y = [Y¹; …; Yᴴ] (H·d_mid, ℓ_x) in buffer Y, and, with W, Ṽ = W_o Y + b_o 1ᵀ in `out`.
  void run(const MatF& Xh, const MatF& Zh, const std::vector<AttentionHeadW<const float>>& heads, const Mask& m,
           const Shapes& s, Form form, bool timed, const MHAttentionW<const float>* W) {
    const MaskKind kind = classify(m);
    const bool self = Xh.data() == Zh.data();  // self-attention: Z is X, uploaded once
    reserve(s, form, kind, self, W);

    const size_t f = sizeof(float);
    X.upload(Xh.data(), f * Xh.size());
    if (!self) Z.upload(Zh.data(), f * Zh.size());
    for (int h = 0; h < s.H; ++h) {
      const AttentionHeadW<const float>& w = heads[h];
      W_q.upload(w.W_q.data(), f * w.W_q.size(), f * h * w.W_q.size());
      b_q.upload(w.b_q.data(), f * w.b_q.size(), f * h * w.b_q.size());
      W_k.upload(w.W_k.data(), f * w.W_k.size(), f * h * w.W_k.size());
      b_k.upload(w.b_k.data(), f * w.b_k.size(), f * h * w.b_k.size());
      W_v.upload(w.W_v.data(), f * w.W_v.size(), f * h * w.W_v.size());
      b_v.upload(w.b_v.data(), f * w.b_v.size(), f * h * w.b_v.size());
    }
    if (kind == kExplicit) mask_bytes.upload(m.data(), static_cast<size_t>(m.size()));
    const uint32_t guard[2] = {0, 2};  // no loop cut short yet; the guard loop's 2 steps
    loop_guard.upload(guard, sizeof guard);
    if (W) {
      W_o.upload(W->W_o.data(), f * W->W_o.size());
      b_o.upload(W->b_o.data(), f * W->b_o.size());
    }
    const Buffer& context = self ? X : Z;

    const uint32_t H = s.H, d_attn = s.d_attn, d_mid = s.d_mid, d_x = s.d_x, d_z = s.d_z, l_x = s.l_x, l_z = s.l_z;
    const std::string hn = heads_note(s.H);
    timer.start(timed, dev);
    dispatch(linear, LinearParams{d_attn, d_x, l_x}, {{1, &W_q}, {2, &b_q}, {3, &X}, {4, &Q}},
             {groups(s.d_attn, kTile), groups(s.l_x, kTile), H}, "Alg. 4 L1: Q ← W_q X + b_q 1ᵀ" + hn);
    dispatch(linear, LinearParams{d_attn, d_z, l_z}, {{1, &W_k}, {2, &b_k}, {3, &context}, {4, &K}},
             {groups(s.d_attn, kTile), groups(s.l_z, kTile), H}, "Alg. 4 L2: K ← W_k Z + b_k 1ᵀ" + hn);
    dispatch(linear, LinearParams{d_mid, d_z, l_z}, {{1, &W_v}, {2, &b_v}, {3, &context}, {4, &V}},
             {groups(s.d_mid, kTile), groups(s.l_z, kTile), H}, "Alg. 4 L3: V ← W_v Z + b_v 1ᵀ" + hn);
    if (form == Form::Teaching) {
      dispatch(scores, ScoresParams{d_attn, l_z, l_x}, {{1, &K}, {2, &Q}, {3, &S}},
               {groups(s.l_z, kTile), groups(s.l_x, kTile), H}, "Alg. 4 L4: S ← Kᵀ Q" + hn);
      dispatch(mask, MaskParams{l_z, l_x, kind}, {{1, &S}, {2, &mask_bytes}, {3, &S_masked}},
               {groups(s.l_z, kTile), groups(s.l_x, kTile), H}, "Alg. 4 L5: S[t_z, t_x] ← −∞ where ¬Mask" + hn);
      dispatch(softmax, SoftmaxParams{l_z, l_x, std::sqrt(static_cast<float>(d_attn))},
               {{1, &S_masked}, {2, &A}, {7, &loop_guard}}, {l_x, H, 1},
               "Alg. 4 L6: A ← softmax(S / √d_attn), by columns" + hn);
      dispatch(apply_values, ApplyValuesParams{d_mid, l_z, l_x, H * d_mid},
               {{1, &V}, {2, &A}, {3, &Y}, {7, &loop_guard}}, {groups(s.d_mid, kTile), groups(s.l_x, kTile), H},
               "Alg. 4 L6: Ṽ = V · A, into Y" + hn);
    } else {
      dispatch(flash_program(s.d_attn, s.d_mid),
               FlashParams{l_z, l_x, kind, H * d_mid, 1.0f / std::sqrt(static_cast<float>(d_attn))},
               {{1, &Q}, {2, &K}, {3, &V}, {4, &mask_bytes}, {5, &Y}, {6, &L}, {7, &loop_guard}},
               {groups(s.l_x, kFlashBR), H, 1}, "Alg. 4 L4–L6 fused: Ṽ = V · softmax(Kᵀ Q / √d_attn), into Y" + hn);
    }
    if (W) {
      const uint32_t d_out = static_cast<uint32_t>(W->W_o.rows());
      dispatch(linear, LinearParams{d_out, H * d_mid, l_x}, {{1, &W_o}, {2, &b_o}, {3, &Y}, {4, &out}},
               {groups(static_cast<int>(d_out), kTile), groups(s.l_x, kTile), 1}, "Alg. 5 L4: Ṽ ← W_o Y + b_o 1ᵀ");
    }
    glUseProgram(0);
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);  // the read-backs see the shaders' writes
    uint32_t cut_short = 0;
    loop_guard.download(&cut_short, sizeof cut_short);
    if (cut_short)
      throw Error(dev.renderer + " cut the " + to_string(form) +
                  " form's shader loops short, so its results would be wrong: Mesa's llvmpipe ends every loop of a "
                  "shader invocation once its loops have run 65535 iterations in all (LP_MAX_TGSI_LOOP_ITERATIONS), "
                  "and ℓ_z = " +
                  std::to_string(s.l_z) + " needs more: use shorter sequences, or a GPU");
  }

  MatF read(const Buffer& b, Eigen::Index rows, Eigen::Index cols, size_t offset_elements = 0) const {
    MatF m(rows, cols);
    b.download(m.data(), sizeof(float) * m.size(), sizeof(float) * offset_elements);
    return m;
  }

  // Head h's record of the teaching form, from the buffers of the last run; Y is read once.
  void read_record(const Shapes& s, int h, const MatF& Yall, AttentionRecord<float>& r) const {
    const size_t H_at = static_cast<size_t>(h);
    r.Q = read(Q, s.d_attn, s.l_x, H_at * s.d_attn * s.l_x);
    r.K = read(K, s.d_attn, s.l_z, H_at * s.d_attn * s.l_z);
    r.V = read(V, s.d_mid, s.l_z, H_at * s.d_mid * s.l_z);
    r.S = read(S, s.l_z, s.l_x, H_at * s.l_z * s.l_x);
    r.S_masked = read(S_masked, s.l_z, s.l_x, H_at * s.l_z * s.l_x);
    r.A = read(A, s.l_z, s.l_x, H_at * s.l_z * s.l_x);
    r.Vt = Yall.middleRows(static_cast<Eigen::Index>(h) * s.d_mid, s.d_mid);
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

GpuAttentionResult GpuAttention::teaching(const MatF& X, const MatF& Z, const AttentionHeadW<const float>& W,
                                          const Mask& mask) {
  impl_->make_current();
  const std::vector<AttentionHeadW<const float>> heads{W};
  const Shapes s = check_shapes(X, Z, heads, mask);
  impl_->run(X, Z, heads, mask, s, Form::Teaching, true, nullptr);
  GpuAttentionResult r;
  impl_->read_record(s, 0, impl_->read(impl_->Y, s.d_mid, s.l_x), r.record);
  r.times = impl_->timer.finish();
  return r;
}

FusedResult GpuAttention::fused(const MatF& X, const MatF& Z, const AttentionHeadW<const float>& W, const Mask& mask,
                                bool timed) {
  impl_->make_current();
  const std::vector<AttentionHeadW<const float>> heads{W};
  const Shapes s = check_shapes(X, Z, heads, mask);
  impl_->run(X, Z, heads, mask, s, Form::Fused, timed, nullptr);
  FusedResult r;
  r.Vt = impl_->read(impl_->Y, s.d_mid, s.l_x);
  r.L = impl_->read(impl_->L, 1, s.l_x);
  r.times = impl_->timer.finish();
  return r;
}

MatF GpuAttention::mh_attention(const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
                                Form form, std::vector<DispatchTime>* times,
                                std::vector<AttentionRecord<float>>* recs, const AttentionOptions& av) {
  impl_->make_current();
  if (av.positional())
    throw Error("MHAttention on the GPU: RoPE and ALiBi are not on the GPU yet (" +
                describe_call(X.data() == Z.data(), mask, av, static_cast<int>(W.heads.size())) + ")");
  if (recs && form != Form::Teaching)
    throw Error(
        "MHAttention on the GPU: only the teaching form keeps the records of each line (the fused form "
        "never stores S)");
  const Shapes s = check_shapes(X, Z, W.heads, mask);
  if (W.W_o.cols() != static_cast<Eigen::Index>(s.H) * s.d_mid || W.b_o.size() != W.W_o.rows() || W.W_o.rows() < 1)
    throw Error("MHAttention on the GPU: W_o must be d_out×H·d_mid = d_out×" + std::to_string(s.H * s.d_mid) +
                " and b_o of size d_out, not " + dims(W.W_o.rows(), W.W_o.cols()) + " and " +
                std::to_string(W.b_o.size()));
  impl_->run(X, Z, W.heads, mask, s, form, times != nullptr, &W);
  MatF Vt = impl_->read(impl_->out, W.W_o.rows(), s.l_x);
  if (recs) {
    const MatF Y = impl_->read(impl_->Y, static_cast<Eigen::Index>(s.H) * s.d_mid, s.l_x);
    recs->assign(s.H, AttentionRecord<float>{});
    for (int h = 0; h < s.H; ++h) impl_->read_record(s, h, Y, (*recs)[h]);
  }
  if (times) *times = impl_->timer.finish();
  return Vt;
}

MatF GpuAttention::mh_attention_cached(const MatF&, const MHAttentionW<const float>&, std::vector<MatF>&,
                                       std::vector<MatF>&, bool, const Mask&, Form, const AttentionOptions&,
                                       std::vector<DispatchTime>*) {
  throw Error("MHAttention on the GPU: the KV-cached step is not on the GPU yet");
}

}  // namespace sf::gpu
