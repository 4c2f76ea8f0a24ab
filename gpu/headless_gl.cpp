// Headless OpenGL through EGL (see headless_gl.hpp for the order in which platforms are tried).
#include "gpu/headless_gl.hpp"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/model/error.hpp"

namespace sf::gpu {

namespace {

std::string egl_error_name(EGLint e) {
  switch (e) {
    case EGL_SUCCESS:
      return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED:
      return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS:
      return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC:
      return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE:
      return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG:
      return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT:
      return "EGL_BAD_CONTEXT";
    case EGL_BAD_CURRENT_SURFACE:
      return "EGL_BAD_CURRENT_SURFACE";
    case EGL_BAD_DISPLAY:
      return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH:
      return "EGL_BAD_MATCH";
    case EGL_BAD_NATIVE_PIXMAP:
      return "EGL_BAD_NATIVE_PIXMAP";
    case EGL_BAD_NATIVE_WINDOW:
      return "EGL_BAD_NATIVE_WINDOW";
    case EGL_BAD_PARAMETER:
      return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE:
      return "EGL_BAD_SURFACE";
    case EGL_CONTEXT_LOST:
      return "EGL_CONTEXT_LOST";
    default:
      return "EGL error " + std::to_string(e);
  }
}

bool has_extension(const char* list, const char* name) {
  if (!list) return false;
  const size_t n = std::strlen(name);
  for (const char* p = list; (p = std::strstr(p, name)) != nullptr; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
  return false;
}

struct Candidate {
  EGLenum platform;
  void* native;      // the EGLDeviceEXT for the device platform, EGL_DEFAULT_DISPLAY otherwise
  std::string name;  // for messages
};

// The candidates in the order of headless_gl.hpp; `notes` collects why some are absent.
std::vector<Candidate> candidates(const std::string& only, std::vector<std::string>& notes) {
  const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (!client) {
    notes.push_back("this libEGL has no client extensions (no EGL_EXT_platform_base)");
    return {};
  }
  std::vector<Candidate> hardware, software;
  if (only != "surfaceless") {
    auto query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto query_string = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(eglGetProcAddress("eglQueryDeviceStringEXT"));
    EGLint n = 0;
    if (!has_extension(client, "EGL_EXT_platform_device") || !query_devices || !query_string) {
      notes.push_back("EGL devices: this libEGL lacks EGL_EXT_platform_device / EGL_EXT_device_enumeration");
    } else if (query_devices(0, nullptr, &n) && n > 0) {
      std::vector<EGLDeviceEXT> devices(static_cast<size_t>(n));
      query_devices(n, devices.data(), &n);
      for (EGLint i = 0; i < n; ++i) {
        const char* ext = query_string(devices[i], EGL_EXTENSIONS);
        std::string name = "EGL device " + std::to_string(i);
        if (has_extension(ext, "EGL_EXT_device_drm")) {
          const char* file = query_string(devices[i], EGL_DRM_DEVICE_FILE_EXT);
          if (file) name += " (" + std::string(file) + ")";
        }
        const bool is_software = has_extension(ext, "EGL_MESA_device_software");
        if (is_software) name += " (software)";
        (is_software ? software : hardware).push_back({EGL_PLATFORM_DEVICE_EXT, devices[i], name});
      }
    } else {
      notes.push_back("EGL devices: none found");
    }
  }
  std::vector<Candidate> out = hardware;
  if (only != "device") {
    if (has_extension(client, "EGL_MESA_platform_surfaceless"))
      out.push_back({EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, "EGL surfaceless (Mesa)"});
    else
      notes.push_back("EGL surfaceless: this libEGL lacks EGL_MESA_platform_surfaceless (install libegl-mesa0)");
  }
  out.insert(out.end(), software.begin(), software.end());
  return out;
}

struct Opened {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  std::string platform;
};

// Opens `c` and makes an OpenGL 4.3 core context current on it; "" or what failed.
std::string try_candidate(const Candidate& c, Opened& out) {
  auto get_platform_display =
      reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
  if (!get_platform_display) return "eglGetPlatformDisplayEXT is missing";
  EGLDisplay dpy = get_platform_display(c.platform, c.native, nullptr);
  if (dpy == EGL_NO_DISPLAY) return "no display (" + egl_error_name(eglGetError()) + ")";
  EGLint major = 0, minor = 0;
  if (!eglInitialize(dpy, &major, &minor)) return "eglInitialize failed (" + egl_error_name(eglGetError()) + ")";
  if (!eglBindAPI(EGL_OPENGL_API)) return "no desktop OpenGL through this EGL (eglBindAPI(EGL_OPENGL_API) failed)";
  const char* ext = eglQueryString(dpy, EGL_EXTENSIONS);
  EGLConfig config = EGL_NO_CONFIG_KHR;
  if (!has_extension(ext, "EGL_KHR_no_config_context")) {
    const EGLint want[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_NONE};
    EGLint n = 0;
    if (!eglChooseConfig(dpy, want, &config, 1, &n) || n < 1) return "no EGL config renders desktop OpenGL";
  }
  const EGLint attribs[] = {
      EGL_CONTEXT_MAJOR_VERSION,           4,       EGL_CONTEXT_MINOR_VERSION, 3, EGL_CONTEXT_OPENGL_PROFILE_MASK,
      EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
  EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, attribs);
  if (ctx == EGL_NO_CONTEXT)
    return "no OpenGL 4.3 core context (eglCreateContext: " + egl_error_name(eglGetError()) +
           "; the driver may offer an older OpenGL only)";
  if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
    const std::string e = egl_error_name(eglGetError());
    eglDestroyContext(dpy, ctx);
    return "cannot make the context current without a surface (eglMakeCurrent: " + e +
           "; EGL_KHR_surfaceless_context is needed)";
  }
  // The display is left initialised: EGL hands the same EGLDisplay to every HeadlessGl on this
  // platform, and eglTerminate would pull it from under the others.
  out.display = dpy;
  out.context = ctx;
  out.platform = c.name;
  return "";
}

}  // namespace

struct HeadlessGl::Impl : Opened {};

std::unique_ptr<HeadlessGl> HeadlessGl::create(std::string& why_not) {
  const char* env = std::getenv("STEPFORMER_EGL_PLATFORM");
  const std::string only = env ? env : "";
  if (!only.empty() && only != "device" && only != "surfaceless") {
    why_not = "STEPFORMER_EGL_PLATFORM is \"" + only + "\": set it to device, surfaceless, or unset it";
    return nullptr;
  }
  std::vector<std::string> notes;
  for (const Candidate& c : candidates(only, notes)) {
    auto impl = std::make_unique<Impl>();
    const std::string failure = try_candidate(c, *impl);
    if (failure.empty()) return std::unique_ptr<HeadlessGl>(new HeadlessGl(std::move(impl)));
    notes.push_back(c.name + ": " + failure);
  }
  why_not = "no headless OpenGL 4.3 context through EGL";
  if (!only.empty()) why_not += " (STEPFORMER_EGL_PLATFORM=" + only + ")";
  for (size_t i = 0; i < notes.size(); ++i) why_not += (i ? "; " : ": ") + notes[i];
  why_not +=
      ". For software rendering install Mesa's EGL and drivers (apt-get install libegl1 libegl-mesa0 "
      "libgl1-mesa-dri); on a GPU server, the vendor's EGL driver (NVIDIA: libnvidia-egl / the driver's GL libraries)";
  return nullptr;
}

HeadlessGl::HeadlessGl(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HeadlessGl::~HeadlessGl() {
  if (eglGetCurrentContext() == impl_->context)
    eglMakeCurrent(impl_->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglDestroyContext(impl_->display, impl_->context);
}

void HeadlessGl::make_current() const {
  if (eglGetCurrentContext() == impl_->context) return;
  if (!eglMakeCurrent(impl_->display, EGL_NO_SURFACE, EGL_NO_SURFACE, impl_->context))
    throw Error("cannot make the headless OpenGL context (" + impl_->platform +
                ") current on this thread: " + egl_error_name(eglGetError()));
}

const std::string& HeadlessGl::platform() const { return impl_->platform; }

GlLoader HeadlessGl::loader() { return eglGetProcAddress; }

}  // namespace sf::gpu
