// The small GL runtime under GpuAttention: see gl_util.hpp.
#include "gpu/gl_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/about/data_dirs.hpp"
#include "core/model/error.hpp"

namespace sf::gpu {

namespace {

std::string gl_string(GLenum name) {
  const GLubyte* s = glGetString(name);
  return s ? reinterpret_cast<const char*>(s) : "";
}

std::string mib(long long bytes) {
  std::ostringstream os;
  os.precision(bytes >= (10LL << 20) ? 0 : 2);
  os << std::fixed << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return os.str();
}

void clear_gl_errors() {
  for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; ++i) {
  }
}

}  // namespace

bool DeviceInfo::software() const {
  for (const char* name : {"llvmpipe", "softpipe", "swrast", "SwiftShader"})
    if (renderer.find(name) != std::string::npos) return true;
  return false;
}

std::string DeviceInfo::summary() const { return renderer + ", OpenGL " + version + ", " + context; }

DeviceInfo query_device(const std::string& context) {
  DeviceInfo d;
  d.renderer = gl_string(GL_RENDERER);
  d.vendor = gl_string(GL_VENDOR);
  d.version = gl_string(GL_VERSION);
  d.context = context;
  glGetIntegerv(GL_MAJOR_VERSION, &d.gl_major);
  glGetIntegerv(GL_MINOR_VERSION, &d.gl_minor);
  GLint64 ssbo = 0;
  glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &ssbo);
  d.max_ssbo_bytes = ssbo;
  glGetIntegerv(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, &d.max_shared_bytes);
  for (GLuint i = 0; i < 3; ++i) glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, i, &d.max_groups[i]);
  glGetQueryiv(GL_TIMESTAMP, GL_QUERY_COUNTER_BITS, &d.timestamp_bits);
  return d;
}

void check_buffer_size(const std::string& what, size_t bytes, const DeviceInfo& dev) {
  if (static_cast<long long>(bytes) > dev.max_ssbo_bytes)
    throw Error(what + " needs " + mib(static_cast<long long>(bytes)) +
                " in one shader storage buffer, more than this GL's GL_MAX_SHADER_STORAGE_BLOCK_SIZE of " +
                mib(dev.max_ssbo_bytes) + " (" + dev.renderer +
                "): use the fused form (it never stores the ℓ_z×ℓ_x matrix), fewer heads or shorter sequences");
  if (bytes / sizeof(float) > std::numeric_limits<uint32_t>::max())
    throw Error(what + " holds more than 2³² floats, past the shaders' 32-bit indices: use shorter sequences");
}

Buffer::Buffer() { glGenBuffers(1, &id_); }

Buffer::~Buffer() { glDeleteBuffers(1, &id_); }

void Buffer::reserve(size_t bytes, const std::string& what, const DeviceInfo& dev) {
  check_buffer_size(what, bytes, dev);
  bytes = std::max<size_t>(bytes, 16);  // a bound buffer must not be empty
  if (bytes <= capacity_) return;
  clear_gl_errors();
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_);
  glBufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(bytes), nullptr, GL_DYNAMIC_DRAW);
  const GLenum err = glGetError();
  if (err != GL_NO_ERROR) {
    capacity_ = 0;
    throw Error("the GPU could not allocate " + mib(static_cast<long long>(bytes)) + " for " + what + " (" +
                (err == GL_OUT_OF_MEMORY ? std::string("GL_OUT_OF_MEMORY") : "GL error " + std::to_string(err)) +
                "): use the fused form, fewer heads or shorter sequences");
  }
  capacity_ = bytes;
}

void Buffer::upload(const void* data, size_t bytes, size_t offset) {
  if (bytes == 0) return;
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_);
  glBufferSubData(GL_SHADER_STORAGE_BUFFER, static_cast<GLintptr>(offset), static_cast<GLsizeiptr>(bytes), data);
}

void Buffer::download(void* data, size_t bytes, size_t offset) const {
  if (bytes == 0) return;
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_);
  glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, static_cast<GLintptr>(offset), static_cast<GLsizeiptr>(bytes), data);
}

void Buffer::set(const void* data, size_t bytes) {
  glBindBuffer(GL_UNIFORM_BUFFER, id_);
  glBufferData(GL_UNIFORM_BUFFER, static_cast<GLsizeiptr>(bytes), data, GL_STREAM_DRAW);
  capacity_ = bytes;
}

std::string shader_dir() {
  const char* env = std::getenv("STEPFORMER_SHADERS");
  return env && *env ? env : data_path("shaders");
}

Program::Program(const std::string& dir, const std::string& name,
                 const std::vector<std::pair<std::string, int>>& defines) {
  const std::string path = dir + "/" + name + ".comp";
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot read the compute shader " + path +
                ": set STEPFORMER_SHADERS to the folder that holds the project's shaders/");
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  if (source.rfind("#version", 0) != 0) throw Error("compute shader " + path + " must begin with a #version line");
  const size_t eol = source.find('\n');
  std::string full = source.substr(0, eol) + "\n";
  for (const auto& [key, value] : defines) full += "#define " + key + " " + std::to_string(value) + "\n";
  full += "#line 2\n";
  if (eol != std::string::npos) full += source.substr(eol + 1);

  const GLuint shader = glCreateShader(GL_COMPUTE_SHADER);
  const char* src = full.c_str();
  glShaderSource(shader, 1, &src, nullptr);
  glCompileShader(shader);
  GLint ok = 0, length = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &length);
  std::string log(static_cast<size_t>(std::max(length, 1)), '\0');
  glGetShaderInfoLog(shader, length, nullptr, log.data());
  log.resize(std::strlen(log.c_str()));
  if (!ok) {
    glDeleteShader(shader);
    throw Error("compute shader " + path + " does not compile (" + gl_string(GL_RENDERER) + "):\n" + log);
  }
  id_ = glCreateProgram();
  glAttachShader(id_, shader);
  glLinkProgram(id_);
  glDeleteShader(shader);
  glGetProgramiv(id_, GL_LINK_STATUS, &ok);
  if (!ok) {
    glGetProgramiv(id_, GL_INFO_LOG_LENGTH, &length);
    log.assign(static_cast<size_t>(std::max(length, 1)), '\0');
    glGetProgramInfoLog(id_, length, nullptr, log.data());
    log.resize(std::strlen(log.c_str()));
    glDeleteProgram(id_);
    throw Error("compute shader " + path + " does not link (" + gl_string(GL_RENDERER) + "):\n" + log);
  }
}

Program::~Program() { glDeleteProgram(id_); }

DispatchTimer::~DispatchTimer() {
  if (!queries_.empty()) glDeleteQueries(static_cast<GLsizei>(queries_.size()), queries_.data());
}

void DispatchTimer::start(bool on, const DeviceInfo& dev) {
  on_ = on;
  gpu_clock_ = dev.timestamp_bits > 0;
  times_.clear();
}

void DispatchTimer::before(DispatchTime what) {
  if (!on_) return;
  const size_t q = 2 * times_.size();
  if (gpu_clock_ && queries_.size() < q + 2) {
    queries_.resize(q + 2);
    glGenQueries(2, &queries_[q]);
  }
  times_.push_back(std::move(what));
  glFinish();
  t0_ = std::chrono::steady_clock::now();
  if (gpu_clock_) glQueryCounter(queries_[q], GL_TIMESTAMP);
}

void DispatchTimer::after() {
  if (!on_) return;
  if (gpu_clock_) glQueryCounter(queries_[2 * times_.size() - 1], GL_TIMESTAMP);
  glFinish();
  times_.back().cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
}

std::vector<DispatchTime> DispatchTimer::finish() {
  for (size_t i = 0; i < times_.size(); ++i) {
    if (!gpu_clock_) {
      times_[i].gpu_ms = std::nan("");
      continue;
    }
    GLuint64 begin = 0, end = 0;
    glGetQueryObjectui64v(queries_[2 * i], GL_QUERY_RESULT, &begin);
    glGetQueryObjectui64v(queries_[2 * i + 1], GL_QUERY_RESULT, &end);
    // Under GLX, Mesa's llvmpipe stamps GL_TIMESTAMP when the query is issued and runs the compute
    // work later, at glFinish: every dispatch read 20–70 ns ("0.000 ms") against 0.05–7 ms on the
    // CPU clock. Launching a dispatch alone takes microseconds on any GPU, so a pair under
    // kMinDispatchNs did not time the dispatch: it is no time (NaN), not a fast dispatch.
    const double ns = end > begin ? static_cast<double>(end - begin) : 0.0;
    times_[i].gpu_ms = ns >= kMinDispatchNs ? ns * 1e-6 : std::nan("");
  }
  on_ = false;
  return std::move(times_);
}

}  // namespace sf::gpu
